//! LangChain's recursive split and merge on byte ranges.
//!
//! `split_level` is `_split_text`, `merge` is `_merge_splits` (with
//! `_join_docs`), `pieces_at` is `_split_text_with_regex`, from
//! `langchain-text-splitters` 1.1.3. Lengths are exact token counts of each
//! piece on its own, as LangChain's tiktoken length function gives them.
//! After the port, [`Splitter::split`] re-measures every chunk and cuts one
//! over `chunk_size` into token windows (LangChain would emit it).

use std::collections::VecDeque;
use std::ops::Range;


use super::params::{KeepSeparator, RecursiveParams, Separator, Separators};
use crate::sentence::sentence_spans;
use crate::tokens::{DocumentTokens, TokenCounter};


/// Splits one document's text.
#[derive(Debug)]
pub(crate) struct Splitter<'a> {
    text: &'a str,
    tokens: &'a DocumentTokens<'a>,
    params: &'a RecursiveParams,
    separators: &'a Separators,
}

impl<'a> Splitter<'a> {
    pub fn new(
        tokens: &'a DocumentTokens<'a>,
        params: &'a RecursiveParams,
        separators: &'a Separators,
    ) -> Self {
        Self {
            text: tokens.text(),
            tokens,
            params,
            separators,
        }
    }

    fn len(&self, r: &Range<usize>) -> usize {
        self.tokens.count(r.clone())
    }

    /// Chunk spans of `range`, in order (a span may overlap the previous
    /// one), each at most `chunk_size` tokens.
    pub fn split(&self, range: Range<usize>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        if range.is_empty() {
            return out;
        }
        let all: Vec<usize> = (0..self.separators.list.len()).collect();
        self.split_level(range, &all, &mut out);
        // LangChain sums piece lengths; re-measure each chunk whole and cut
        // one that is over into token windows.
        let max = self.params.chunk_size;
        let mut fitted = Vec::with_capacity(out.len());
        for span in out {
            if !self.tokens.exceeds(span.clone(), max) {
                fitted.push(span);
                continue;
            }
            let mut start = span.start;
            for cut in self.tokens.cut_points(span.clone(), max) {
                fitted.push(start..cut);
                start = cut;
            }
            fitted.push(start..span.end);
        }
        if self.params.stub_tokens > 0 {
            fitted = self.absorb_stubs(fitted);
        }
        fitted
    }

