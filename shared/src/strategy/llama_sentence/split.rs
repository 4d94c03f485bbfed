//! `SentenceSplitter._split` and `_merge` of llama-index-core 0.14.25
//! (`llama_index/core/node_parser/text/sentence.py`,
//! `scripts/peers/ADAPTERS.md` section 4) on byte ranges of the text: every
//! piece is a range, pieces concatenate to the text they came from, and a
//! chunk is the range from its first piece to its last, stripped of
//! Python whitespace.

use std::collections::VecDeque;
use std::ops::Range;

use regex::Regex;

use crate::sentence::punkt::Punkt;
use crate::strategy::pystr::py_isspace;
use crate::tokens::{Bpe, TokenCounter, TokenizerKind};

/// Token counts as LlamaIndex's tokenizer gives them:
/// `encode(text, allowed_special="all")`, so the spelling of a special
/// token (`<|endoftext|>`) is that one token, never an error.
#[derive(Debug, Clone, Copy)]
pub struct LlamaTokens {
    bpe: Bpe,
}

impl LlamaTokens {
    /// Counts with `kind` (LlamaIndex's default is `cl100k_base`).
    pub fn new(kind: TokenizerKind) -> Self {
        Self { bpe: kind.counter() }
    }

    fn specials(&self) -> &'static [&'static str] {
        match self.bpe.kind() {
            TokenizerKind::Cl100kBase => &[
                "<|endoftext|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
                "<|endofprompt|>",
            ],
            TokenizerKind::O200kBase => &["<|endoftext|>", "<|endofprompt|>"],
        }
    }

    /// `len(tokenizer(text))`. Every special token starts with `<|`: the
    /// leftmost one is found by scanning those, in one pass.
    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        let mut from = 0;
        let mut at = 0;
        while let Some(i) = text[at..].find("<|") {
            let p = at + i;
            match self.specials().iter().find(|s| text[p..].starts_with(**s)) {
                Some(s) => {
                    n += self.bpe.count(&text[from..p]) + 1;
                    from = p + s.len();
                    at = from;
                }
                None => at = p + 2,
            }
        }
        n + self.bpe.count(&text[from..])
    }
}

/// One piece of the text (`_Split`): its range, whether it is a whole
/// sentence (or paragraph), its token count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The piece's byte range in the text.
    pub range: Range<usize>,
    /// Made by the paragraph or sentence splitter (`is_sentence`).
    pub is_sentence: bool,
    /// Its tokens, counted alone.
    pub tokens: usize,
}

/// A configured `SentenceSplitter`.
#[derive(Debug, Clone)]
pub struct SentenceSplitter {
    /// Tokens a chunk holds at most (`chunk_size`).
    pub chunk_size: usize,
    /// Tokens of whole pieces carried into the next chunk (`chunk_overlap`).
    pub chunk_overlap: usize,
    /// The word separator (`separator`).
    pub separator: String,
    /// The paragraph separator (`paragraph_separator`).
    pub paragraph_separator: String,
    /// The sub-sentence pattern (`secondary_chunking_regex`).
    pub secondary: Regex,
    /// The sentence tokenizer (untrained Punkt).
    pub punkt: Punkt,
    /// The token counter.
    pub tokens: LlamaTokens,
}

/// `split_text_keep_separator(text, sep)`: `text.split(sep)`, the separator
/// put back at the start of every part but the first, empty parts dropped.
/// `sep` is never empty (refused when configured).
pub fn split_keep_separator(text: &str, sep: &str) -> Vec<Range<usize>> {
    let mut cuts: Vec<usize> = text.match_indices(sep).map(|(i, _)| i).collect();
    cuts.push(text.len());
    let mut out = Vec::with_capacity(cuts.len());
    let mut from = 0;
    for to in cuts {
        if to > from {
            out.push(from..to);
        }
        from = to;
    }
    out
}

/// What [`SentenceSplitter::pieces`] yields to do next.
enum Work {
    Emit(Split),
    Divide(Range<usize>),
}

