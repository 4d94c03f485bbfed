//! The one Markdown parse both normalization and block parsing use: the
//! parser options, the front matter, and the events of the body after it.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser};

/// Parser options shared by normalization and block parsing, so both see the
/// same structure.
pub(crate) fn parser_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The length of the YAML (`---`) or TOML (`+++`) front matter at the very
/// start of `text`, 0 if there is none. Only the start counts: pulldown-cmark
/// would also read a `---`/text/`---` stretch in the middle of a document as
/// a metadata block, and that text is content.
pub(crate) fn front_matter_len(text: &str) -> usize {
    let (fence, closers): (&str, &[&str]) = if text.starts_with("---\n") {
        ("---", &["---", "..."])
    } else if text.starts_with("+++\n") {
        ("+++", &["+++"])
    } else {
        return 0;
    };
    let mut lines = text[fence.len() + 1..].split_inclusive('\n');
    // The first line must look like a key (`title: x`, `title = "x"`), so a
    // thematic break that opens a document is not taken for front matter.
    let first = lines.next().unwrap_or("");
    let key_len = first
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        .count();
    let after_key = first[key_len..].trim_start_matches(' ');
    if key_len == 0
        || !(after_key.starts_with(':') || (fence == "+++" && after_key.starts_with('=')))
    {
        return 0;
    }
    let mut end = fence.len() + 1 + first.len();
    for line in lines {
        end += line.len();
        if closers.contains(&line.trim_end()) {
            return end;
        }
    }
    0
}

/// The document's Markdown events with byte ranges into `text`, front matter
/// excluded (it is not Markdown); returns the front matter's length too.
pub(crate) fn body_events(text: &str) -> (usize, impl Iterator<Item = (Event<'_>, Range<usize>)>) {
    let fm = front_matter_len(text);
    let events = Parser::new_ext(&text[fm..], parser_options())
        .into_offset_iter()
        .map(move |(e, r)| (e, r.start + fm..r.end + fm));
    (fm, events)
}