    /// A chunk under `stub_tokens` tokens or of headings only: it carries
    /// (almost) nothing to retrieve and takes a result slot.
    fn is_stub(&self, span: &Range<usize>) -> bool {
        let text = &self.text[span.clone()];
        let headings_only = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| is_atx_heading(l.trim_start()));
        headings_only || !self.tokens.exceeds(span.clone(), self.params.stub_tokens - 1)
    }

    /// Stubs join the next chunk when the size allows, else the previous
    /// one, else take the next chunk's first tokens with them (a window that
    /// overlaps it). A stub with no neighbour (the whole document) stays.
    fn absorb_stubs(&self, mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
        let max = self.params.chunk_size;
        let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
        for i in 0..spans.len() {
            let span = spans[i].clone();
            if !self.is_stub(&span) {
                out.push(span);
                continue;
            }
            if let Some(next) = spans.get(i + 1) {
                let merged = span.start..next.end.max(span.end);
                if !self.tokens.exceeds(merged.clone(), max) {
                    spans[i + 1] = merged;
                    continue;
                }
            }
            if let Some(prev) = out.last_mut() {
                let merged = prev.start..span.end.max(prev.end);
                if !self.tokens.exceeds(merged.clone(), max) {
                    *prev = merged;
                    continue;
                }
            }
            if let Some(next) = spans.get(i + 1) {
                let window = span.start..next.end.max(span.end);
                if let Some(&cut) = self.tokens.cut_points(window.clone(), max).first() {
                    let end = span.start + self.text[span.start..cut].trim_end().len();
                    out.push(span.start..end.max(span.end));
                    continue;
                }
            }
            out.push(span);
        }
        out
    }

    /// `_split_text(text, separators)`.
    fn split_level(&self, range: Range<usize>, seps: &[usize], out: &mut Vec<Range<usize>>) {
        let text = &self.text[range.clone()];
        let mut chosen = *seps.last().unwrap_or(&0);
        let mut rest: &[usize] = &[];
        // The sentences found while looking for a separator, kept for the split.
        let mut sentences = None;
        for (i, &s) in seps.iter().enumerate() {
            let found = match &self.separators.list[s] {
                Separator::Chars => {
                    chosen = s;
                    break;
                }
                Separator::Literal(l) => text.contains(l.as_str()),
                Separator::Pattern(re) => re.is_match(text),
                Separator::Sentences => {
                    let spans = sentence_spans(text);
                    let several = spans.len() > 1;
                    sentences = Some(spans);
                    several
                }
            };
            if found {
                chosen = s;
                rest = &seps[i + 1..];
                break;
            }
        }
        let pieces = self.pieces_at(range, chosen, sentences);
        let joiner_len = match (self.params.keep_separator, &self.separators.list[chosen]) {
            // Sentences keep their own whitespace: nothing is re-inserted.
            (_, Separator::Sentences) => 0,
            (KeepSeparator::No, _) => self.tokens.counter().count(&self.separators.raw[chosen]),
            _ => 0,
        };
        let mut good: Vec<(Range<usize>, usize)> = Vec::new();
        for piece in pieces {
            let n = self.len(&piece);
            if n < self.params.chunk_size {
                good.push((piece, n));
            } else {
                if !good.is_empty() {
                    self.merge(&std::mem::take(&mut good), joiner_len, out);
                }
                if rest.is_empty() {
                    out.push(piece);
                } else {
                    self.split_level(piece, rest, out);
                }
            }
        }
        if !good.is_empty() {
            self.merge(&good, joiner_len, out);
        }
    }

    /// `_split_text_with_regex`: the pieces of `range` at separator `s`,
    /// the separator kept where `keep_separator` says, empty pieces dropped;
    /// `sentences` are the sentence spans of `range` if already found.
    fn pieces_at(
        &self,
        range: Range<usize>,
        s: usize,
        sentences: Option<Vec<Range<usize>>>,
    ) -> Vec<Range<usize>> {
        let base = range.start;
        let text = &self.text[range.clone()];
        let matches: Vec<Range<usize>> = match &self.separators.list[s] {
            Separator::Chars => {
                return text
                    .char_indices()
                    .map(|(i, c)| base + i..base + i + c.len_utf8())
                    .collect()
            }
            // Sentences partition the text whatever `keep_separator` says:
            // the end punctuation stays with its sentence.
            Separator::Sentences => {
                return sentences
                    .unwrap_or_else(|| sentence_spans(text))
                    .into_iter()
                    .map(|r| base + r.start..base + r.end)
                    .collect()
            }
            Separator::Literal(l) => text
                .match_indices(l.as_str())
                .map(|(i, m)| base + i..base + i + m.len())
                .collect(),
            Separator::Pattern(re) => re
                .find_iter(text)
                .map(|m| base + m.start()..base + m.end())
                .collect(),
        };
        let mut pieces = Vec::with_capacity(matches.len() + 1);
        let mut at = range.start;
        for m in &matches {
            match self.params.keep_separator {
                KeepSeparator::Start => {
                    pieces.push(at..m.start);
                    at = m.start;
                }
                KeepSeparator::End => {
                    pieces.push(at..m.end);
                    at = m.end;
                }
                KeepSeparator::No => {
                    pieces.push(at..m.start);
                    at = m.end;
                }
            }
        }
        pieces.push(at..range.end);
        pieces.retain(|p| !p.is_empty());
        pieces
    }

    /// `_merge_splits(splits, separator)` with `_join_docs`: greedy merge
    /// under `chunk_size`, keeping up to `chunk_overlap` tokens of trailing
    /// pieces for the next chunk.
    fn merge(&self, splits: &[(Range<usize>, usize)], joiner: usize, out: &mut Vec<Range<usize>>) {
        let size = self.params.chunk_size;
        let overlap = self.params.chunk_overlap;
        let mut current: VecDeque<&(Range<usize>, usize)> = VecDeque::new();
        let mut total = 0usize;
        for d in splits {
            let n = d.1;
            let sep = if current.is_empty() { 0 } else { joiner };
            if total + n + sep > size && !current.is_empty() {
                self.join(&current, out);
                while let Some(first) = current.front() {
                    if !(total > overlap || (total + n + joiner > size && total > 0)) {
                        break;
                    }
                    let dropped = first.1 + if current.len() > 1 { joiner } else { 0 };
                    total = total.saturating_sub(dropped);
                    current.pop_front();
                }
            }
            current.push_back(d);
            total += n + if current.len() > 1 { joiner } else { 0 };
        }
        self.join(&current, out);
    }

    /// `_join_docs`: the span from the first piece to the last, stripped;
    /// nothing when it is only whitespace.
    fn join(&self, current: &VecDeque<&(Range<usize>, usize)>, out: &mut Vec<Range<usize>>) {
        let (Some(first), Some(last)) = (current.front(), current.back()) else {
            return;
        };
        let span = first.0.start..last.0.end;
        let s = &self.text[span.clone()];
        let (start, end) = if self.params.strip_whitespace {
            let lead = s.len() - s.trim_start().len();
            let trail = s.len() - s.trim_end().len();
            (span.start + lead, span.end - trail)
        } else {
            (span.start, span.end)
        };
        if start < end && !self.text[start..end].trim().is_empty() {
            out.push(start..end);
        }
    }
}

