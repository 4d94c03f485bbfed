//! Exact BPE token counting (`cl100k_base`, `o200k_base`).
//!
//! [`TokenCounter`] is the one-method sizer the chunker is written against.
//! [`DocumentTokens`] counts a whole normalized document once and then answers
//! the exact token count of any byte range of it cheaply, so packing never
//! re-tokenizes the same text again and again.
//!
//! # How a range is counted exactly
//!
//! The pretokenizer (`Tokenizer::split`) walks the text with an anchored
//! regex: each piece is the preferred match at the previous piece's end, and
//! that match depends only on the text from that point on (the regexes have
//! no look-behind; the one-character look-ahead of `\s+(?!\S)` is emulated by
//! matching one more character and dropping it). The BPE count of the text is
//! the sum of the BPE counts of its pieces.
//!
//! Cutting the text off at byte `b` changes the match at a piece start `d`
//! only in two ways: a match that reached past `b` disappears, and `\s+$`
//! gains a match at `b` when `text[d..b]` is all whitespace. Every pattern
//! involved is a plain regex whose matches of length `L` depend only on the
//! first `L` bytes, and leftmost-first preference among the surviving matches
//! is unchanged, so a document piece `[d, e)` stays a piece of `text[d..b]`
//! whenever (1) its match, including any dropped look-ahead character, ends
//! by `b`, and (2) `text[d..b]` holds a non-whitespace character.
//!
//! [`DocumentTokens::new`] pretokenizes and counts the whole document once
//! and keeps a compact `PieceIndex` (piece starts as a bitmap plus one byte
//! of count per piece). [`DocumentTokens::count`] of `a..b` then:
//! 1. picks a tail anchor `t`: the last document boundary at or before `p`,
//!    the end of the range with its trailing whitespace trimmed off. Every
//!    document piece `[d, e)` that starts before `t` has `e <= t <= p`, and
//!    `text[p - 1]` is not whitespace, so `text[d..b]` holds a non-whitespace
//!    character (2). A piece whose match carries a dropped look-ahead
//!    character is all whitespace, so it cannot end at `p`; it ends before
//!    `p` and its look-ahead character still lies inside the range (1);
//!    every other piece's match is the piece itself, which ends by `b` (1);
//! 2. splits `text[a..b]` itself from `a` until one of its own piece ends is
//!    a document boundary `x <= t` (usually after one or two pieces; at once
//!    when `a` is a boundary). From `x` the substring's pieces are the
//!    document's pieces (by the argument above) up to `t`, so their counts
//!    come from the index as `tokens_before(t) - tokens_before(x)`;
//! 3. counts `text[t..b]` directly: the substring's pieces from `t` on are
//!    exactly the pieces of `text[t..b]`, because splitting from a piece start
//!    only ever looks forward.
//!
//! If the split from `a` passes `t` without meeting a document boundary (a
//! short range, or one starting inside a very long piece), the split simply
//! runs on to `b`, which is the direct count. Either way the answer equals
//! `Bpe::count(&text[a..b])`.

mod cache;
mod index;
mod pretokenize;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::ops::Range;

use std::sync::OnceLock;

