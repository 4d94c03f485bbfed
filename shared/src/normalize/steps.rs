//! The steps of normalization on text: decode, remove controls, unify line
//! endings (steps 1-3), and collapse whitespace outside the verbatim ranges
//! (step 4), recording the runs it changed ([`Collapsed`]).

use std::borrow::Cow;
use std::ops::Range;

use crate::error::ChunkError;
use crate::markdown::raw_blocks;
use crate::normalize::chars::{is_hspace, is_removed_control};
use crate::normalize::scan;

/// A normalized Markdown document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NormalizedDocument {
    /// The normalized text.
    pub text: String,
    /// Where the input had a form feed (the page break of a PDF text
    /// export), as byte offsets of `text`, in order: normalization removes
    /// the character with the other controls (step 2) and keeps its place
    /// here for the strategies that number pages. Empty for most documents.
    pub page_breaks: Vec<usize>,
}

/// Steps 1-3: the decoded text, its controls removed and line endings unified.
pub(super) fn unified(bytes: &[u8]) -> Result<Cow<'_, str>, ChunkError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ChunkError::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(match remove_controls(text) {
        Cow::Borrowed(clean) => unify_line_endings(clean),
        Cow::Owned(clean) => Cow::Owned(unify_line_endings(&clean).into_owned()),
    })
}

fn remove_controls(text: &str) -> Cow<'_, str> {
    // Most documents have none: one scan, eight bytes at a time, no copy. Every removed
    // character is a byte below 0x20 or 0x7F, or starts with C2 (C1
    // controls) or E2 (the bidi controls); only those are decoded.
    if !scan::holds_removed_control(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|c| !is_removed_control(*c)).collect())
}

fn unify_line_endings(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Byte ranges whose lines are kept verbatim: code blocks, tables, HTML
/// blocks, front matter (found by the block parse, [`raw_blocks`]).
pub(super) fn protected_ranges(text: &str) -> Vec<Range<usize>> {
    raw_blocks(text, true).1
}

/// Collapses whitespace on every line outside the protected ranges. The
/// ranges come from `protected`, a Markdown parse only run once a line that
/// collapsing would change is met: a document without one is copied as it
/// is, parse-free (issue 18). `runs`, when given, hears of every run that
/// collapsing changed, to carry offsets across them ([`Collapsed`]).
pub(super) fn collapse_whitespace(
    text: &str,
    protected: impl FnOnce() -> Vec<Range<usize>>,
    mut runs: Option<&mut Collapsed>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut protected = Some(protected);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut next_range = 0;
    let mut line_start = 0;
    for line in scan::lines_inclusive(text) {
        let line_end = line_start + line.len();
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let lead = leading_structure_len(body);
        let rest = &body[lead..];
        if !scan::needs_collapse(rest) {
            out.push_str(line);
            line_start = line_end;
            continue;
        }
        if let Some(find) = protected.take() {
            ranges = find();
        }
        while ranges.get(next_range).is_some_and(|r| r.end <= line_start) {
            next_range += 1;
        }
        let verbatim = ranges
            .get(next_range)
            .is_some_and(|r| r.start < line_end && line_start < r.end);
        if verbatim {
            out.push_str(line);
        } else {
            out.push_str(&body[..lead]);
            let at = line_start + lead;
            collapse_rest(rest, &mut out, |start, before, after| {
                if let Some(runs) = runs.as_deref_mut() {
                    runs.record(rest, at, start..start + before, after);
                }
            });
            out.push_str(newline);
        }
        line_start = line_end;
    }
    out
}

/// Length in bytes of the line's leading structure: indentation, quote
/// markers, list markers and the whitespace after them.
fn leading_structure_len(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let marker_start = i;
        let mut j = i;
        if j < b.len() && matches!(b[j], b'>' | b'-' | b'+' | b'*') {
            j += 1;
        } else {
            while j < b.len() && j - i < 9 && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > i && j < b.len() && matches!(b[j], b'.' | b')') {
                j += 1;
            } else {
                j = i;
            }
        }
        let marker_ok = j > marker_start
            && (j == b.len() || matches!(b[j], b' ' | b'\t' | b'\n') || b[marker_start] == b'>');
        if !marker_ok {
            return i;
        }
        i = j;
    }
}

/// Collapses the whitespace runs of a line after its leading structure:
/// one plain space (or one lone no-break-like space) stays, other runs
/// become one space, trailing whitespace is dropped.
///
/// `on_run(start, before, after)` hears of every run that changes: its
/// byte offset in `rest`, its length, and the length it became (0 when
/// dropped; a lone tab stays one byte long).
pub(super) fn collapse_rest(
    rest: &str,
    out: &mut String,
    mut on_run: impl FnMut(usize, usize, usize),
) {
    let mut run_start: Option<usize> = None;
    for (i, c) in rest.char_indices() {
        if is_hspace(c) {
            run_start.get_or_insert(i);
        } else {
            if let Some(start) = run_start.take() {
                // One plain space, or one lone no-break-like space, stays itself.
                let run = &rest[start..i];
                let mut it = run.chars();
                match (it.next(), it.next()) {
                    (Some(only), None) if only != '\t' && only != '\u{0b}' && only != '\u{0c}' => {
                        out.push(only)
                    }
                    _ => {
                        out.push(' ');
                        on_run(start, run.len(), 1);
                    }
                }
            }
            out.push(c);
        }
    }
    // Trailing horizontal whitespace is dropped.
    if let Some(start) = run_start {
        on_run(start, rest.len() - start, 0);
    }
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
    pub(super) fn shorten(&mut self, at: usize, before: usize, after: usize) {
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