impl SentenceSplitter {
    /// `re.findall(secondary_chunking_regex, text)` as ranges. The default
    /// pattern covers every character; with one that does not, text
    /// between matches joins the match after it (the last match takes the
    /// tail), where Python drops it.
    fn secondary_pieces(&self, text: &str) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        let mut from = 0;
        for m in self.secondary.find_iter(text) {
            if m.end() > m.start() {
                out.push(from..m.end());
                from = m.end();
            }
        }
        if let Some(last) = out.last_mut() {
            last.end = text.len();
        }
        out
    }

    /// `_get_splits_by_fns`: the first of paragraphs and sentences giving
    /// more than one piece (`is_sentence`); otherwise the first of the
    /// secondary pattern, words and characters that does (else the
    /// characters). Ranges are of `text`.
    fn split_by_fns(&self, text: &str) -> (Vec<Range<usize>>, bool) {
        let paragraphs = split_keep_separator(text, &self.paragraph_separator);
        if paragraphs.len() > 1 {
            return (paragraphs, true);
        }
        let sentences = self.punkt.sentence_pieces(text);
        if sentences.len() > 1 {
            return (sentences, true);
        }
        let secondary = self.secondary_pieces(text);
        if secondary.len() > 1 {
            return (secondary, false);
        }
        let words = split_keep_separator(text, &self.separator);
        if words.len() > 1 {
            return (words, false);
        }
        let chars = text
            .char_indices()
            .map(|(i, c)| i..i + c.len_utf8())
            .collect();
        (chars, false)
    }

    /// `_split(text, chunk_size)`: the text whole if it fits, else its
    /// pieces, each one that does not fit split again (a piece that cannot
    /// be split further is kept as it is). Iterative: no recursion depth
    /// to exhaust.
    pub fn pieces(&self, text: &str) -> Vec<Split> {
        let whole = self.tokens.count(text);
        if whole <= self.chunk_size {
            return vec![Split {
                range: 0..text.len(),
                is_sentence: true,
                tokens: whole,
            }];
        }
        let mut out = Vec::new();
        let mut stack = vec![Work::Divide(0..text.len())];
        while let Some(work) = stack.pop() {
            let range = match work {
                Work::Emit(split) => {
                    out.push(split);
                    continue;
                }
                Work::Divide(range) => range,
            };
            let base = range.start;
            let (parts, is_sentence) = self.split_by_fns(&text[range]);
            let single = parts.len() == 1;
            for part in parts.into_iter().rev() {
                let part = base + part.start..base + part.end;
                let tokens = self.tokens.count(&text[part.clone()]);
                stack.push(if tokens <= self.chunk_size || single {
                    Work::Emit(Split {
                        range: part,
                        is_sentence,
                        tokens,
                    })
                } else {
                    Work::Divide(part)
                });
            }
        }
        out
    }

    /// `_merge` and `_postprocess_chunks`: the chunks' byte ranges, stripped
    /// of (Python) whitespace, whitespace-only chunks left out. A piece
    /// over the chunk size (one character of more tokens than it, where
    /// LlamaIndex raises "Single token exceeded chunk size") is a chunk of
    /// its own.
    pub fn merge(&self, text: &str, splits: &[Split]) -> Vec<Range<usize>> {
        let size = self.chunk_size;
        let mut chunks: Vec<Range<usize>> = Vec::new();
        let mut cur: VecDeque<(Range<usize>, usize)> = VecDeque::new();
        let mut cur_len = 0usize;
        let mut new_chunk = true;
        let joined = |cur: &VecDeque<(Range<usize>, usize)>| match (cur.front(), cur.back()) {
            (Some(a), Some(b)) => a.0.start..b.0.end,
            _ => 0..0,
        };
        let mut k = 0;
        while let Some(split) = splits.get(k) {
            if cur_len + split.tokens > size && !new_chunk {
                // close_chunk, then overlap: whole pieces from the end while
                // they fit `chunk_overlap`.
                chunks.push(joined(&cur));
                let last = std::mem::take(&mut cur);
                cur_len = 0;
                new_chunk = true;
                for piece in last.into_iter().rev() {
                    if cur_len + piece.1 > self.chunk_overlap {
                        break;
                    }
                    cur_len += piece.1;
                    cur.push_front(piece);
                }
                continue;
            }
            if new_chunk && cur_len + split.tokens > size {
                while cur_len + split.tokens > size {
                    let Some((_, n)) = cur.pop_front() else {
                        break;
                    };
                    cur_len -= n;
                }
            }
            // `is_sentence or fits or new_chunk`: the alternative (close
            // the chunk) is unreachable, as a split that does not fit a
            // chunk that is not new closed it above.
            cur_len += split.tokens;
            cur.push_back((split.range.clone(), split.tokens));
            k += 1;
            new_chunk = false;
        }
        if !new_chunk {
            chunks.push(joined(&cur));
        }
        chunks
            .into_iter()
            .filter_map(|r| strip(text, r))
            .collect()
    }

    /// The chunks of `text` (`split_text`): stripped byte ranges, in order.
    pub fn split_text(&self, text: &str) -> Vec<Range<usize>> {
        if text.is_empty() {
            return Vec::new();
        }
        let splits = self.pieces(text);
        self.merge(text, &splits)
    }
}

/// `range` of `text` without its leading and trailing Python whitespace;
/// `None` when nothing is left.
pub fn strip(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let s = text.get(range.clone())?;
    let start = range.start + (s.len() - s.trim_start_matches(py_isspace).len());
    let end = range.start + s.trim_end_matches(py_isspace).len();
    (start < end).then_some(start..end)
}