pub use cache::PieceCache;
use cache::Probe;
use index::PieceIndex;

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
    pub fn pieces<'t>(&self, text: &'t str) -> Box<dyn Iterator<Item = &'t str> + 't> {
        let tokenizer = self.tokenizer();
        match self.kind {
            TokenizerKind::Cl100kBase => Box::new(pretokenize::cl100k_pieces(text, tokenizer)),
            TokenizerKind::O200kBase => Box::new(tokenizer.split(text)),
        }
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
        self.with_cache(|mut cache, bpe| {
            let mut one = |piece: &str| count_piece(cache.as_deref_mut(), bpe, piece);
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
        self.with_cache(|cache, bpe| count_piece(cache, bpe, piece))
    }

    /// Runs `f` with this thread's piece cache for this tokenizer (`None`
    /// if it is already borrowed, which never happens in practice) and the
    /// encoder.
    fn with_cache<R>(
        &self,
        f: impl FnOnce(Option<&mut PieceCache>, &bpe_openai::byte_pair_encoding::BytePairEncoding) -> R,
    ) -> R {
        thread_local! {
            static CACHES: RefCell<[PieceCache; 2]> = RefCell::new([
                PieceCache::new(TokenizerKind::Cl100kBase),
                PieceCache::new(TokenizerKind::O200kBase),
            ]);
        }
        let bpe = &self.tokenizer().bpe;
        let slot = match self.kind {
            TokenizerKind::Cl100kBase => 0,
            TokenizerKind::O200kBase => 1,
        };
        CACHES.with(|caches| match caches.try_borrow_mut() {
            Ok(mut caches) => {
                let cache = &mut caches[slot];
                cache.retarget(self.kind);
                f(Some(cache), bpe)
            }
            Err(_) => f(None, bpe),
        })
    }
}

/// The piece index of `text`, counting the pieces `cache` does not know in
/// batches of [`MISS_BATCH_PIECES`] pieces. `None` when the text is too long
/// for the index (or, defensively, when the pieces do not cover the text).
fn index_pieces(counter: Bpe, text: &str, cache: &mut PieceCache) -> Option<PieceIndex> {
    let bpe = &counter.tokenizer().bpe;
    let mut index = PieceIndex::with_len(text.len())?;
    let mut batch = MissBatch::default();
    let mut covered = 0usize;
    for piece in counter.pieces(text) {
        batch.push(covered, piece, cache);
        covered += piece.len();
        if batch.starts.len() == MISS_BATCH_PIECES {
            batch.flush(bpe, cache, &mut index)?;
        }
    }
    batch.flush(bpe, cache, &mut index)?;
    // The pretokenizer always covers the whole text (every character
    // matches some alternative); if it ever did not, the index would be
    // wrong, so drop it and count directly instead.
    (covered == text.len()).then_some(())?;
    index.finish()
}

/// Pieces on their way into a [`PieceIndex`]: their starts and counts (0
/// until known), the pieces the cache did not know (to count), and repeats
/// of those within the batch (pending: read back once counted).
#[derive(Default)]
struct MissBatch<'t> {
    starts: Vec<usize>,
    counts: Vec<usize>,
    new: Vec<(usize, &'t str)>,
    pending: Vec<(usize, &'t str)>,
}

impl<'t> MissBatch<'t> {
    fn push(&mut self, start: usize, piece: &'t str, cache: &mut PieceCache) {
        let slot = self.starts.len();
        self.starts.push(start);
        self.counts.push(match cache.probe(piece) {
            Probe::Known(c) => c,
            Probe::New => {
                self.new.push((slot, piece));
                0
            }
            Probe::Pending => {
                self.pending.push((slot, piece));
                0
            }
        });
    }

    /// Counts the new pieces in a row, fills them into `cache`, and pushes
    /// the whole batch into `index`.
    fn flush(
        &mut self,
        bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding,
        cache: &mut PieceCache,
        index: &mut PieceIndex,
    ) -> Option<()> {
        for &(slot, piece) in &self.new {
            let c = bpe.count(piece.as_bytes());
            cache.fill(piece, c);
            self.counts[slot] = c;
        }
        for &(slot, piece) in &self.pending {
            self.counts[slot] = match cache.probe(piece) {
                Probe::Known(c) => c,
                // Only cacheable pieces are ever pending, and every one was
                // filled above; count directly rather than trust that.
                Probe::New | Probe::Pending => {
                    let c = bpe.count(piece.as_bytes());
                    cache.fill(piece, c);
                    c
                }
            };
        }
        for (&start, &count) in self.starts.iter().zip(&self.counts) {
            index.push(start, count)?;
        }
        self.starts.clear();
        self.counts.clear();
        self.new.clear();
        self.pending.clear();
        Some(())
    }
}

/// The count of one piece, through `cache` when there is one.
fn count_piece(
    cache: Option<&mut PieceCache>,
    bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding,
    piece: &str,
) -> usize {
    match cache {
        Some(cache) => cache.count(piece, || bpe.count(piece.as_bytes())),
        None => bpe.count(piece.as_bytes()),
    }
}

/// Token counts of one document, counted once, answering exact counts of any
/// byte range of it.
///
/// See the module documentation for why the fast path is exact.
pub struct DocumentTokens<'a> {
    counter: Bpe,
    text: &'a str,
    /// The document's pieces and their counts; `None` only for documents too
    /// long for `u32` offsets, which are then counted directly every time.
    index: Option<PieceIndex>,
}

impl std::fmt::Debug for DocumentTokens<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentTokens")
            .field("counter", &self.counter)
            .field("text_len", &self.text.len())
            .field("index", &self.index)
            .finish()
    }
}

