//! Fitting chunks to an embedder's window (issue 17, a profile's
//! `[embedder]`): every chunk's `embed_text` must fit `max_tokens` of the
//! embedder's own tokens. Budgets are in the profile's tokenizer (cl100k),
//! the embedder counts in its own (256 MiniLM word pieces can be fewer
//! than 200 cl100k tokens of English, far fewer of Russian), so a chunk the
//! strategy made may still be too long for the embedder.
//!
//! Here, before records are built, such a piece is cut into parts that fit,
//! at the strongest boundary near an even share (paragraph, line, sentence,
//! word, in that order); a table part repeats the table's header and a code
//! part re-opens its fence, as the strategies' own splits do. The first part
//! keeps the piece's prefix (overlap), the last its suffix. Record building
//! then shortens the breadcrumb, and drops it if it must, so `embed_text`
//! fits too ([`crate::chunk::build`]).

use std::ops::Range;

use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::ChunkType;
use crate::chunk::trail::{block_span, trim_range, HeadingTrail};
use crate::embed::EmbedTokenizer;
use crate::ids::{fence_of, unclosed_fence};
use crate::markdown::{pipe_rows, Block};
use crate::tokens::{ceil_char_boundary, floor_char_boundary};

/// What a part may start with besides its own text, and what it ends with.
struct Frame {
    first_prefix: String,
    continuation: String,
    suffix: String,
    /// Where the repeated header or fence ends in the piece's own text:
    /// the first part is never cut before it.
    header_end: usize,
}

/// `pieces` with every piece whose chunk text is over `max` tokens of
/// `window` cut into parts that fit (each with room for a closing fence).
/// `preceding_only`: the strategy's chunks carry no synthetic prefix
/// ([`crate::strategy::limits::PrefixRule::PrecedingText`]), so parts repeat no
/// header or fence.
pub(crate) fn fit_pieces(
    pieces: Vec<Piece>,
    text: &str,
    blocks: &[Block],
    window: &dyn EmbedTokenizer,
    max: usize,
    preceding_only: bool,
) -> Vec<Piece> {
    let trail = HeadingTrail::new(blocks);
    let mut out = Vec::with_capacity(pieces.len());
    let mut prev_split = false;
    for mut p in pieces {
        // The overlap was copied from the whole previous piece; after a cut
        // its last part may be shorter than that overlap (at most half of
        // the previous chunk, issue 17): it goes.
        if prev_split && matches!(p.prefix, Prefix::Overlap(_)) {
            p.prefix = Prefix::None;
        }
        prev_split = false;
        let whole = format!(
            "{}{}{}",
            p.prefix_text(text),
            &text[p.own.clone()],
            p.suffix
        );
        if count_closed(window, &whole) <= max {
            out.push(p);
            continue;
        }
        prev_split = true;
        let frame = frame_of(&p, text, window, max, preceding_only);
        let mut parts = split(p, text, &frame, window, max);
        // Later parts may start past a heading the piece's first block
        // did not have above it.
        for part in parts.iter_mut().skip(1) {
            part.headings = trail.path_of(&part.own);
            part.blocks = block_span(blocks, &part.own);
        }
        out.extend(parts);
    }
    out
}

/// Tokens of `s` with the fence a split leaves open closed, as record
/// building will close it.
fn count_closed(window: &dyn EmbedTokenizer, s: &str) -> usize {
    match unclosed_fence(s) {
        Some(close) => window.count(&format!("{s}\n{close}")),
        None => window.count(s),
    }
}

