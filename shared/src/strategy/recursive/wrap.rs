//! Whether a document's prose is hard-wrapped: its paragraphs broken into
//! lines of a fixed width (a plain-text export, an e-mail, an old
//! encyclopedia scan, a Markdown file wrapped at 80 columns), so that a line
//! break falls mid-sentence, or written one paragraph per line (a speech, a
//! web page's text), so that a line break ends a sentence and a topic step.
//! The recursive strategy's `wrap_aware` splits the second kind at line
//! breaks before sentences.
//!
//! The evidence is the line breaks inside paragraph blocks (lists, tables,
//! code and headings are blocks of their own and say nothing), after a
//! line of at least [`LONG_LINE`] characters (a short line is a title, a
//! label or a list-like row, wrapped or not): the document is hard-wrapped
//! when more than half of those lines end without sentence-final
//! punctuation. A document with no such line break is not.

use crate::markdown::{Block, BlockKind};

/// Characters (code points, trimmed) from which a line is evidence.
pub const LONG_LINE: usize = 40;

/// Whether `text` (the normalized document whose Markdown `blocks` are
/// given) is hard-wrapped.
pub fn hard_wrapped(text: &str, blocks: &[Block]) -> bool {
    let (mut long, mut mid_sentence) = (0usize, 0usize);
    for b in blocks
        .iter()
        .filter(|b| matches!(b.kind, BlockKind::Paragraph))
    {
        let Some(para) = text.get(b.range.clone()) else {
            continue;
        };
        let mut lines = para.lines().peekable();
        while let Some(line) = lines.next() {
            if lines.peek().is_none() {
                break; // the paragraph's last line: its end is the block's
            }
            let line = line.trim();
            if line.chars().count() < LONG_LINE {
                continue;
            }
            long += 1;
            if !ends_sentence(line) {
                mid_sentence += 1;
            }
        }
    }
    mid_sentence * 2 > long
}

/// Whether `line` (trimmed) ends with sentence-final punctuation, a colon
/// or a semicolon, before any closing quotes and brackets.
fn ends_sentence(line: &str) -> bool {
    let body = line.trim_end_matches(['"', '\'', '\u{201d}', '\u{2019}', '\u{bb}', ')', ']', '*', '_']);
    body.ends_with(['.', '!', '?', '\u{2026}', ':', ';'])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::markdown::parse_blocks;

    fn wrapped(text: &str) -> bool {
        hard_wrapped(text, &parse_blocks(text))
    }

    #[test]
    fn prose_broken_mid_sentence_is_hard_wrapped_and_a_line_per_paragraph_is_not() {
        let wrapped_prose = "The cathedral was begun in the twelfth century and finished\n\
            only after the great fire, when the chapter resolved to rebuild\n\
            the nave in the new style. Its towers were added later.\n";
        assert!(wrapped(wrapped_prose));
        let paragraphs = "The opening of this new year must arouse in us all grateful thanks.\n\
            In the past three years the Congress and the Executive have done much.\n\
            Our country is at peace. Our security posture commands respect today.\n";
        assert!(!wrapped(paragraphs));
        // Quotes and brackets after the full stop still end the sentence.
        assert!(!wrapped(
            "He said that the vote would be held on the following day.\u{201d}\n\
             The committee agreed, and the hearing was adjourned until then (at noon.)\n\
             Nothing else was said."
        ));
    }

    #[test]
    fn short_lines_lists_tables_and_single_lines_are_no_evidence() {
        // Short lines (titles, labels) do not count, and without evidence a
        // document is not hard-wrapped.
        assert!(!wrapped("Item 1\nBusiness\nItem 1A\nRisk Factors\n"));
        assert!(!wrapped(""));
        assert!(!wrapped("One long line that is a whole paragraph without any end at all\n"));
        // A list's lines are a block of their own.
        let list = "- the first item of a list that runs long without a stop\n\
                    - the second item of a list that runs long without a stop\n\
                    - the third item of a list that runs long without a stop\n";
        assert!(!wrapped(list));
        let table = "| a long header cell that has no stop | another cell |\n|---|---|\n| a long body cell that has no stop at all | x |\n";
        assert!(!wrapped(table));
    }
}