/// The first probe distance, in bytes, when galloping away from an estimated
/// cut: the estimate is usually right or off by one candidate, so the first
/// probe goes to the very next candidate and the steps double from there.
const GALLOP_FIRST_STEP: usize = 1;

/// How many bytes per wanted token to encode at first when cutting inside one
/// over-long piece: text averages about 4 bytes per token (emoji and CJK
/// fewer), so the first window usually holds the part; it doubles if not.
const PIECE_WINDOW_BYTES_PER_TOKEN: usize = 4;

/// How many pieces [`DocumentTokens::with_cache`] pretokenizes before it
/// sends the new ones to the encoder together: the encoder's tables are
/// large, and one rare word every few hundred bytes finds them cold (issue
/// 18: a first-seen piece cost about 1.2 us counted as it came and 0.6 us
/// counted in a row, over the English corpus).
const MISS_BATCH_PIECES: usize = 4096;

impl<'a> DocumentTokens<'a> {
    /// Pretokenizes and counts `text` once with `counter`, keeping the piece
    /// boundaries and counts for later range queries.
    pub fn new(counter: Bpe, text: &'a str) -> Self {
        Self::with_cache(counter, text, &mut PieceCache::new(counter.kind()))
    }

    /// Like [`DocumentTokens::new`], reusing (and filling) `cache`, which
    /// keeps the counts of short pieces across documents. `cache` must be for
    /// the same tokenizer; a cache for another one is cleared and retargeted.
    pub fn with_cache(counter: Bpe, text: &'a str, cache: &mut PieceCache) -> Self {
        cache.retarget(counter.kind());
        let index = index_pieces(counter, text, cache);
        Self {
            counter,
            text,
            index,
        }
    }

    /// Like [`DocumentTokens::with_cache`] with the calling thread's piece
    /// cache for the tokenizer: the same cache that [`Bpe`]'s `count` fills
    /// for breadcrumbs and probes, so a word the document index counted is
    /// never sent to the encoder again on this thread, and the other way
    /// round.
    pub fn with_thread_cache(counter: Bpe, text: &'a str) -> Self {
        counter.with_cache(|cache, _| match cache {
            Some(cache) => Self::with_cache(counter, text, cache),
            None => Self::new(counter, text),
        })
    }

    /// The document these counts are for.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The counter in use.
    pub fn counter(&self) -> Bpe {
        self.counter
    }

    /// The token count of the whole document.
    pub fn total(&self) -> usize {
        match &self.index {
            Some(index) => index.tokens_before(self.text.len()),
            None => self.counter.count(self.text),
        }
    }

    /// The number of pretokenizer pieces of the whole document (0 when the
    /// document is too long to be indexed).
    pub fn piece_count(&self) -> usize {
        self.index.as_ref().map_or(0, PieceIndex::pieces)
    }

    /// The heap bytes held by the piece index, for memory budgeting.
    pub fn index_heap_bytes(&self) -> usize {
        self.index.as_ref().map_or(0, PieceIndex::heap_bytes)
    }

    /// Whether a pretokenizer piece of the whole document starts at `offset`
    /// (the document end counts as one). Without an index every char
    /// boundary is reported as one.
    pub fn is_piece_boundary(&self, offset: usize) -> bool {
        match &self.index {
            Some(index) => index.is_boundary(offset),
            None => self.text.is_char_boundary(offset),
        }
    }

