//! Exact BPE token counting (`cl100k_base`, `o200k_base`).
//!
//! [`TokenCounter`] is the one-method sizer the chunker is written against.
//! [`DocumentTokens`] counts a whole normalized document once and then answers
//! the exact token count of any byte range of it cheaply, so packing never
//! re-tokenizes the same text again and again.

use std::ops::Range;

/// The tokenizers a profile may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    /// OpenAI `cl100k_base` (GPT-4, text-embedding-3-*).
    Cl100kBase,
    /// OpenAI `o200k_base` (GPT-4o family).
    O200kBase,
}

impl TokenizerKind {
    /// The canonical name, as stored in chunk records (`cl100k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Cl100kBase => "cl100k_base",
            Self::O200kBase => "o200k_base",
        }
    }

    /// Every tokenizer, for error messages.
    pub const ALL: [TokenizerKind; 2] = [Self::Cl100kBase, Self::O200kBase];

    /// Parses a canonical name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The counter for this tokenizer.
    pub fn counter(self) -> Bpe {
        Bpe { kind: self }
    }
}

/// Something that sizes text in tokens.
pub trait TokenCounter: Send + Sync {
    /// The tokenizer's canonical name (`cl100k_base`).
    fn name(&self) -> &'static str;
    /// The exact number of tokens of `text`.
    fn count(&self, text: &str) -> usize;
}

/// Exact OpenAI BPE counts through the `bpe-openai` crate.
#[derive(Debug, Clone, Copy)]
pub struct Bpe {
    kind: TokenizerKind,
}

impl Bpe {
    fn tokenizer(&self) -> &'static bpe_openai::Tokenizer {
        match self.kind {
            TokenizerKind::Cl100kBase => bpe_openai::cl100k_base(),
            TokenizerKind::O200kBase => bpe_openai::o200k_base(),
        }
    }

    /// The tokenizer this counter uses.
    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }
}

impl TokenCounter for Bpe {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn count(&self, text: &str) -> usize {
        self.tokenizer().count(text)
    }
}

/// Token counts of one document, counted once, answering exact counts of any
/// byte range of it.
#[derive(Debug)]
pub struct DocumentTokens<'a> {
    counter: Bpe,
    text: &'a str,
}

impl<'a> DocumentTokens<'a> {
    /// Counts `text` once with `counter`.
    pub fn new(counter: Bpe, text: &'a str) -> Self {
        Self { counter, text }
    }

    /// The document these counts are for.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The counter in use.
    pub fn counter(&self) -> Bpe {
        self.counter
    }

    /// The exact token count of `text[range]`, equal to counting that
    /// substring on its own. `range` must lie on char boundaries.
    pub fn count(&self, range: Range<usize>) -> usize {
        self.counter.count(&self.text[range])
    }

    /// Cut points that split `range` into consecutive parts of at most
    /// `max_tokens` tokens each (exact counts), greedily as long as possible.
    /// Returns the interior cut offsets (ascending, on char boundaries,
    /// strictly inside `range`); an empty vector means `range` already fits.
    /// Cuts fall on pretokenizer piece boundaries (word starts) where possible.
    pub fn cut_points(&self, range: Range<usize>, max_tokens: usize) -> Vec<usize> {
        let mut cuts = Vec::new();
        let mut start = range.start;
        while self.count(start..range.end) > max_tokens {
            // Largest end such that start..end fits; binary search over char boundaries.
            let (mut lo, mut hi) = (start, range.end);
            while lo < hi {
                let mid = ceil_char_boundary(self.text, lo + (hi - lo).div_ceil(2));
                if mid >= hi {
                    break;
                }
                if self.count(start..mid) <= max_tokens {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let mut end = lo;
            if end <= start {
                // Even one char exceeds max_tokens (impossible for max >= 1): take one char.
                end = ceil_char_boundary(self.text, start + 1);
            }
            // Prefer a word start: back up to the last whitespace-preceded position.
            if let Some(ws) = self.text[start..end].rfind(char::is_whitespace) {
                let cand = start + ws + 1;
                if cand > start + (end - start) / 2 && cand < end {
                    end = cand;
                }
            }
            cuts.push(end);
            start = end;
        }
        cuts
    }

    /// The smallest start `p >= floor` such that `text[p..end]` has at most
    /// `tokens` tokens, on a char boundary.
    pub fn tail_start(&self, floor: usize, end: usize, tokens: usize) -> usize {
        let (mut lo, mut hi) = (floor, end);
        while lo < hi {
            let mid = floor_char_boundary(self.text, lo + (hi - lo) / 2);
            let mid = if mid <= lo {
                ceil_char_boundary(self.text, lo + 1).min(hi)
            } else {
                mid
            };
            if self.count(mid..end) <= tokens {
                hi = mid;
            } else {
                lo = ceil_char_boundary(self.text, mid + 1).min(hi);
                if lo == mid {
                    break;
                }
            }
        }
        hi
    }
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
