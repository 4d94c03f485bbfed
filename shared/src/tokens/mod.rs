//! Exact BPE token counting (`cl100k_base`, `o200k_base`).
//!
//! [`TokenCounter`] is the one-method sizer the chunker is written against;
//! [`Bpe`] counts through the `bpe-openai` crate. [`DocumentTokens`]
//! (`document.rs`) counts a whole normalized document once and then answers
//! the exact token count of any byte range of it cheaply; `index.rs` keeps
//! its pieces, `cache.rs` the counts of short pieces across documents,
//! `pretokenize.rs` a fast cl100k pretokenizer.

mod cache;
mod document;
mod index;
mod pretokenize;
#[cfg(test)]
mod tests;

use std::cell::RefCell;

use std::sync::OnceLock;

use cache::Encoder;
pub use cache::PieceCache;
pub use document::DocumentTokens;

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

    /// The pretokenizer pieces of `text`, exactly as bpe-openai splits it
    /// (cl100k_base takes a faster path for ASCII text; see `pretokenize`).
    pub fn pieces<'t>(&self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        let tokenizer = self.tokenizer();
        // Either splitter without a box: a document's range counts call
        // this once or twice each (issue 18: an allocation per call).
        match self.kind {
            TokenizerKind::Cl100kBase => {
                Pieces::Cl100k(pretokenize::cl100k_pieces(text, tokenizer))
            }
            TokenizerKind::O200kBase => Pieces::O200k(tokenizer.split(text)),
        }
    }

    /// Where each token of `text`'s encoding ends (byte offsets, ascending;
    /// the last is `text.len()`): the ordinary encoding, as tiktoken's
    /// `encode(text, disallowed_special=())` gives it. An offset may fall
    /// inside a character (a token holding part of one).
    pub fn token_ends(&self, text: &str) -> Vec<usize> {
        let tokenizer = self.tokenizer();
        let mut at = 0;
        tokenizer
            .encode(text)
            .into_iter()
            .map(|id| {
                at += tokenizer.bpe.token_len(id);
                at
            })
            .collect()
    }

    /// The tokenizer this counter uses.
    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// The length in bytes of the longest token in the vocabulary; no piece
    /// of `n` bytes encodes to fewer than `n / max_token_len()` tokens.
    pub fn max_token_len(&self) -> usize {
        static CL100K: OnceLock<usize> = OnceLock::new();
        static O200K: OnceLock<usize> = OnceLock::new();
        let cell = match self.kind {
            TokenizerKind::Cl100kBase => &CL100K,
            TokenizerKind::O200kBase => &O200K,
        };
        *cell.get_or_init(|| {
            let bpe = &self.tokenizer().bpe;
            (0..bpe.num_tokens())
                .filter_map(|id| u32::try_from(id).ok())
                .map(|id| bpe.token_len(id))
                .max()
                .unwrap_or(1)
        })
    }
}

impl TokenCounter for Bpe {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Counts piece by piece; the counts of short pieces are remembered per
    /// thread (a [`PieceCache`], as the document index keeps): text counted
    /// outside a document's index (breadcrumbs, window and overlap probes)
    /// repeats its words, and the encoder costs microseconds per call. The
    /// cache is borrowed once per text, not once per piece.
    fn count(&self, text: &str) -> usize {
        self.with_cache(|mut cache, encoder| {
            let mut one = |piece: &str| count_piece(cache.as_deref_mut(), encoder, piece);
            // The pieces without `pieces`' box: this runs for every short
            // text (breadcrumbs, probes).
            let tokenizer = self.tokenizer();
            match self.kind {
                TokenizerKind::Cl100kBase => pretokenize::cl100k_pieces(text, tokenizer)
                    .map(&mut one)
                    .sum(),
                TokenizerKind::O200kBase => tokenizer.split(text).map(&mut one).sum(),
            }
        })
    }
}

impl Bpe {
    /// The BPE count of one pretokenizer piece (cached as in `count`).
    fn piece_count(&self, piece: &str) -> usize {
        self.with_cache(|cache, encoder| count_piece(cache, encoder, piece))
    }

    /// Runs `f` with this thread's piece cache for this tokenizer (`None`
    /// if it is already borrowed, which never happens in practice) and the
    /// encoder.
    fn with_cache<R>(&self, f: impl FnOnce(Option<&mut PieceCache>, Encoder) -> R) -> R {
        thread_local! {
            static CACHES: RefCell<[PieceCache; 2]> = RefCell::new([
                PieceCache::new(TokenizerKind::Cl100kBase),
                PieceCache::new(TokenizerKind::O200kBase),
            ]);
        }
        let encoder = Encoder::of(*self);
        let slot = match self.kind {
            TokenizerKind::Cl100kBase => 0,
            TokenizerKind::O200kBase => 1,
        };
        CACHES.with(|caches| match caches.try_borrow_mut() {
            Ok(mut caches) => {
                let cache = &mut caches[slot];
                cache.retarget(self.kind);
                f(Some(cache), encoder)
            }
            Err(_) => f(None, encoder),
        })
    }
}

/// The pieces of one of the two splitters ([`Bpe::pieces`]).
enum Pieces<A, B> {
    Cl100k(A),
    O200k(B),
}

impl<'t, A, B> Iterator for Pieces<A, B>
where
    A: Iterator<Item = &'t str>,
    B: Iterator<Item = &'t str>,
{
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        match self {
            Self::Cl100k(pieces) => pieces.next(),
            Self::O200k(pieces) => pieces.next(),
        }
    }
}

/// The count of one piece, through `cache` when there is one.
fn count_piece(cache: Option<&mut PieceCache>, encoder: Encoder, piece: &str) -> usize {
    match cache {
        Some(cache) => cache.count(piece, || encoder.count(piece)),
        None => encoder.count(piece),
    }
}
/// The first char boundary at or after `i` (`s.len()` past the end).
pub(crate) fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The last char boundary at or before `i` (`s.len()` past the end).
pub(crate) fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
