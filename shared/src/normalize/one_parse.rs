//! Normalization and the blocks of its result from one Markdown parse
//! (issue 18), where collapsing whitespace keeps the blocks: when only runs
//! of plain spaces inside lines collapse.

use crate::error::ChunkError;
use crate::markdown::{finish_blocks, parse_blocks, raw_blocks, Block};

use super::steps::{collapse_whitespace, unified, Collapsed, NormalizedDocument};

/// [`normalize`](super::normalize) and [`parse_blocks`] of the result, with one Markdown
/// parse instead of two where that gives the same blocks (issue 18: the
/// parse that finds the verbatim ranges was 6% of `spec-v1`'s time).
///
/// The parse of the text before whitespace collapsing yields both the
/// verbatim ranges and the blocks; the blocks' offsets are then carried
/// across the collapsed runs. Collapsing runs of plain spaces inside a
/// line, after its first character, changes no block structure, so those
/// blocks are the blocks of the normalized text. Where a collapse could
/// (a no-break space that left a line blank; a tab before an ATX heading's
/// closing `#`, which pulldown-cmark does not take for one; a backslash
/// left at a line's end), the normalized text is parsed again. Tests
/// compare both ways over generated documents and the corpus.
pub fn normalize_with_blocks(bytes: &[u8]) -> Result<(NormalizedDocument, Vec<Block>), ChunkError> {
    let unified = unified(bytes)?;
    let (raw, protected) = raw_blocks(&unified, true);
    let mut runs = Collapsed::default();
    let text = collapse_whitespace(&unified, || protected, Some(&mut runs));
    let blocks = if runs.exotic {
        parse_blocks(&text)
    } else {
        finish_blocks(raw, &text, |offset| runs.map(offset))
    };
    let page_breaks = super::pages::form_feeds(bytes, &text);
    Ok((NormalizedDocument { text, page_breaks }, blocks))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use crate::normalize::normalize;

    #[test]
    fn one_parse_gives_the_blocks_of_two_on_tricky_whitespace() {
        // Each collapses something; the blocks from normalization's one parse
        // must equal a parse of the normalized text, and some must take the
        // one-parse path (the runs are plain spaces and tabs) while others
        // must not (a no-break space or a backslash decides the structure).
        let cases = [
            (
                "| a   | b |\n|---|---|\n| 1   | 2  |\n\nText   after  \n",
                false,
            ),
            ("```\nkeep    this  \n```\nSome   text  here  \n", false),
            ("Some   text\there\n", true),
            ("#  Title  with   runs #  \n\npara   one\n", false),
            ("#\tTitle\n", true),
            ("# ab \t cd \t#\n", true),
            (
                "Title   line\n===  \n\n- item   one\n    cont   inued\n  ```\n  x   y\n  ```\n",
                false,
            ),
            ("|\t---\t|\t---\t|\n", true),
            ("[ref]:   /url   'title  here'\n\n[ref]  text\n", false),
            (
                "<div   class=\"x\">\n  a   b\n</div>\n\nafter   it\n",
                false,
            ),
            ("---\ntitle:   x\n---\n\nBody   text\n", false),
            ("> quoted   text\nlazy   line\n\n1.  x   y\n", false),
            ("a\u{a0}\u{a0}\n\u{a0}\u{a0}\n    code\n", true),
            ("Setext a\\  \nb\n===\n", true),
            ("x\n---\u{a0}\u{a0}\ny   z\n", true),
        ];
        for (src, exotic) in cases {
            let want = normalize(src.as_bytes()).unwrap();
            let (doc, blocks) = normalize_with_blocks(src.as_bytes()).unwrap();
            assert_eq!(doc, want, "{src:?}");
            assert_eq!(blocks, parse_blocks(&want.text), "{src:?}");
            let mut runs = Collapsed::default();
            let unified = unified(src.as_bytes()).unwrap();
            let (_, protected) = raw_blocks(&unified, true);
            collapse_whitespace(&unified, || protected, Some(&mut runs));
            assert_eq!(runs.exotic, exotic, "{src:?}");
            assert_ne!(want.text, src, "{src:?} collapses nothing");
        }
    }

    #[test]
    fn offsets_are_carried_across_collapsed_runs() {
        // "a   b  \n" -> "a b\n": the run at 1 (3 bytes -> 1), the trailing
        // run at 5 (2 bytes -> 0).
        let mut runs = Collapsed::default();
        runs.shorten(1, 3, 1);
        runs.shorten(5, 2, 0);
        runs.shorten(7, 1, 1);
        let got: Vec<usize> = (0..=8).map(|o| runs.map(o)).collect();
        assert_eq!(got, [0, 1, 2, 2, 2, 3, 3, 3, 4]);
    }
}