fn frame_of(
    p: &Piece,
    text: &str,
    window: &dyn EmbedTokenizer,
    max: usize,
    preceding_only: bool,
) -> Frame {
    // A prefix that fills half the window would leave the parts no room:
    // overlap is dropped, a repeated header or fence is not repeated.
    let small = |s: String| {
        if window.count(&s) * 2 > max {
            String::new()
        } else {
            s
        }
    };
    let first_prefix = small(p.prefix_text(text).to_owned());
    let own = &text[p.own.clone()];
    let continuation = match (&p.prefix, p.chunk_type) {
        _ if preceding_only => String::new(),
        (Prefix::Text(t), ChunkType::Table | ChunkType::Code) => t.clone(),
        (_, ChunkType::Table) => table_header(own),
        (_, ChunkType::Code) => own
            .lines()
            .find(|l| fence_of(l).is_some())
            .map(|l| format!("{l}\n"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    let mut continuation = small(continuation);
    // The header repeated on later parts must lie whole in the first one,
    // with room for a row; if the text before it leaves none, nothing is
    // repeated (the parts are typed text).
    let mut header_end = p.own.start;
    if !continuation.is_empty() {
        match own.find(continuation.trim_end()) {
            Some(at) => {
                header_end = p.own.start + at + continuation.trim_end().len();
                let lead = format!("{first_prefix}{}", &text[p.own.start..header_end]);
                if window.count(&lead) * 4 > max * 3 {
                    continuation.clear();
                    header_end = p.own.start;
                }
            }
            None if matches!(p.prefix, Prefix::Text(_)) => {}
            None => continuation.clear(),
        }
    }
    Frame {
        first_prefix,
        continuation,
        suffix: p.suffix.clone(),
        header_end,
    }
}

/// The header rows of the first table in `own` (with a newline), or
/// nothing when none is recognised.
fn table_header(own: &str) -> String {
    let lines: Vec<&str> = own.lines().collect();
    let Some(i) = lines
        .iter()
        .position(|l| l.contains('|') && !l.trim_start().starts_with('#'))
    else {
        return String::new();
    };
    let n = if pipe_rows::row_of_item(lines[i]).is_some() {
        pipe_rows::header_lines(&lines[i..])
    } else if lines.get(i + 1).is_some_and(|d| pipe_rows::is_delimiter(d)) {
        2
    } else {
        0
    };
    lines[i..i + n].iter().map(|l| format!("{l}\n")).collect()
}

/// Cuts `p` into parts that fit.
fn split(
    p: Piece,
    text: &str,
    frame: &Frame,
    window: &dyn EmbedTokenizer,
    max: usize,
) -> Vec<Piece> {
    let mut parts: Vec<Range<usize>> = Vec::new();
    let mut start = p.own.start;
    let end = p.own.end;
    while start < end {
        let prefix = if parts.is_empty() {
            &frame.first_prefix
        } else {
            &frame.continuation
        };
        let fits = |e: usize| count_closed(window, &format!("{prefix}{}", &text[start..e])) <= max;
        let rest = format!("{prefix}{}{}", &text[start..end], frame.suffix);
        if count_closed(window, &rest) <= max {
            parts.push(start..end);
            break;
        }
        let e_max = largest_fit(text, start, end, &fits);
        let total = window.count(&text[start..end]).max(1);
        let room = window.count(&text[start..e_max]).max(1);
        let shares = total.div_ceil(room).max(2);
        let aim = start + (end - start) / shares;
        let aim = floor_char_boundary(text, aim.clamp(start + 1, e_max.max(start + 1)));
        // Token counts are not monotone in the text (BPE merges, trimmed
        // whitespace): the part as it will be is checked exactly, and the
        // cut moved back until it fits.
        let mut limit = e_max;
        let (cut, own) = loop {
            let floor = if parts.is_empty() {
                frame.header_end
            } else {
                start
            };
            let cut = best_cut(text, start.max(floor), aim.min(limit).max(floor), limit);
            let own = trim_range(text, start..cut);
            let fine = own.is_empty()
                || count_closed(window, &format!("{prefix}{}", &text[own.clone()])) <= max;
            let back = floor_char_boundary(text, cut.saturating_sub(1));
            if fine || back <= start {
                break (cut, own);
            }
            limit = back;
        };
        if !own.is_empty() {
            parts.push(own);
        }
        start = cut + (text[cut..end].len() - text[cut..end].trim_start().len());
    }
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, own)| Piece {
            // A table or code part that cannot repeat its header or fence
            // is text, as the strategies' own splits degrade.
            chunk_type: part_type(&p, i, &text[own.clone()], frame),
            prefix: match (i, &p.prefix) {
                (0, Prefix::Overlap(_) | Prefix::Text(_)) if frame.first_prefix.is_empty() => {
                    Prefix::None
                }
                (0, prefix) => prefix.clone(),
                _ if frame.continuation.is_empty() => Prefix::None,
                _ => Prefix::Text(frame.continuation.clone()),
            },
            suffix: if i + 1 == n {
                p.suffix.clone()
            } else {
                String::new()
            },
            own,
            blocks: p.blocks,
            headings: p.headings.clone(),
            detail: p.detail.clone(),
            starts_with_heading: i == 0 && p.starts_with_heading,
            overlap_source: if i + 1 == n { p.overlap_source } else { None },
        })
        .collect()
}

/// A table or code part is typed so only when it starts (after headings)
/// with its table or fence, repeated or its own; otherwise it is text, as
/// the strategies' own splits degrade.
fn part_type(p: &Piece, i: usize, own: &str, frame: &Frame) -> ChunkType {
    if !matches!(p.chunk_type, ChunkType::Table | ChunkType::Code) {
        return p.chunk_type;
    }
    let repeated = if i == 0 {
        matches!(p.prefix, Prefix::Text(_)) && !frame.first_prefix.is_empty()
    } else {
        !frame.continuation.is_empty()
    };
    if repeated {
        return p.chunk_type;
    }
    let mut lines = own
        .lines()
        .skip_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    let (first, second) = (lines.next(), lines.next());
    let starts = match p.chunk_type {
        ChunkType::Table => first.is_some_and(|l| {
            pipe_rows::row_of_item(l).is_some()
                || (l.contains('|') && second.is_some_and(pipe_rows::is_delimiter))
        }),
        _ => first.is_some_and(|l| fence_of(l).is_some()),
    };
    if starts {
        p.chunk_type
    } else {
        ChunkType::Paragraph
    }
}

/// The largest char boundary `e` in `start+1..=end` with `fits(e)` (at
/// least the first character, so a cut always advances).
fn largest_fit(text: &str, start: usize, end: usize, fits: &dyn Fn(usize) -> bool) -> usize {
    let first = ceil_char_boundary(text, start + 1).min(end);
    let (mut lo, mut hi) = (first, end);
    if !fits(lo) {
        return lo;
    }
    while lo < hi {
        let mid = ceil_char_boundary(text, lo + (hi - lo).div_ceil(2)).min(hi);
        if mid <= lo {
            break;
        }
        if fits(mid) {
            lo = mid;
        } else {
            hi = floor_char_boundary(text, mid - 1).max(lo);
        }
    }
    lo
}

/// The cut in `start..=e_max` at the strongest boundary (paragraph break,
/// line break, sentence end, space) in the upper half around `aim`,
/// nearest `aim` among equals; `e_max` itself when there is none.
fn best_cut(text: &str, start: usize, aim: usize, e_max: usize) -> usize {
    let lo = start + (aim.saturating_sub(start)) / 2;
    let mut best: Option<(u8, usize, usize)> = None;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate().take(e_max).skip(lo.max(start + 1)) {
        let strength = match b {
            b'\n' if bytes.get(i + 1) == Some(&b'\n') || (i > 0 && bytes[i - 1] == b'\n') => 4,
            b'\n' => 3,
            b' ' if i > 0 && matches!(bytes[i - 1], b'.' | b'!' | b'?' | b';' | b':') => 2,
            b' ' | b'\t' => 1,
            _ => continue,
        };
        // A part of heading lines alone would stand apart from its text.
        if text[start..i]
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue;
        }
        let distance = i.abs_diff(aim);
        let better = match best {
            None => true,
            Some((s, d, _)) => strength > s || (strength == s && distance < d),
        };
        if better {
            best = Some((strength, distance, i));
        }
    }
    best.map_or(e_max, |(_, _, i)| i)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// One token per whitespace-separated word, plus two specials.
    #[derive(Debug)]
    struct Words;
    impl EmbedTokenizer for Words {
        fn id(&self) -> &str {
            "words"
        }
        fn count(&self, text: &str) -> usize {
            text.split_whitespace().count() + 2
        }
    }

    fn piece(text: &str, chunk_type: ChunkType) -> Piece {
        Piece {
            chunk_type,
            own: 0..text.len(),
            prefix: Prefix::None,
            suffix: String::new(),
            blocks: (0, 0),
            headings: vec![],
            detail: None,
            starts_with_heading: false,
            overlap_source: None,
        }
    }

    #[test]
    fn prose_splits_at_paragraphs_into_even_parts_that_fit() {
        let para = |w: &str| vec![w; 30].join(" ") + ".";
        let text = format!("{}\n\n{}\n\n{}", para("a"), para("b"), para("c"));
        let parts = fit_pieces(
            vec![piece(&text, ChunkType::Paragraph)],
            &text,
            &[],
            &Words,
            70,
            false,
        );
        assert_eq!(parts.len(), 2, "{parts:?}");
        for p in &parts {
            assert!(Words.count(&text[p.own.clone()]) <= 70);
        }
        assert!(
            text[parts[1].own.clone()].starts_with("b")
                || text[parts[1].own.clone()].starts_with("c")
        );
    }

    #[test]
    fn a_table_part_repeats_the_header() {
        let mut text = String::from("| name | value |\n|---|---|\n");
        for i in 0..40 {
            text.push_str(&format!("| row {i} | {i} |\n"));
        }
        let text = text.trim_end().to_owned();
        let parts = fit_pieces(
            vec![piece(&text, ChunkType::Table)],
            &text,
            &[],
            &Words,
            60,
            false,
        );
        assert!(parts.len() >= 3);
        for p in &parts[1..] {
            assert_eq!(
                p.prefix,
                Prefix::Text("| name | value |\n|---|---|\n".into())
            );
            assert!(text[p.own.clone()].starts_with("| row"));
        }
    }

    #[test]
    fn a_piece_that_fits_is_untouched_and_a_wordless_one_still_advances() {
        let text = "short text";
        let p = piece(text, ChunkType::Paragraph);
        assert_eq!(
            fit_pieces(vec![p.clone()], text, &[], &Words, 16, false),
            vec![p]
        );
        let long = "x".repeat(100);
        #[derive(Debug)]
        struct Chars;
        impl EmbedTokenizer for Chars {
            fn id(&self) -> &str {
                "chars"
            }
            fn count(&self, text: &str) -> usize {
                text.chars().count()
            }
        }
        let parts = fit_pieces(
            vec![piece(&long, ChunkType::Paragraph)],
            &long,
            &[],
            &Chars,
            16,
            false,
        );
        assert!(parts.iter().all(|p| p.own.len() <= 16));
        assert_eq!(parts.iter().map(|p| p.own.len()).sum::<usize>(), 100);
    }

    #[test]
    fn a_repeated_header_too_big_for_the_window_is_not_repeated() {
        // A structural table continuation whose header alone fills most of
        // the window: parts drop it (and are typed text), every part fits.
        let header = format!("| {} |\n|---|\n", vec!["h"; 40].join(" "));
        let mut text = String::new();
        for i in 0..30 {
            text.push_str(&format!("| row {i} a b |\n"));
        }
        let text = text.trim_end().to_owned();
        let mut p = piece(&text, ChunkType::Table);
        p.prefix = Prefix::Text(header.clone());
        let parts = fit_pieces(vec![p], &text, &[], &Words, 60, false);
        assert!(parts.len() >= 3, "{parts:?}");
        for part in &parts {
            assert_eq!(part.prefix, Prefix::None);
            assert_eq!(part.chunk_type, ChunkType::Paragraph);
            assert!(Words.count(&text[part.own.clone()]) <= 60);
        }
    }
}
