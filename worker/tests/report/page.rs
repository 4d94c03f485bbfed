//! A small HTML tokenizer: enough for the page, which escapes all text; the
//! page parsed back into its columns, and checked to load nothing from
//! elsewhere.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Open {
        name: String,
        attrs: BTreeMap<String, String>,
    },
    Close(String),
    Text(String),
}

impl Tok {
    pub(crate) fn attr(&self, key: &str) -> Option<&str> {
        match self {
            Tok::Open { attrs, .. } => attrs.get(key).map(String::as_str),
            _ => None,
        }
    }
    pub(crate) fn is_open(&self, tag: &str) -> bool {
        matches!(self, Tok::Open { name, .. } if name == tag)
    }
    pub(crate) fn has_class(&self, class: &str) -> bool {
        self.attr("class")
            .is_some_and(|c| c.split_whitespace().any(|c| c == class))
    }
}

/// Undoes the page's escaping; any other entity is a test failure.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (entity, ch) = [
            ("&amp;", '&'),
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&quot;", '"'),
        ]
        .into_iter()
        .find(|(e, _)| rest.starts_with(e))
        .unwrap_or_else(|| {
            panic!(
                "unescaped or unknown entity at {:?}",
                &rest[..rest.len().min(20)]
            )
        });
        out.push(ch);
        rest = &rest[entity.len()..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn tokenize(html: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            toks.push(Tok::Text(unescape(rest)));
            break;
        };
        if lt > 0 {
            toks.push(Tok::Text(unescape(&rest[..lt])));
        }
        rest = &rest[lt..];
        if rest.starts_with("<!") {
            rest = &rest[rest.find('>').unwrap() + 1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("</") {
            let gt = after.find('>').unwrap();
            toks.push(Tok::Close(after[..gt].trim().to_ascii_lowercase()));
            rest = &after[gt + 1..];
            continue;
        }
        // An opening tag: name, then attributes (quoted with ", as the page writes them).
        let mut i = 1;
        let b = rest.as_bytes();
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' && b[i] != b'/' {
            i += 1;
        }
        let name = rest[1..i].to_ascii_lowercase();
        let mut attrs = BTreeMap::new();
        loop {
            while b[i].is_ascii_whitespace() || b[i] == b'/' {
                i += 1;
            }
            if b[i] == b'>' {
                i += 1;
                break;
            }
            let start = i;
            while !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'>' {
                i += 1;
            }
            let key = rest[start..i].to_ascii_lowercase();
            let value = if b[i] == b'=' {
                i += 1;
                if b[i] == b'"' || b[i] == b'\'' {
                    let q = b[i];
                    let end = i + 1 + rest[i + 1..].find(q as char).unwrap();
                    let v = unescape(&rest[i + 1..end]);
                    i = end + 1;
                    v
                } else {
                    let start = i;
                    while !b[i].is_ascii_whitespace() && b[i] != b'>' {
                        i += 1;
                    }
                    unescape(&rest[start..i])
                }
            } else {
                String::new()
            };
            assert!(
                attrs.insert(key.clone(), value).is_none(),
                "attribute {key} twice"
            );
        }
        rest = &rest[i..];
        let raw = name == "script" || name == "style";
        toks.push(Tok::Open {
            name: name.clone(),
            attrs,
        });
        if raw {
            // Raw text: up to the closing tag, not unescaped.
            let end = rest.find(&format!("</{name}>")).unwrap();
            toks.push(Tok::Text(rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    toks
}

/// A chunk element as the page has it.
#[derive(Debug)]
pub(crate) struct Shown {
    pub(crate) open: Tok,
    /// Its document text (nested overlap marks included).
    pub(crate) text: String,
    /// Synthetic prefix and suffix badges inside it.
    pub(crate) badges: Vec<Tok>,
}

/// One column: the chunk elements and gaps of the `.doc` of a profile.
#[derive(Debug, Default)]
pub(crate) struct Column {
    /// All document text of the column, in order.
    pub(crate) text: String,
    pub(crate) chunks: Vec<Shown>,
    pub(crate) gaps: usize,
    /// Overlap marks: (data-of, text), in order.
    pub(crate) overlaps: Vec<(u32, String)>,
}

/// The columns of the page, per profile in page order (one per file).
fn columns(toks: &[Tok]) -> Vec<(String, Column)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !(toks[i].is_open("div") && toks[i].has_class("doc")) {
            i += 1;
            continue;
        }
        let profile = toks[i].attr("data-profile").unwrap().to_owned();
        let mut col = Column::default();
        i += 1;
        let mut stack: Vec<&Tok> = Vec::new();
        let mut overlap_of: Option<u32> = None;
        loop {
            let tok = &toks[i];
            i += 1;
            match tok {
                Tok::Close(name) if name == "div" && stack.is_empty() => break,
                Tok::Open { name, .. } => {
                    assert!(
                        ["span", "u", "i"].contains(&name.as_str()),
                        "unexpected <{name}> in a document"
                    );
                    if stack.is_empty() {
                        if tok.has_class("c") {
                            col.chunks.push(Shown {
                                open: tok.clone(),
                                text: String::new(),
                                badges: Vec::new(),
                            });
                        } else {
                            assert!(tok.has_class("g"), "top-level {tok:?}");
                            col.gaps += 1;
                        }
                    } else if name == "u" {
                        assert!(tok.has_class("ov"));
                        let of = tok.attr("data-of").unwrap().parse().unwrap();
                        overlap_of = Some(of);
                        col.overlaps.push((of, String::new()));
                    } else if name == "i" {
                        col.chunks.last_mut().unwrap().badges.push(tok.clone());
                    }
                    stack.push(tok);
                }
                Tok::Close(name) => {
                    let open = stack.pop().unwrap();
                    assert!(open.is_open(name), "</{name}> closes {open:?}");
                    if name == "u" {
                        overlap_of = None;
                    }
                }
                Tok::Text(t) => {
                    assert!(!stack.is_empty(), "document text outside a span: {t:?}");
                    assert!(
                        !stack.last().unwrap().is_open("i"),
                        "a badge holds text: {t:?}"
                    );
                    col.text.push_str(t);
                    if stack[0].has_class("c") {
                        col.chunks.last_mut().unwrap().text.push_str(t);
                    }
                    if overlap_of.is_some() {
                        col.overlaps.last_mut().unwrap().1.push_str(t);
                    }
                }
            }
        }
        found.push((profile, col));
    }
    found
}

/// Nothing on the page may come from elsewhere.
fn check_self_contained(toks: &[Tok]) {
    const FETCHING: [&str; 11] = [
        "link", "img", "iframe", "object", "embed", "video", "audio", "source", "base", "form",
        "track",
    ];
    let mut inside = String::new();
    for tok in toks {
        match tok {
            Tok::Open { name, attrs } => {
                assert!(!FETCHING.contains(&name.as_str()), "<{name}> on the page");
                for (k, v) in attrs {
                    if ["src", "href", "action", "srcset", "poster", "xlink:href"]
                        .contains(&k.as_str())
                    {
                        assert!(v.starts_with('#'), "{k}={v:?} points off the page");
                    }
                }
                if name == "script" {
                    assert!(attrs.get("src").is_none());
                }
                inside.clone_from(name);
            }
            Tok::Text(t) if inside == "style" || inside == "script" => {
                let lower = t.to_ascii_lowercase();
                for bad in [
                    "http:",
                    "https:",
                    "url(",
                    "@import",
                    "fetch(",
                    "xmlhttprequest",
                    "import(",
                ] {
                    assert!(!lower.contains(bad), "{bad} in <{inside}>");
                }
            }
            _ => inside.clear(),
        }
    }
}

pub(crate) fn page_columns(page: &str) -> Vec<(String, Column)> {
    let toks = tokenize(page);
    check_self_contained(&toks);
    columns(&toks)
}
