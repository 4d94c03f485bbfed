//! End-to-end tests of `chunk-worker report`: the real binary on fixtures
//! and temporary files, the page parsed back (no browser) and checked
//! against what `chunk` and `normalize` print for the same files.
//!
//! What the page must hold, per file and profile: every chunk exactly once,
//! in order, its element's text exactly its own span; the spans and gaps
//! together exactly the normalized document; overlap and synthetic
//! prefixes marked as the records say; nothing loaded from off the page;
//! every piece of document text escaped.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{chunk_worker, fixture};

use serde_json::Value;

fn temp_dir(test: &str) -> PathBuf {
    common::temp_dir("report", test)
}

/// Runs `report` on `files` with `profiles`; the page and the run.
fn report(test: &str, files: &[PathBuf], profiles: &[&str]) -> (String, Output) {
    let out = temp_dir(&format!("{test}-out")).join("report.html");
    let mut args: Vec<String> = vec!["report".into(), "-o".into(), out.display().to_string()];
    for p in profiles {
        args.push("--profile".into());
        args.push((*p).into());
    }
    args.extend(files.iter().map(|f| f.display().to_string()));
    let run = chunk_worker(&args);
    let page = fs::read_to_string(&out).unwrap_or_default();
    (page, run)
}

/// What `chunk --profile P FILE` prints.
fn records(file: &Path, profile: &str) -> Vec<Value> {
    let out = chunk_worker(["chunk", "--profile", profile, file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn normalized(file: &Path) -> String {
    let out = chunk_worker(["normalize", file.to_str().unwrap()]);
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

// --- A small HTML tokenizer: enough for the page, which escapes all text. ---

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open {
        name: String,
        attrs: BTreeMap<String, String>,
    },
    Close(String),
    Text(String),
}

impl Tok {
    fn attr(&self, key: &str) -> Option<&str> {
        match self {
            Tok::Open { attrs, .. } => attrs.get(key).map(String::as_str),
            _ => None,
        }
    }
    fn is_open(&self, tag: &str) -> bool {
        matches!(self, Tok::Open { name, .. } if name == tag)
    }
    fn has_class(&self, class: &str) -> bool {
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

fn tokenize(html: &str) -> Vec<Tok> {
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
struct Shown {
    open: Tok,
    /// Its document text (nested overlap marks included).
    text: String,
    /// Synthetic prefix and suffix badges inside it.
    badges: Vec<Tok>,
}

/// One column: the chunk elements and gaps of the `.doc` of a profile.
#[derive(Debug, Default)]
struct Column {
    /// All document text of the column, in order.
    text: String,
    chunks: Vec<Shown>,
    gaps: usize,
    /// Overlap marks: (data-of, text), in order.
    overlaps: Vec<(u32, String)>,
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

fn num(tok: &Tok, key: &str) -> u64 {
    tok.attr(key).unwrap().parse().unwrap()
}

/// Checks one column against `chunk`'s records and `normalize`'s text.
fn check_column(file: &Path, profile: &str, col: &Column) {
    let text = normalized(file);
    let recs = records(file, profile);
    let at = format!("{} under {profile}", file.display());
    assert_eq!(col.text, text, "{at}: spans + gaps are not the document");
    assert_eq!(col.chunks.len(), recs.len(), "{at}: chunk count");
    let mut last_end = 0;
    let mut synthetic = 0;
    let mut overlapping = 0;
    for (n, (shown, rec)) in col.chunks.iter().zip(&recs).enumerate() {
        let o = &shown.open;
        assert_eq!(num(o, "data-ordinal"), n as u64, "{at}: ordinals in order");
        let (bs, be) = (num(o, "data-bs"), num(o, "data-be"));
        assert_eq!(bs, rec["byte_start"].as_u64().unwrap(), "{at} #{n}");
        assert_eq!(be, rec["byte_end"].as_u64().unwrap(), "{at} #{n}");
        assert!(bs >= last_end, "{at} #{n}: spans out of order");
        last_end = be;
        assert_eq!(
            shown.text,
            text[bs as usize..be as usize],
            "{at} #{n}: the element's text is not its own span"
        );
        assert_eq!(o.attr("data-id"), rec["chunk_id"].as_str(), "{at} #{n}");
        assert_eq!(o.attr("data-path"), rec["chunk_path"].as_str(), "{at} #{n}");
        assert_eq!(o.attr("data-type"), rec["chunk_type"].as_str(), "{at} #{n}");
        assert_eq!(num(o, "data-tokens"), rec["token_count"].as_u64().unwrap());
        assert_eq!(o.attr("data-hash"), rec["content_hash"].as_str());

        // The prefix: overlap (marked in the document) or synthetic (a badge).
        let chunk_text = rec["chunk_text"].as_str().unwrap();
        let k = rec["overlap_prefix_chars"].as_u64().unwrap() as usize;
        let prefix: String = chunk_text.chars().take(k).collect();
        let is_overlap = k > 0 && text[..bs as usize].ends_with(&prefix);
        let pre_badges: Vec<_> = shown.badges.iter().filter(|b| b.has_class("pre")).collect();
        if is_overlap {
            overlapping += 1;
            assert!(pre_badges.is_empty(), "{at} #{n}: overlap shown as a badge");
            assert_eq!(
                num(o, "data-ov") as usize,
                prefix.encode_utf16().count(),
                "{at} #{n}"
            );
            let marked: String = col
                .overlaps
                .iter()
                .filter(|(of, _)| *of as usize == n)
                .map(|(_, t)| t.as_str())
                .collect();
            assert!(
                !marked.is_empty() && prefix.ends_with(&marked),
                "{at} #{n}: overlap marks {marked:?} are not the end of the prefix {prefix:?}"
            );
        } else if k > 0 {
            synthetic += 1;
            assert_eq!(
                pre_badges.len(),
                1,
                "{at} #{n}: no badge for a synthetic prefix"
            );
            assert_eq!(pre_badges[0].attr("data-t"), Some(prefix.as_str()));
        } else {
            assert!(pre_badges.is_empty() && o.attr("data-ov").is_none());
        }
        let s = rec["closing_suffix_chars"].as_u64().unwrap() as usize;
        let suf_badges: Vec<_> = shown.badges.iter().filter(|b| b.has_class("suf")).collect();
        if s > 0 {
            let suffix: String = {
                let mut v: Vec<char> = chunk_text.chars().rev().take(s).collect();
                v.reverse();
                v.into_iter().collect()
            };
            assert_eq!(suf_badges.len(), 1, "{at} #{n}");
            assert_eq!(suf_badges[0].attr("data-t"), Some(suffix.as_str()));
        } else {
            assert!(suf_badges.is_empty(), "{at} #{n}");
        }

        // embed_text: stored whole, or as what comes before chunk_text.
        let embed = rec["embed_text"].as_str().unwrap();
        let head = o.attr("data-e").unwrap_or("");
        if o.attr("data-ef").is_some() {
            assert_eq!(head, embed, "{at} #{n}");
        } else {
            assert_eq!(format!("{head}{chunk_text}"), embed, "{at} #{n}");
        }
    }
    // Every mark belongs to a chunk whose prefix is overlap.
    for (of, _) in &col.overlaps {
        assert!(col.chunks[*of as usize].open.attr("data-ov").is_some());
    }
    eprintln!(
        "{at}: {} chunks, {} gaps, {overlapping} overlap prefixes, {synthetic} synthetic",
        recs.len(),
        col.gaps
    );
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

fn page_columns(page: &str) -> Vec<(String, Column)> {
    let toks = tokenize(page);
    check_self_contained(&toks);
    columns(&toks)
}

#[test]
fn one_profile_shows_every_chunk_once_and_the_whole_document() {
    let files = [
        fixture("01-headings.md"),
        fixture("03-big-table.md"),
        fixture("05-code-block.md"),
    ];
    let (page, run) = report("one", &files, &["spec-v1"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cols = page_columns(&page);
    assert_eq!(cols.len(), files.len());
    for ((profile, col), file) in cols.iter().zip(&files) {
        assert_eq!(profile, "spec-v1");
        check_column(file, profile, col);
    }
    // A histogram per column, stating the hard max.
    assert_eq!(page.matches("<svg class=\"hist\"").count(), files.len());
    assert!(page.contains("hard max 520"));
    // The big table is split with its header repeated: shown as badges.
    assert!(page.contains("data-l=\"repeated table header\""));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("report.html") && stderr.contains("3 files"),
        "{stderr}"
    );
}

#[test]
fn two_profiles_are_columns_side_by_side() {
    let files = [fixture("03-big-table.md"), fixture("04-no-headings.md")];
    let profiles = ["spec-v1", "recursive-v1"];
    let (page, run) = report("two", &files, &profiles);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 4);
    for (i, (profile, col)) in cols.iter().enumerate() {
        assert_eq!(profile, profiles[i % 2], "one column per profile, per file");
        check_column(&files[i / 2], profile, col);
    }
    assert_eq!(
        page.matches("<div class=\"cols\" style=\"--n:2\">").count(),
        2
    );
    assert!(page.contains("recursive:") && page.contains("structural:"));
    // recursive-v1 overlaps: marked in the document, not as badges.
    assert!(cols[1].1.overlaps.iter().any(|(_, t)| !t.is_empty()));
    assert!(page.contains("hard max 1000"));
}

#[test]
fn document_text_and_headings_are_escaped() {
    let dir = temp_dir("escape");
    let file = dir.join("nasty.md");
    let md = "# Title \"quoted\" & <b>bold</b>\n\n\
              Text with <script>alert(1)</script> and &amp; and a \"quote\".\n\n\
              ## Sub <img src=\"http://example.com/x.png\">\n\n\
              <a href=\"https://example.com\">a link</a> and `</div></span>` in code.\n";
    fs::write(&file, md).unwrap();
    let (page, run) = report("escape", std::slice::from_ref(&file), &["spec-v1"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let toks = tokenize(&page);
    // Only the page's own script element; the document's is text.
    assert_eq!(toks.iter().filter(|t| t.is_open("script")).count(), 1);
    assert!(!toks.iter().any(|t| t.is_open("img")
        || t.is_open("a") && t.attr("href").is_some_and(|h| h.starts_with("http"))));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 1);
    check_column(&file, "spec-v1", &cols[0].1);
    assert!(cols[0].1.text.contains("<script>alert(1)</script>"));
    // Attribute values (the heading path: plain text) round-trip too.
    assert!(page.contains("data-path=\"Title &quot;quoted&quot; &amp; bold"));
    assert!(cols[0]
        .1
        .chunks
        .iter()
        .any(|c| c.open.attr("data-path") == Some("Title \"quoted\" & bold")));
}

#[test]
fn a_failed_file_is_reported_and_the_others_still_shown() {
    let dir = temp_dir("failed");
    let bad = dir.join("bad.md");
    fs::write(&bad, b"# Bad\n\n\xff\xfe not UTF-8\n").unwrap();
    let missing = dir.join("missing.md");
    let good = fixture("01-headings.md");
    let (page, run) = report("failed", &[bad, missing, good.clone()], &["spec-v1"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let lines: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("CHUNKING_FAILED "))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("CHUNKING_FAILED INVALID_UTF8: "),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("CHUNKING_FAILED SOURCE_UNAVAILABLE: "),
        "{stderr}"
    );
    // The page names both failures and shows the good file.
    assert!(page.contains("CHUNKING_FAILED INVALID_UTF8"));
    assert!(page.contains("CHUNKING_FAILED SOURCE_UNAVAILABLE"));
    let cols = page_columns(&page);
    assert_eq!(cols.len(), 1);
    check_column(&good, "spec-v1", &cols[0].1);
}

#[test]
fn the_page_is_written_whole_and_replaces_an_old_one() {
    let dir = temp_dir("atomic");
    let out = dir.join("page.html");
    fs::write(&out, "old").unwrap();
    let run = chunk_worker([
        "report",
        fixture("16-headings-only.md").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--title",
        "My <title>",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page = fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert!(page.contains("<title>My &lt;title&gt;</title>"));
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["page.html"], "no temporary file left behind");
}

#[test]
fn the_page_stays_small() {
    let file = fixture("05-code-block.md");
    let doc = fs::metadata(&file).unwrap().len() as usize;
    let (page, run) = report("small", std::slice::from_ref(&file), &["spec-v1"]);
    assert!(run.status.success());
    // CSS and script are about 12 KB; the rest grows with the document.
    assert!(
        page.len() < 3 * doc + 16 * 1024,
        "{} bytes of HTML for a {doc}-byte document",
        page.len()
    );
}

#[test]
fn usage_errors_exit_2_before_writing_anything() {
    let dir = temp_dir("usage");
    let out = dir.join("r.html");
    let good = fixture("01-headings.md");
    let good = good.to_str().unwrap();
    let cases: [Vec<&str>; 4] = [
        vec![
            "report",
            good,
            "--profile",
            "no-such-profile",
            "-o",
            out.to_str().unwrap(),
        ],
        vec!["report", good],
        vec!["report", good, "-o", "/nonexistent-dir-for-report/r.html"],
        vec!["report", dir.to_str().unwrap(), "-o", out.to_str().unwrap()],
    ];
    for args in cases {
        let run = chunk_worker(&args);
        assert_eq!(
            run.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(!out.exists(), "{args:?} wrote a page");
    }
}
