(function () {
  "use strict";
  var panel = document.getElementById("p-title") && document.getElementById("panel");
  if (!panel) return;
  var selected = [];

  function attr(el, name) { return el.getAttribute("data-" + name) || ""; }

  // The n UTF-16 code units of document text right before a chunk's span.
  function textBefore(el, n) {
    var s = "";
    for (var p = el.previousSibling; p && s.length < n; p = p.previousSibling) {
      s = p.textContent + s;
    }
    return s.slice(Math.max(0, s.length - n));
  }

  function badgeText(el, cls) {
    var b = el.querySelector("i." + cls);
    return b ? b.getAttribute("data-t") || "" : "";
  }

  // chunk_text = prefix + own span + suffix.
  function chunkText(el) {
    var ov = +attr(el, "ov");
    var prefix = ov ? textBefore(el, ov) : badgeText(el, "pre");
    return prefix + el.textContent + badgeText(el, "suf");
  }

  // embed_text: stored whole, or as what comes before chunk_text.
  function embedText(el) {
    return el.hasAttribute("data-ef") ? attr(el, "e") : attr(el, "e") + chunkText(el);
  }

  function field(dl, name, value) {
    var dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = name;
    dd.textContent = value;
    dl.appendChild(dt);
    dl.appendChild(dd);
  }

  function clear() {
    selected.forEach(function (el) { el.classList.remove("sel", "rel", "par"); });
    selected = [];
  }

  function show(el) {
    clear();
    el.classList.add("sel");
    selected.push(el);
    var doc = el.closest(".doc"), section = el.closest("section");
    var bs = +attr(el, "bs"), be = +attr(el, "be");
    // The chunks of the other profiles that share bytes with this one.
    if (section) {
      section.querySelectorAll(".doc").forEach(function (other) {
        if (other === doc) return;
        other.querySelectorAll(".c").forEach(function (c) {
          if (+attr(c, "bs") < be && +attr(c, "be") > bs) {
            c.classList.add("rel");
            selected.push(c);
          }
        });
      });
    }
    var count = doc ? doc.querySelectorAll(".c").length : 0;
    document.getElementById("p-title").textContent =
      (doc ? attr(doc, "profile") + ": " : "") + "chunk " + attr(el, "ordinal") + " of " + count;
    var dl = document.getElementById("p-fields");
    dl.textContent = "";
    field(dl, "chunk_id", attr(el, "id"));
    field(dl, "granularity", attr(el, "g"));
    // The coarser chunk that contains this one (another lane of the same
    // profile): named here and outlined there.
    var parent = attr(el, "parent");
    if (parent && section) {
      var p = section.querySelector('.c[data-id="' + parent + '"]');
      if (p) {
        p.classList.add("par");
        selected.push(p);
        var lane = p.closest(".doc");
        field(dl, "parent", (lane ? attr(lane, "profile") + " " : "") + "#" + attr(p, "ordinal") + " " + parent);
      } else {
        field(dl, "parent", parent);
      }
    }
    field(dl, "content_hash", attr(el, "hash"));
    field(dl, "chunk_type", attr(el, "type"));
    field(dl, "chunk_path", attr(el, "path"));
    field(dl, "token_count", attr(el, "tokens") +
      (el.hasAttribute("data-etok") ? "  (embed_token_count " + attr(el, "etok") + ")" : ""));
    field(dl, "own span", "bytes " + bs + ".." + be + ", chars " + attr(el, "cs") + ".." + attr(el, "ce"));
    var pre = el.querySelector("i.pre"), suf = el.querySelector("i.suf"), ov = +attr(el, "ov");
    field(dl, "prefix", ov ? "overlap, " + ov + " UTF-16 units before the span"
      : pre ? attr(pre, "l") : "none");
    if (suf) field(dl, "suffix", attr(suf, "l"));
    document.getElementById("p-embed").textContent = embedText(el);
    document.getElementById("p-text").textContent = chunkText(el);
    panel.hidden = false;
  }

  document.addEventListener("click", function (ev) {
    var el = ev.target.closest && ev.target.closest(".c");
    if (el) show(el);
  });
  // The chunk id on hover, set lazily, before why the chunk ends (the
  // title the page was written with).
  document.addEventListener("mouseover", function (ev) {
    var el = ev.target.closest && ev.target.closest(".c");
    if (el && !el.hasAttribute("data-tt")) {
      el.setAttribute("data-tt", "1");
      el.title = attr(el, "g") + " #" + attr(el, "ordinal") + " " + attr(el, "id") +
        (attr(el, "parent") ? "\nparent " + attr(el, "parent") : "") + " (click for details)" +
        (el.title ? "\n" + el.title : "");
    }
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { panel.hidden = true; clear(); }
  });
  document.getElementById("p-close").addEventListener("click", function () {
    panel.hidden = true;
    clear();
  });
})();