/// An ATX heading line: 1-6 `#` then a space, a tab or the line's end.
fn is_atx_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && matches!(line.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::strategy::params::Params;
    use crate::tokens::TokenizerKind;

    fn params(size: usize, overlap: usize) -> RecursiveParams {
        let t = toml::Table::new();
        let mut p = RecursiveParams::parse(&Params::new(&t, "params"), 1000, 200).unwrap();
        p.chunk_size = size;
        p.chunk_overlap = overlap;
        p
    }

    fn split(text: &str, p: &RecursiveParams) -> Vec<String> {
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), text);
        let seps = Separators::compile(p).unwrap();
        Splitter::new(&tokens, p, &seps)
            .split(0..text.len())
            .into_iter()
            .map(|r| text[r].to_owned())
            .collect()
    }

    #[test]
    fn pieces_merge_up_to_the_size_and_keep_the_separator_at_the_start() {
        // Each word is one token; with size 3 and no overlap, three words a chunk.
        let p = params(3, 0);
        assert_eq!(
            split("a b c d e f g", &p),
            ["a b c", "d e f", "g"],
            "LangChain: separator ' ' kept at the start of the next piece"
        );
    }

    #[test]
    fn overlap_keeps_trailing_pieces_within_the_overlap_budget() {
        let p = params(4, 2);
        assert_eq!(split("a b c d e f g", &p), ["a b c d", "c d e f", "e f g"]);
    }

    #[test]
    fn paragraphs_are_tried_before_lines_and_words() {
        let p = params(6, 0);
        let text = "one two three\nfour five\n\nsix seven";
        assert_eq!(split(text, &p), ["one two three\nfour five", "six seven"]);
    }

    #[test]
    fn the_sentence_separator_keeps_end_punctuation_with_its_sentence() {
        // Four sentences of 5-6 tokens; size 14 holds two of them, never a
        // sentence cut in the middle, and no chunk starts with ". ".
        let mut p = params(14, 0);
        p.separators = vec!["\n\n".into(), "<sentence>".into(), " ".into(), "".into()];
        let text = "The cat sat down. It was late. Dogs bark at night. Birds sing at dawn.";
        let chunks = split(text, &p);
        assert_eq!(
            chunks,
            ["The cat sat down. It was late.", "Dogs bark at night. Birds sing at dawn."]
        );
        // With ". " as a literal separator the punctuation moves to the next chunk.
        p.separators = vec!["\n\n".into(), ". ".into(), " ".into(), "".into()];
        assert!(split(text, &p).iter().any(|c| c.starts_with('.')));
    }

    fn count(text: &str) -> usize {
        TokenizerKind::Cl100kBase.counter().count(text)
    }

    #[test]
    fn a_heading_alone_takes_the_start_of_its_section_with_it() {
        let mut p = params(12, 0);
        p.separators = vec!["\n## ".into(), "\n\n".into(), " ".into(), "".into()];
        let body: Vec<String> = (0..30).map(|i| format!("w{i}")).collect();
        let text = format!("## Design Details\n## Part one\n{}", body.join(" "));
        // LangChain's merge leaves the first heading alone: the section after
        // it is too big to join.
        let plain = split(&text, &p);
        assert_eq!(plain[0], "## Design Details", "{plain:?}");
        p.stub_tokens = 8;
        let chunks = split(&text, &p);
        assert!(chunks[0].starts_with("## Design Details\n## Part one\nw0"), "{chunks:?}");
        for c in &chunks {
            assert!(count(c) <= 12, "{c:?}");
            assert!(c.lines().any(|l| !l.starts_with('#')), "headings only: {c:?}");
        }
        // Nothing is lost: the last word is still in the last chunk.
        assert!(chunks.last().unwrap().ends_with("w29"));
    }

    #[test]
    fn a_stub_at_the_end_joins_the_previous_chunk() {
        let mut p = params(10, 0);
        p.stub_tokens = 8;
        let text = "a b c d e f g h i j k l m n\n\nend";
        let chunks = split(text, &p);
        assert_ne!(chunks.last().unwrap().as_str(), "end", "{chunks:?}");
        assert!(chunks.last().unwrap().ends_with("n\n\nend"), "{chunks:?}");
        p.stub_tokens = 0;
        assert_eq!(split(text, &p).last().unwrap().as_str(), "end");
    }

    #[test]
    fn atx_headings_are_recognised() {
        for yes in ["# A", "###### A", "##", "## \tA"] {
            assert!(is_atx_heading(yes), "{yes}");
        }
        for no in ["####### A", "#A", "text # A", ""] {
            assert!(!is_atx_heading(no), "{no}");
        }
    }

    #[test]
    fn a_chunk_is_never_over_the_size_even_where_langchain_would_emit_one() {
        // No separator at all but characters: LangChain measures characters
        // one by one (1 token each) and joins many of them; joined they may
        // count differently. Ours re-measures.
        let p = params(100, 0);
        let text = "x".repeat(5000);
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
        for c in split(&text, &p) {
            assert!(tokens.counter().count(&c) <= 100);
        }
    }
}