    /// The exact token count of `text[range]`, equal to counting that
    /// substring on its own. `range` must lie on char boundaries.
    pub fn count(&self, range: Range<usize>) -> usize {
        self.count_capped(range, usize::MAX)
    }

    /// Whether `text[range]` has more than `max_tokens` tokens. Exact, and
    /// costs at most about `max_tokens` tokens' worth of counting even when
    /// `range` starts inside a piece many megabytes long.
    pub fn exceeds(&self, range: Range<usize>, max_tokens: usize) -> bool {
        self.count_capped(range, max_tokens) > max_tokens
    }

    /// The exact count of `text[range]` if it is at most `cap`; otherwise some
    /// number above `cap`. Stopping early is exact because a count is a sum
    /// of per-piece counts, none negative, so a partial sum over `cap` means
    /// the whole is over `cap` too.
    fn count_capped(&self, range: Range<usize>, cap: usize) -> usize {
        let sub = &self.text[range.clone()];
        let over = cap.saturating_add(1);
        if sub.len() > over.saturating_mul(self.counter.max_token_len()) {
            // Too many bytes for `cap` tokens of even the longest kind; this
            // also spares splitting a remainder that is one huge piece.
            return over;
        }
        let Some(index) = &self.index else {
            return self.counter.count(sub);
        };
        if sub.is_empty() {
            return 0;
        }
        let (start, end) = (range.start, range.end);
        let anchor = if end == self.text.len() {
            // Pieces of a document suffix are the document's own pieces.
            end
        } else {
            self.tail_anchor(index, start, end)
        };
        let mut pieces = self.counter.pieces(sub);
        let mut at = start;
        let mut head = 0usize;
        while at <= anchor {
            if index.is_boundary(at) {
                let interior = index.tokens_before(anchor) - index.tokens_before(at);
                let sum = head + interior;
                if anchor == end || sum > cap {
                    return sum;
                }
                let tail = self.counter.pieces(&self.text[anchor..end]);
                return self.sum_capped(sum, tail, cap);
            }
            let Some(piece) = pieces.next() else { break };
            head += self.piece_count_capped(piece, cap - head);
            if head > cap {
                return head;
            }
            at += piece.len();
        }
        // The split from `start` never met a usable boundary: finish it.
        self.sum_capped(head, pieces, cap)
    }

