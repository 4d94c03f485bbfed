//! Normalization and the blocks of its result from one Markdown parse
//! (issue 18), where collapsing whitespace keeps the blocks: when only runs
//! of plain spaces inside lines collapse.

use std::ops::Range;

use crate::error::ChunkError;
use crate::markdown::{finish_blocks, parse_blocks, raw_blocks, Block};

use super::{collapse_whitespace, unified, NormalizedDocument};

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
    Ok((NormalizedDocument { text }, blocks))
}

/// The whitespace runs collapsing changed in length, to carry offsets of
/// the text before it to the text after it.
#[derive(Debug, Default)]
pub(crate) struct Collapsed {
    /// Each run: its offset before collapsing, its length before and after,
    /// and the bytes all earlier runs removed. Ascending.
    runs: Vec<Run>,
    /// Whether some collapsed run held anything but plain spaces (a tab,
    /// a no-break space), or a line's dropped trailing run followed a
    /// backslash: the block structure may then differ.
    pub(crate) exotic: bool,
}

#[derive(Debug, Clone, Copy)]
struct Run {
    at: usize,
    before: usize,
    after: usize,
    removed_earlier: usize,
}

impl Collapsed {
    /// Records that the run `run` of `rest` (a line's text after its
    /// leading structure, which starts at offset `at`) became `after` bytes,
    /// and whether that may change the block structure.
    pub(super) fn record(&mut self, rest: &str, at: usize, run: Range<usize>, after: usize) {
        self.exotic |= rest[run.clone()].bytes().any(|b| b != b' ')
            || (after == 0 && rest[..run.start].ends_with('\\'));
        self.shorten(at + run.start, run.len(), after);
    }

    /// Records that the run of `before` bytes at `at` became `after` bytes.
    fn shorten(&mut self, at: usize, before: usize, after: usize) {
        if before == after {
            return;
        }
        let removed_earlier = self
            .runs
            .last()
            .map_or(0, |r| r.removed_earlier + r.before - r.after);
        self.runs.push(Run {
            at,
            before,
            after,
            removed_earlier,
        });
    }

    /// Where `offset` of the text before collapsing lands after it: inside
    /// a shortened run, no further than the run's new end.
    pub(crate) fn map(&self, offset: usize) -> usize {
        let i = self.runs.partition_point(|r| r.at < offset);
        let Some(r) = i.checked_sub(1).and_then(|i| self.runs.get(i)) else {
            return offset;
        };
        let start = r.at - r.removed_earlier;
        if offset < r.at + r.before {
            start + (offset - r.at).min(r.after)
        } else {
            offset - r.removed_earlier - (r.before - r.after)
        }
    }
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
