#!/usr/bin/env bash
# Renders `chunk-worker report` of a fixture under two profiles side by side,
# takes a headless Chromium screenshot of it with the network cut off (the
# page must be self-contained) to docs/report.png, and checks in the browser
# what the Rust tests (no browser) cannot: clicking each chunk puts its
# chunk_id, chunk_text and embed_text together exactly as `chunk` prints
# them.
#
# Usage: scripts/report-screenshot.sh [FIXTURE.md [PROFILE_A [PROFILE_B]]]
#   default: shared/tests/fixtures/03-big-table.md, spec-v1 retrieval-minilm-v1
#   (the table split with its header repeated beside a recursive split whose
#   overlap repeats rows). A profile with several granularities is drawn
#   one lane per granularity; clicking a chunk of a finer lane must name
#   and outline its parent. PNG=docs/other.png picks the screenshot's name.
# Needs Debian's `chromium` (apt-get install -y chromium) and python3. Uses
# target/release/chunk-worker (built if missing; CHUNK_WORKER overrides).
# Writes target/report-demo.html and docs/report.png.
set -euo pipefail

cd "$(dirname "$0")/.."
FIXTURE=${1:-shared/tests/fixtures/03-big-table.md}
PROFILE_A=${2:-spec-v1}
PROFILE_B=${3-retrieval-minilm-v1}
PNG=${PNG:-docs/report.png}
BIN=${CHUNK_WORKER:-target/release/chunk-worker}
[ -x "$BIN" ] || cargo build --release -p worker
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "chromium not found: apt-get install -y chromium" >&2; exit 2; }

PAGE=target/report-demo.html
PROFILES=(--profile "$PROFILE_A")
[ -n "$PROFILE_B" ] && PROFILES+=(--profile "$PROFILE_B")
"$BIN" report "$FIXTURE" "${PROFILES[@]}" -o "$PAGE"
URL="file://$PWD/$PAGE"
# No network at all: a page that fetched anything would render broken.
OFFLINE=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>')

# Tall enough to show both columns' histograms, a table piece with its
# repeated header and an overlap; small enough to stay under 300 KB.
"$CHROMIUM" "${OFFLINE[@]}" --window-size=1400,1180 --screenshot="$PWD/$PNG" "$URL" 2>/dev/null

# Click every chunk from an injected script and keep what the panel shows.
CHECK=target/report-demo.check.html
python3 - "$PAGE" "$CHECK" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>(function () {
  var rows = [];
  document.querySelectorAll(".doc").forEach(function (doc) {
    doc.querySelectorAll(".c").forEach(function (c) {
      c.click();
      var fields = {};
      var dts = document.getElementById("p-fields").querySelectorAll("dt");
      dts.forEach(function (dt) { fields[dt.textContent] = dt.nextSibling.textContent; });
      rows.push({profile: doc.getAttribute("data-profile"), ordinal: +c.getAttribute("data-ordinal"),
        id: document.getElementById("p-fields").querySelector("dd").textContent,
        parent: fields["parent"] || null, outlined: document.querySelectorAll(".c.par").length,
        chunk_text: document.getElementById("p-text").textContent,
        embed_text: document.getElementById("p-embed").textContent,
        panel: !document.getElementById("panel").hidden});
    });
  });
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(rows);
  document.body.appendChild(out);
})();</script></body>"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", probe, 1))
PY
"$CHROMIUM" "${OFFLINE[@]}" --dump-dom "file://$PWD/$CHECK" 2>/dev/null >target/report-demo.dom.html
"$BIN" chunk --profile "$PROFILE_A" "$FIXTURE" >target/report-demo.a.jsonl
[ -n "$PROFILE_B" ] && "$BIN" chunk --profile "$PROFILE_B" "$FIXTURE" >target/report-demo.b.jsonl

PNG="$PNG" python3 - "$PROFILE_A" "$PROFILE_B" <<'PY'
import html, json, os, re, sys
def fail(msg):
    sys.exit("FAIL: " + msg)
dom = open("target/report-demo.dom.html", encoding="utf-8").read()
m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
if not m:
    fail("the page's script did not run (no probe output)")
rows = json.loads(html.unescape(m.group(1)))
expected = {}
for profile, path in zip(sys.argv[1:3], ["target/report-demo.a.jsonl", "target/report-demo.b.jsonl"]):
    if profile:
        expected[profile] = [json.loads(l) for l in open(path, encoding="utf-8")]
# A lane is "profile" or "profile · granularity": its chunks, by ordinal.
lanes = {}
for profile, recs in expected.items():
    grans = sorted({r["granularity"] for r in recs})
    for g in grans:
        lane = profile if len(grans) == 1 else f"{profile} \u00b7 {g}"
        lanes[lane] = [r for r in recs if r["granularity"] == g]
seen = {l: 0 for l in lanes}
for r in rows:
    if r["profile"] not in lanes:
        fail(f"lane {r['profile']!r} is not one of {sorted(lanes)}")
    rec = lanes[r["profile"]][r["ordinal"]]
    where = f'{r["profile"]} #{r["ordinal"]}'
    parent = rec.get("parent_chunk_id")
    if parent and not (r["parent"] and parent in r["parent"] and r["outlined"] >= 1):
        fail(f"{where}: the panel does not name and outline parent {parent}: {r['parent']!r}")
    if not r["panel"]:
        fail(f"{where}: clicking did not open the details panel")
    if r["id"] != rec["chunk_id"]:
        fail(f"{where}: panel shows id {r['id']}, chunk printed {rec['chunk_id']}")
    if r["chunk_text"] != rec["chunk_text"]:
        fail(f"{where}: chunk_text differs:\n{r['chunk_text']!r}\n{rec['chunk_text']!r}")
    if r["embed_text"] != rec["embed_text"]:
        fail(f"{where}: embed_text differs:\n{r['embed_text']!r}\n{rec['embed_text']!r}")
    seen[r["profile"]] += 1
for p, recs in lanes.items():
    if seen[p] != len(recs):
        fail(f"{p}: {seen[p]} chunks clicked, {len(recs)} printed")
png = os.environ["PNG"]
size = os.path.getsize(png)
if not 20000 < size < 300 * 1024:
    fail(f"{png} is {size} bytes")
page = os.path.getsize("target/report-demo.html")
print(f"ok: {len(rows)} chunks in {len(lanes)} lanes clicked offline, ids, chunk_text, "
      f"embed_text and parents exact; page {page} bytes; {png} {size} bytes")
PY
rm -f target/report-demo.check.html target/report-demo.dom.html target/report-demo.a.jsonl target/report-demo.b.jsonl
