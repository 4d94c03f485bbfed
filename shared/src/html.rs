//! HTML input (the LangChain-style factory specification "HTML-aware splitting of web content", issue 10):
//! a page is converted to Markdown by `htmd` (turndown.js's rules: headings,
//! lists, tables, code, links with their URLs kept), and that Markdown is the
//! document: it is normalized, stored and what every offset refers to, so
//! every strategy, link extraction and validation work on it unchanged.
//!
//! Scripts, styles, comments, navigation, forms and embedded objects are
//! dropped, and counted: [`HtmlConversion::dropped`] says what was left out,
//! so nothing disappears unreported. Any text is accepted: html5ever parses
//! broken markup the way browsers do, and text without tags converts to
//! itself (Markdown characters escaped). Invalid UTF-8 is refused with the
//! offset of the first bad byte, as for Markdown.

use crate::error::ChunkError;

/// Elements whose content is not document text: dropped and counted.
pub const DROPPED_TAGS: [&str; 15] = [
    "head", "script", "style", "noscript", "template", "nav", "iframe", "object", "embed", "svg",
    "canvas", "form", "button", "select", "textarea",
];

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlConversion {
    /// The Markdown the page becomes (before normalization).
    pub markdown: String,
    /// The page's `<title>`, if it has one (a title for breadcrumbs when the
    /// caller gave none).
    pub title: Option<String>,
    /// What was left out: `(element, count)`, in [`DROPPED_TAGS`] order,
    /// then `comment`; only those present.
    pub dropped: Vec<(&'static str, usize)>,
}

impl HtmlConversion {
    /// `3 script, 1 nav` (empty when nothing was dropped).
    pub fn dropped_summary(&self) -> String {
        self.dropped
            .iter()
            .map(|(t, n)| format!("{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether a file name or URI names an HTML page (`.html`, `.htm`).
pub fn is_html_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".html") || lower.ends_with(".htm")
}

/// Converts an HTML page to Markdown.
pub fn to_markdown(html: &[u8]) -> Result<HtmlConversion, ChunkError> {
    let text = std::str::from_utf8(html).map_err(|e| ChunkError::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    let dropped = count_dropped(text);
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(DROPPED_TAGS.to_vec())
        .add_handler(vec!["pre"], pre_block)
        .build();
    let title = title_of(text, &converter);
    let markdown = converter
        .convert(text)
        .map_err(|e| ChunkError::Html(e.to_string()))?;
    Ok(HtmlConversion {
        markdown,
        title,
        dropped,
    })
}

/// `<pre>` (with or without `<code>`, nested in any container, its text
/// coloured by `<span>`s or not) as a fenced code block holding its text
/// exactly as a browser shows it: every text node, `<br>` as a line break,
/// no Markdown escaping. The language comes from a `language-*` or `lang-*`
/// class of the `<pre>` or its `<code>`. The fence is longer than any run
/// of backticks in the text.
fn pre_block(
    _: &dyn htmd::element_handler::Handlers,
    element: htmd::Element<'_>,
) -> Option<htmd::element_handler::HandlerResult> {
    let mut text = String::new();
    text_of(element.node, &mut text);
    // A trailing line break closes the last line; the fence adds its own.
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let language = language_of(element.node).unwrap_or_default();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    Some(format!("\n\n{fence}{language}\n{text}\n{fence}\n\n").into())
}

/// The text of `node` and its descendants; `<br>` is a line break.
fn text_of(node: &htmd::Node, out: &mut String) {
    use markup5ever_rcdom::NodeData;
    match &node.data {
        NodeData::Text { contents } => out.push_str(&contents.borrow()),
        NodeData::Element { name, .. } if &*name.local == "br" => out.push('\n'),
        _ => {}
    }
    for child in node.children.borrow().iter() {
        text_of(child, out);
    }
}

/// A `language-X` or `lang-X` class on `node` or the first element inside
/// it (the `<code>` of `<pre><code>`).
fn language_of(node: &htmd::Node) -> Option<String> {
    use markup5ever_rcdom::NodeData;
    let of = |n: &htmd::Node| -> Option<String> {
        let NodeData::Element { attrs, .. } = &n.data else {
            return None;
        };
        let attrs = attrs.borrow();
        let class = attrs.iter().find(|a| &*a.name.local == "class")?;
        class.value.split_whitespace().find_map(|c| {
            c.strip_prefix("language-")
                .or_else(|| c.strip_prefix("lang-"))
                .filter(|l| {
                    !l.is_empty()
                        && l.chars()
                            .all(|ch| ch.is_ascii_alphanumeric() || "+-_.#".contains(ch))
                })
                .map(str::to_owned)
        })
    };
    of(node).or_else(|| {
        node.children
            .borrow()
            .iter()
            .find(|c| matches!(c.data, markup5ever_rcdom::NodeData::Element { .. }))
            .and_then(|c| of(c))
    })
}

/// Counts the dropped elements and comments by their opening tags.
fn count_dropped(text: &str) -> Vec<(&'static str, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut out: Vec<(&'static str, usize)> = DROPPED_TAGS
        .iter()
        .map(|tag| {
            let open = format!("<{tag}");
            let n = lower
                .match_indices(&open)
                .filter(|(at, _)| {
                    lower[at + open.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c == '>' || c == '/' || c.is_ascii_whitespace())
                })
                .count();
            (*tag, n)
        })
        .collect();
    out.push(("comment", lower.matches("<!--").count()));
    out.retain(|(_, n)| *n > 0);
    out
}

/// The text of the first `<title>`, entities decoded (by the same HTML
/// parser), whitespace collapsed.
fn title_of(text: &str, converter: &htmd::HtmlToMarkdown) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let raw = &text[start..end];
    // The raw title is text (RCDATA): markup in it is literal.
    let escaped = raw.replace('<', "&lt;");
    let decoded = converter.convert(&format!("<p>{escaped}</p>")).ok()?;
    let title = decoded.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The fenced blocks of a conversion: (info string, text).
    fn fenced(markdown: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut lines = markdown.lines();
        while let Some(line) = lines.next() {
            let fence: String = line.chars().take_while(|&c| c == '`').collect();
            if fence.len() < 3 {
                continue;
            }
            let info = line[fence.len()..].to_owned();
            let mut body = Vec::new();
            for l in lines.by_ref() {
                if l == fence {
                    break;
                }
                body.push(l);
            }
            out.push((info, body.join("\n")));
        }
        out
    }

    #[test]
    fn pre_in_any_container_is_a_fenced_block_with_its_text_exactly() {
        let page = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/html/03-messy-pre.html"
        ))
        .unwrap();
        let md = to_markdown(&page).unwrap().markdown;
        assert_eq!(
            fenced(&md),
            [
                (
                    String::new(),
                    "sudo apt-get install  acme-agent\nacme-agent --config /etc/acme/agent.toml   --verbose"
                        .to_owned()
                ),
                (
                    "toml".to_owned(),
                    "# agent.toml\n[server]\nurl = \"https://ingest.example.org\"   # the  ingest endpoint\nretries = 3\ntimeout_ms = 5000"
                        .to_owned()
                ),
                (
                    "sh".to_owned(),
                    "$ echo '```' > fence.md\n$ cat fence.md && rm fence.md\n```".to_owned()
                ),
            ],
            "{md}"
        );
        assert!(
            md.contains("````sh\n"),
            "a fence longer than the text's backticks: {md}"
        );
        // `<br>` inside `<pre>` is a line break.
        let md = to_markdown(b"<div><pre>a<br>b</pre></div>")
            .unwrap()
            .markdown;
        assert_eq!(fenced(&md), [(String::new(), "a\nb".to_owned())], "{md}");
    }

    #[test]
    fn structure_and_links_survive_and_scripts_navigation_and_comments_are_counted() {
        let page = "<html><head><title>Runbook &amp; FAQ</title><style>p{}</style></head><body>\
            <nav><a href=\"/\">Home</a></nav><!-- tracking -->\
            <h1>Runbook</h1><p>See <a href=\"https://wiki.example.org/x\">the wiki</a>.</p>\
            <ul><li>one</li><li>two</li></ul>\
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
            <pre><code>echo hi</code></pre><script>alert(1)</script></body></html>";
        let c = to_markdown(page.as_bytes()).unwrap();
        assert_eq!(c.title.as_deref(), Some("Runbook & FAQ"));
        assert!(c.markdown.contains("# Runbook"), "{}", c.markdown);
        assert!(
            c.markdown
                .contains("[the wiki](https://wiki.example.org/x)"),
            "{}",
            c.markdown
        );
        assert!(c.markdown.contains("| a | b |"), "{}", c.markdown);
        assert!(c.markdown.contains("echo hi"));
        assert!(
            !c.markdown.contains("alert")
                && !c.markdown.contains("Home")
                && !c.markdown.contains("tracking")
        );
        assert_eq!(
            c.dropped_summary(),
            "1 head, 1 script, 1 style, 1 nav, 1 comment"
        );
    }

    #[test]
    fn broken_markup_and_plain_text_convert_and_bad_bytes_name_the_offset() {
        let c = to_markdown(b"<div><p>unclosed <b>bold<table><tr><td>cell").unwrap();
        assert!(c.markdown.contains("unclosed"));
        assert!(c.markdown.contains("cell"));
        let t = to_markdown(b"just text, no tags").unwrap();
        assert_eq!(t.markdown, "just text, no tags");
        assert!(t.dropped.is_empty());
        let err = to_markdown(b"<p>ok\xff</p>").unwrap_err();
        assert_eq!(err, ChunkError::InvalidUtf8 { byte_offset: 5 });
        assert!(is_html_name("Page.HTM") && !is_html_name("page.md"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Tag soup never panics, and the Markdown it becomes chunks cleanly
        /// under every granularity of hierarchy-v1.
        #[test]
        fn tag_soup_converts_and_chunks(parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("<p>".to_owned()),
                proptest::strategy::Just("</p>".to_owned()),
                proptest::strategy::Just("<table><tr><th>h</th><td>".to_owned()),
                proptest::strategy::Just("</td></tr>".to_owned()),
                proptest::strategy::Just("<ul><li>".to_owned()),
                proptest::strategy::Just("<h2>".to_owned()),
                proptest::strategy::Just("<pre><code>".to_owned()),
                proptest::strategy::Just("<script>".to_owned()),
                proptest::strategy::Just("<!--".to_owned()),
                proptest::strategy::Just("<a href=\"x\">".to_owned()),
                "[a-zA-Zа-я0-9 .|*#`&;<>]{0,40}",
            ],
            0..60,
        )) {
            let page = parts.concat();
            let c = to_markdown(page.as_bytes()).unwrap();
            let meta = crate::DocumentMeta::default();
            let engine = crate::Engine::builtin().unwrap();
            if let Err(e) = engine.chunk(c.markdown.as_bytes(), &meta, Some("hierarchy-v1")) {
                proptest::prop_assert!(e.code() != crate::ErrorCode::ValidationFailed, "{e}");
            }
        }
    }
}
