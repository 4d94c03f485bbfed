//! Blocks below the top level: what [`super::parse_blocks`] folds into its
//! top-level blocks (a code block in a list item, a table in a quote, a
//! fenced block between the tags of an HTML container), for the per-chunk
//! files' `nodeTypes`.

use pulldown_cmark::{Event, Tag, TagEnd};

use super::block::BlockKind;
use super::parse::body_events;

/// The start offset and kind of every block nested inside a top-level block
/// (any depth), in document order, and of the code an HTML block holds
/// (`<pre>`, at the top level too). Nested paragraphs are left out: a list
/// item's or a quote's text is what the list or the quote already says.
pub fn nested_nodes(text: &str) -> Vec<(usize, BlockKind)> {
    let (_, events) = body_events(text);
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The HTML block being read, and whether its `<pre>` was reported.
    let mut html: Option<bool> = None;
    for (event, range) in events {
        match event {
            Event::Start(tag) => {
                let kind = match &tag {
                    Tag::Heading { level, .. } => Some(BlockKind::Heading {
                        level: *level as u8,
                    }),
                    Tag::List(first) => Some(BlockKind::List {
                        ordered: first.is_some(),
                    }),
                    Tag::Table(_) => Some(BlockKind::Table),
                    Tag::CodeBlock(k) => Some(BlockKind::Code {
                        fenced: matches!(k, pulldown_cmark::CodeBlockKind::Fenced(_)),
                    }),
                    Tag::BlockQuote(_) => Some(BlockKind::Quote),
                    Tag::HtmlBlock => Some(BlockKind::Html),
                    _ => None,
                };
                if matches!(tag, Tag::HtmlBlock) {
                    html = Some(false);
                }
                if let (Some(kind), true) = (kind, depth > 0) {
                    out.push((range.start, kind));
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if matches!(end, TagEnd::HtmlBlock) {
                    html = None;
                }
            }
            Event::Rule if depth > 0 => out.push((range.start, BlockKind::ThematicBreak)),
            Event::Html(raw)
                if html == Some(false) && (contains_pre(&raw) || opens_fence(&raw)) =>
            {
                out.push((range.start, BlockKind::Code { fenced: false }));
                html = Some(true);
            }
            _ => {}
        }
    }
    out
}

/// Whether a line of an HTML block is a code fence (three backticks or
/// tildes after at most three spaces): a fenced block written inside an
/// HTML container without the blank line that would end the container.
fn opens_fence(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    line.len() - rest.len() <= 3 && (rest.starts_with("```") || rest.starts_with("~~~"))
}

/// Whether raw HTML opens a `<pre>` element (any case, with or without
/// attributes).
fn contains_pre(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    bytes.windows(4).enumerate().any(|(i, w)| {
        w[0] == b'<'
            && w[1..].eq_ignore_ascii_case(b"pre")
            && bytes
                .get(i + 4)
                .is_none_or(|b| *b == b'>' || b.is_ascii_whitespace())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<BlockKind> {
        nested_nodes(text).into_iter().map(|(_, k)| k).collect()
    }

    #[test]
    fn code_in_a_list_item_and_in_a_quote_is_found() {
        let text = "- item\n\n  ```sh\n  make\n  ```\n\n> quote\n>\n> | a |\n> |---|\n> | 1 |\n";
        assert_eq!(
            kinds(text),
            [BlockKind::Code { fenced: true }, BlockKind::Table]
        );
        let (at, _) = nested_nodes(text)[0];
        assert!(text[at..].starts_with("```sh"), "{}", &text[at..]);
    }

    #[test]
    fn pre_in_html_is_code_and_top_level_blocks_are_not_repeated() {
        assert_eq!(
            kinds("<div class=\"x\">\n<pre><code>a  b\n</code></pre>\n</div>\n"),
            [BlockKind::Code { fenced: false }]
        );
        assert_eq!(kinds("<div>\n<p>no pre here, <prefix></p>\n</div>\n"), []);
        assert_eq!(
            kinds("<details>\n<summary>x</summary>\n```js\ncode()\n```\n</details>\n"),
            [BlockKind::Code { fenced: false }]
        );
        assert_eq!(kinds("# Title\n\nText.\n\n```\ncode\n```\n"), []);
    }
}