    /// `sum` plus the counts of `pieces`, stopping as soon as it passes `cap`.
    fn sum_capped<'t>(
        &self,
        mut sum: usize,
        pieces: impl Iterator<Item = &'t str>,
        cap: usize,
    ) -> usize {
        for piece in pieces {
            sum += self.piece_count_capped(piece, cap - sum);
            if sum > cap {
                break;
            }
        }
        sum
    }

    /// The BPE count of one piece if it is at most `cap`, otherwise some
    /// number above `cap`. Text of `n` bytes has at least `n / L` tokens, `L`
    /// being the longest token's length, so a piece longer than
    /// `(cap + 1) * L` bytes is over without encoding it.
    fn piece_count_capped(&self, piece: &str, cap: usize) -> usize {
        let over = cap.saturating_add(1);
        if piece.len() > over.saturating_mul(self.counter.max_token_len()) {
            return over;
        }
        self.counter.piece_count(piece)
    }

    /// The tail anchor of `start..end` (see the module documentation): the last
    /// document boundary at or before the range's end with its trailing
    /// whitespace trimmed off. May lie before `start`, in which case the range
    /// is counted directly.
    fn tail_anchor(&self, index: &PieceIndex, start: usize, end: usize) -> usize {
        let trimmed = self.text[start..end].trim_end_matches(char::is_whitespace);
        index.boundary_at_or_before(start + trimmed.len())
    }

    /// Cut points that split `range` into consecutive parts of at most
    /// `max_tokens` tokens each (exact counts), greedily as long as possible.
    /// Returns the interior cut offsets (ascending, on char boundaries,
    /// strictly inside `range`); an empty vector means `range` already fits.
    ///
    /// Cuts fall on pretokenizer piece boundaries of the document (word
    /// starts): each part ends at the last boundary where it still fits.
    /// Only when not even the first piece of a part fits (one piece longer
    /// than `max_tokens`, such as a long string without spaces) is that
    /// piece cut inside, at the last token boundary of its encoding that is a
    /// char boundary and still fits. If not even one character fits
    /// (`max_tokens` below 4 with a multi-token character, or 0), that part
    /// is the single character.
    pub fn cut_points(&self, range: Range<usize>, max_tokens: usize) -> Vec<usize> {
        let end = range.end;
        let mut start = range.start;
        let mut cuts = Vec::new();
        while start < end && self.exceeds(start..end, max_tokens) {
            let cut = self.part_end(start, end, max_tokens);
            if cut >= end {
                // The rest is one character that alone exceeds the budget.
                break;
            }
            cuts.push(cut);
            start = cut;
        }
        cuts
    }

    /// The end of the part starting at `start`, given that `start..end` does
    /// not fit `max_tokens`.
    fn part_end(&self, start: usize, end: usize, max_tokens: usize) -> usize {
        let fits = |e: usize| !self.exceeds(start..e, max_tokens);
        let (fit, over) = match &self.index {
            Some(index) => {
                let guess = index.estimate_end(index.boundary_at_or_after(start), max_tokens);
                let down = |x: usize| index.boundary_at_or_before(x);
                let up = |x: usize| index.boundary_at_or_after(x);
                bracket(start, end, guess, down, up, |e| !fits(e))
            }
            None => {
                let down = |x: usize| floor_char_boundary(self.text, x);
                let up = |x: usize| ceil_char_boundary(self.text, x);
                bracket(start, end, start, down, up, |e| !fits(e))
            }
        };
        if fit > start {
            return fit;
        }
        // Not even the first piece fits: cut inside it.
        self.cut_inside_piece(start, over, max_tokens)
    }

    /// The last cut inside the over-long piece `start..piece_end` at which
    /// the part from `start` still fits `max_tokens`, at a token boundary of
    /// the piece's encoding that is also a char boundary.
    fn cut_inside_piece(&self, start: usize, piece_end: usize, max_tokens: usize) -> usize {
        let tokenizer = self.counter.tokenizer();
        // Encode a window big enough to hold a couple of tokens more than the
        // part can take, so every candidate cut that might fit is in it.
        let mut window = (max_tokens + 2).saturating_mul(PIECE_WINDOW_BYTES_PER_TOKEN);
        let (window_end, ids) = loop {
            let window_end =
                ceil_char_boundary(self.text, start.saturating_add(window)).min(piece_end);
            let ids = tokenizer.encode(&self.text[start..window_end]);
            if window_end == piece_end || ids.len() > max_tokens + 1 {
                break (window_end, ids);
            }
            window = window.saturating_mul(2);
        };
        let mut candidates = Vec::with_capacity(ids.len());
        let mut offset = start;
        // The last candidate within `max_tokens` tokens of the encoding: the
        // substring up to it usually counts exactly that, so start there.
        let mut guess = start;
        for (number, id) in ids.into_iter().enumerate() {
            offset += tokenizer.bpe.token_len(id);
            if offset < window_end && self.text.is_char_boundary(offset) {
                candidates.push(offset);
                if number < max_tokens {
                    guess = offset;
                }
            }
        }
        let down = |x: usize| {
            let i = candidates.partition_point(|&c| c <= x);
            i.checked_sub(1).map_or(start, |i| candidates[i])
        };
        let up = |x: usize| {
            let i = candidates.partition_point(|&c| c < x);
            candidates.get(i).copied().unwrap_or(piece_end)
        };
        let (fit, _) = bracket(start, piece_end, guess, down, up, |e| {
            self.exceeds(start..e, max_tokens)
        });
        if fit > start {
            fit
        } else {
            // Not even one token-aligned char fits: take the first character.
            ceil_char_boundary(self.text, start + 1)
        }
    }

    /// The end of the longest prefix of `text[start..end]` with at most
    /// `max_tokens` tokens (`end` when all of it fits), cut as
    /// [`DocumentTokens::cut_points`] cuts: at a piece boundary (a word start)
    /// when one fits, else inside the first piece; always past `start` when
    /// `start < end`.
    pub fn window_end(&self, start: usize, end: usize, max_tokens: usize) -> usize {
        if start >= end || !self.exceeds(start..end, max_tokens) {
            return end;
        }
        self.part_end(start, end, max_tokens).min(end)
    }

    /// The first piece boundary (word start) at or after `offset`, at most
    /// `end`.
    pub fn piece_boundary_at_or_after(&self, offset: usize, end: usize) -> usize {
        match &self.index {
            Some(index) => index.boundary_at_or_after(offset).min(end),
            None => ceil_char_boundary(self.text, offset).min(end),
        }
    }

    /// The smallest start `p >= floor` such that `text[p..end]` has at most
    /// `tokens` tokens, on a char boundary.
    ///
    /// Counts are not strictly monotone in `p`, so "smallest" is in the
    /// binary-search sense: `text[p..end]` fits, and either `p == floor` or
    /// the range starting one character earlier does not.
    pub fn tail_start(&self, floor: usize, end: usize, tokens: usize) -> usize {
        let floor = ceil_char_boundary(self.text, floor).min(end);
        let fits = |p: usize| !self.exceeds(p..end, tokens);
        if fits(floor) {
            return floor;
        }
        let down = |x: usize| floor_char_boundary(self.text, x);
        let up = |x: usize| ceil_char_boundary(self.text, x);
        let (_, first_fit) = bracket(floor, end, floor, down, up, fits);
        first_fit
    }
}

