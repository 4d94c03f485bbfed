//! Offsets and coverage of chunk spans, for the invariant checks in
//! `invariants`: char offsets of byte positions, the overlap prefix rules by
//! chunk type, and the check that no text falls outside every chunk.

use super::*;

/// Char offset of byte `b`, advancing a (byte, char) cursor when possible.
pub fn char_offset(text: &str, cursor: &mut (usize, u64), b: usize) -> u64 {
    if b >= cursor.0 && text.is_char_boundary(cursor.0) {
        let n = text[cursor.0..b].chars().count() as u64;
        *cursor = (b, cursor.1 + n);
        cursor.1
    } else {
        text[..b].chars().count() as u64
    }
}

pub fn prefix_len_bytes(text: &str, chars: usize) -> Option<usize> {
    if chars == 0 {
        return Some(0);
    }
    text.char_indices()
        .nth(chars)
        .map(|(i, _)| i)
        .or((text.chars().count() == chars).then_some(text.len()))
}

pub fn suffix_len_bytes(text: &str, chars: usize) -> Option<usize> {
    if chars == 0 {
        return Some(0);
    }
    text.char_indices()
        .rev()
        .nth(chars - 1)
        .map(|(i, _)| text.len() - i)
}

pub fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// The first `n` chars of `s`.
pub fn head(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// The prefix rules of docs/contract.md#chunk-record by chunk type.
pub fn check_prefix(
    normalized: &str,
    c: &Chunk,
    bs: usize,
    prefix: &str,
    at: &str,
    v: &mut Vec<String>,
) {
    match c.chunk_type {
        ChunkType::List | ChunkType::Quote => v.push(format!(
            "{at}: {} chunk carries a {}-char prefix",
            c.chunk_type.as_str(),
            c.overlap_prefix_chars
        )),
        ChunkType::Paragraph | ChunkType::Mixed => {
            if !normalized[..bs].ends_with(prefix) {
                v.push(format!(
                    "{at}: overlap prefix {:?} is not the text right before the own span",
                    head(prefix, 40)
                ));
            }
        }
        ChunkType::Code => {
            let lines: Vec<&str> = prefix.split_terminator('\n').collect();
            if !(prefix.ends_with('\n') && lines.len() == 1 && fence_open(lines[0]).is_some()) {
                v.push(format!(
                    "{at}: code prefix {prefix:?} is not one opening fence line"
                ));
            }
        }
        ChunkType::Table => {
            let lines: Vec<&str> = prefix.split_terminator('\n').collect();
            let pipe_rows =
                (1..=2).contains(&lines.len()) && lines.iter().all(|l| is_pipe_row_item(l));
            let ok = prefix.ends_with('\n')
                && (pipe_rows
                    || (lines.len() == 2 && is_delimiter_row(lines[1]) && lines[0].contains('|')));
            if !ok {
                v.push(format!(
                    "{at}: table prefix {:?} is not a header + delimiter row",
                    head(prefix, 60)
                ));
            } else if !normalized[..bs].contains(prefix) {
                v.push(format!(
                    "{at}: repeated table header {:?} does not occur before the piece",
                    head(prefix, 60)
                ));
            }
        }
    }
}

/// Nothing lost: every non-whitespace char lies in an own span or in an
/// exempt range.
pub fn check_nothing_lost(
    text: &str,
    chunks: &[Chunk],
    exempt: &[(usize, usize)],
    v: &mut Vec<String>,
) {
    let mut spans: Vec<(usize, usize)> = chunks
        .iter()
        .map(|c| (c.byte_start as usize, (c.byte_end as usize).min(text.len())))
        .collect();
    spans.extend(exempt_ranges(text));
    spans.extend_from_slice(exempt);
    spans.sort_unstable();
    let mut covered = 0usize;
    let mut lost = 0usize;
    let mut report = |from: usize, to: usize, v: &mut Vec<String>| {
        if let Some(gap) = text.get(from..to) {
            if let Some(off) = gap.find(|c: char| !c.is_whitespace()) {
                lost += 1;
                if lost <= 5 {
                    v.push(format!(
                        "text lost: byte {} ({:?}) is in no chunk",
                        from + off,
                        head(&gap[off..], 40)
                    ));
                }
            }
        }
    };
    for (s, e) in spans {
        if s > covered {
            report(covered, s, v);
        }
        covered = covered.max(e);
    }
    report(covered, text.len(), v);
}