/// Narrows `lo..hi` to two neighbouring candidate positions `(l, h)` with
/// `over(l)` false and `over(h)` true, assuming `over` is false at `lo`, true
/// at `hi` and (for the answer to be the first switch) monotone in between.
///
/// Candidates are the positions that `down` (largest candidate `<= x`) and
/// `up` (smallest candidate `>= x`) snap to; `lo` and `hi` act as sentinels.
/// Starts by probing `guess` and galloping away from it, then bisects, so a
/// good guess costs a handful of probes and a useless one O(log n).
fn bracket(
    mut lo: usize,
    mut hi: usize,
    guess: usize,
    down: impl Fn(usize) -> usize,
    up: impl Fn(usize) -> usize,
    mut over: impl FnMut(usize) -> bool,
) -> (usize, usize) {
    let guess = down(guess.min(hi.saturating_sub(1)));
    if guess > lo && guess < hi {
        let guess_over = over(guess);
        let mut step = GALLOP_FIRST_STEP;
        if guess_over {
            hi = guess;
            // Gallop down until a probe is not over.
            while let Some(x) = hi.checked_sub(step).filter(|&x| x > lo) {
                let c = down(x);
                if c <= lo {
                    break;
                }
                if over(c) {
                    hi = c;
                    step = step.saturating_mul(2);
                } else {
                    lo = c;
                    break;
                }
            }
        } else {
            lo = guess;
            // Gallop up until a probe is over.
            loop {
                let c = up(lo.saturating_add(step));
                if c >= hi {
                    break;
                }
                if over(c) {
                    hi = c;
                    break;
                }
                lo = c;
                step = step.saturating_mul(2);
            }
        }
    }
    // Bisect: probe a candidate near the middle; when there is none at or
    // after the middle, probe the last one before it instead.
    loop {
        let mid = lo + (hi - lo) / 2;
        let mut c = up(mid.max(lo + 1));
        if c >= hi {
            c = down(hi - 1);
            if c <= lo {
                return (lo, hi);
            }
        }
        if over(c) {
            hi = c;
        } else {
            lo = c;
        }
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
