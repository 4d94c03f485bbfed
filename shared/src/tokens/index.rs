//! A compact index of a document's pretokenizer pieces and their token counts,
//! and how it is built: the pieces the cache does not know are counted in
//! batches ([`index_pieces`]).
//!
//! The index answers three questions in (nearly) constant time: is a byte
//! offset a piece boundary, what is the nearest piece boundary before or after
//! an offset, and how many tokens do all pieces before a boundary hold. It is
//! stored as a bitmap of piece starts plus one small count per piece, so a
//! 100 MB document costs roughly 50 MB of index instead of the ~200 MB that a
//! plain `(u32 offset, u32 cumulative count)` pair per piece would take.

use super::cache::{Encoder, Probe};
use super::{pretokenize, Bpe, PieceCache, TokenizerKind};

/// Bits per bitmap word; one rank/total checkpoint is kept per word.
const WORD_BITS: usize = 64;

/// A per-piece count of this value means "look the count up in
/// [`PieceIndex::big_counts`]": pieces of 255 or more tokens are rare (runs of
/// thousands of spaces, or long strings without spaces), so a byte covers the rest.
const ESCAPE: u8 = u8::MAX;

/// The piece boundaries and per-piece token counts of one document.
///
/// Offsets and totals are `u32`, so documents are limited to `u32::MAX` bytes;
/// [`PieceIndex::with_len`] returns `None` beyond that and the caller falls back
/// to direct counting.
pub(super) struct PieceIndex {
    /// The document length in bytes; treated as a boundary.
    len: usize,
    /// Bit `i` is set when a piece starts at byte `i`.
    starts: Vec<u64>,
    /// For word `w`, the number of pieces that start before byte `64 * w`.
    /// Has one more entry than `starts`, so `len` itself can be looked up.
    word_rank: Vec<u32>,
    /// For word `w`, the total tokens of the pieces that start before byte
    /// `64 * w`. Same length as `word_rank`.
    word_tokens: Vec<u32>,
    /// Token count of each piece, in document order ([`ESCAPE`] if too big).
    piece_counts: Vec<u8>,
    /// `(piece number, count)` for the pieces whose count did not fit a byte,
    /// ascending by piece number.
    big_counts: Vec<(u32, u32)>,
    /// The tokens of all pieces pushed so far.
    total: u64,
}

impl PieceIndex {
    /// An empty index for a document of `len` bytes, to [`push`] its pieces
    /// into in order and [`finish`]; `None` if the document is too long for
    /// `u32` offsets.
    ///
    /// [`push`]: PieceIndex::push
    /// [`finish`]: PieceIndex::finish
    pub(super) fn with_len(len: usize) -> Option<Self> {
        if u32::try_from(len).is_err() {
            return None;
        }
        let words = len.div_ceil(WORD_BITS);
        Some(Self {
            len,
            starts: vec![0; words],
            word_rank: Vec::with_capacity(words + 1),
            word_tokens: Vec::with_capacity(words + 1),
            // English averages about 4.5 bytes per piece; reserving len / 4
            // avoids most regrowth without over-allocating much.
            piece_counts: Vec::with_capacity(len / 4),
            big_counts: Vec::new(),
            total: 0,
        })
    }

    /// Adds the next piece, which starts at `start` (after every piece
    /// pushed so far) and holds `count` tokens; `None` if the totals
    /// overflow `u32`.
    pub(super) fn push(&mut self, start: usize, count: usize) -> Option<()> {
        // Every checkpoint word that begins at or before this piece's start
        // has seen exactly the pieces pushed so far.
        while self.word_rank.len() * WORD_BITS <= start {
            self.push_checkpoint()?;
        }
        self.starts[start / WORD_BITS] |= 1 << (start % WORD_BITS);
        let number = u32::try_from(self.piece_counts.len()).ok()?;
        match u8::try_from(count) {
            Ok(small) if small != ESCAPE => self.piece_counts.push(small),
            _ => {
                self.piece_counts.push(ESCAPE);
                self.big_counts.push((number, u32::try_from(count).ok()?));
            }
        }
        self.total += count as u64;
        Some(())
    }

    /// The finished index, its last checkpoints written.
    pub(super) fn finish(mut self) -> Option<Self> {
        let words = self.len.div_ceil(WORD_BITS);
        while self.word_rank.len() <= words {
            self.push_checkpoint()?;
        }
        self.piece_counts.shrink_to_fit();
        Some(self)
    }

    fn push_checkpoint(&mut self) -> Option<()> {
        self.word_rank
            .push(u32::try_from(self.piece_counts.len()).ok()?);
        self.word_tokens.push(u32::try_from(self.total).ok()?);
        Some(())
    }

    /// The number of heap bytes the index holds.
    pub(super) fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 8
            + self.word_rank.capacity() * 4
            + self.word_tokens.capacity() * 4
            + self.piece_counts.capacity()
            + self.big_counts.capacity() * 8
    }

    /// The number of pieces.
    pub(super) fn pieces(&self) -> usize {
        self.piece_counts.len()
    }

    /// Whether a piece starts at `offset`; the document end counts as one.
    pub(super) fn is_boundary(&self, offset: usize) -> bool {
        if offset >= self.len {
            return offset == self.len;
        }
        self.starts[offset / WORD_BITS] & (1 << (offset % WORD_BITS)) != 0
    }

    /// The largest boundary `<= offset` (the document end if `offset` is past it).
    pub(super) fn boundary_at_or_before(&self, offset: usize) -> usize {
        if offset >= self.len {
            return self.len;
        }
        let mut word = offset / WORD_BITS;
        // Keep bits 0..=offset % 64 of the first word.
        let mut bits = self.starts[word] & (u64::MAX >> (WORD_BITS - 1 - offset % WORD_BITS));
        loop {
            if bits != 0 {
                return word * WORD_BITS + (WORD_BITS - 1 - bits.leading_zeros() as usize);
            }
            if word == 0 {
                // Unreachable for a non-empty document (a piece starts at 0),
                // but 0 is the right answer anyway.
                return 0;
            }
            word -= 1;
            bits = self.starts[word];
        }
    }

    /// The smallest boundary `>= offset` (the document end if none).
    pub(super) fn boundary_at_or_after(&self, offset: usize) -> usize {
        if offset >= self.len {
            return self.len;
        }
        let mut word = offset / WORD_BITS;
        // Drop bits below offset % 64 of the first word.
        let mut bits = self.starts[word] & (u64::MAX << (offset % WORD_BITS));
        loop {
            if bits != 0 {
                return word * WORD_BITS + bits.trailing_zeros() as usize;
            }
            word += 1;
            if word >= self.starts.len() {
                return self.len;
            }
            bits = self.starts[word];
        }
    }

    /// The total tokens of all pieces that start before `boundary`, which must
    /// be a boundary (or the document end) for the answer to be meaningful.
    pub(super) fn tokens_before(&self, boundary: usize) -> usize {
        let word = boundary.min(self.len) / WORD_BITS;
        let first = self.word_rank[word] as usize;
        let within = if word < self.starts.len() {
            let below = self.starts[word] & ((1u64 << (boundary % WORD_BITS)) - 1);
            below.count_ones() as usize
        } else {
            0
        };
        self.word_tokens[word] as usize + self.sum_counts(first, first + within)
    }

    /// The sum of the token counts of pieces `from..to`.
    fn sum_counts(&self, from: usize, to: usize) -> usize {
        let mut sum = 0usize;
        for (number, &count) in self.piece_counts[from..to].iter().enumerate() {
            sum += if count == ESCAPE {
                self.big_count(from + number)
            } else {
                count as usize
            };
        }
        sum
    }

    fn big_count(&self, number: usize) -> usize {
        let found = self
            .big_counts
            .binary_search_by_key(&number, |&(n, _)| n as usize)
            .map(|i| self.big_counts[i].1 as usize);
        // Every escaped count was recorded when it was pushed; 0 is never
        // reached but keeps this path panic-free.
        found.unwrap_or(0)
    }

    /// The largest boundary `e >= from` whose pieces `from..e` hold at most
    /// `budget` tokens by the document's own pretokenization (`from` must be
    /// a boundary). This is the prefix-sum estimate of where a part starting
    /// at `from` ends; the exact count of the substring may differ slightly at
    /// its two edges, so callers verify it.
    pub(super) fn estimate_end(&self, from: usize, budget: usize) -> usize {
        let limit = self.tokens_before(from).saturating_add(budget);
        // The last checkpoint whose preceding total is still within the limit;
        // checkpoint 0 holds 0 tokens, so one always qualifies.
        let word = self
            .word_tokens
            .partition_point(|&t| t as usize <= limit)
            .saturating_sub(1);
        let mut tokens = self.word_tokens[word] as usize;
        let mut number = self.word_rank[word] as usize;
        let mut best = from;
        let mut boundary = self.boundary_at_or_after(word * WORD_BITS);
        // Every piece holds at least one token, so totals grow strictly and the
        // walk ends within the next checkpoint word.
        while tokens <= limit {
            best = best.max(boundary);
            if boundary >= self.len {
                break;
            }
            tokens += self.sum_counts(number, number + 1);
            number += 1;
            boundary = self.boundary_at_or_after(boundary + 1);
        }
        best
    }
}

impl std::fmt::Debug for PieceIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PieceIndex")
            .field("len", &self.len)
            .field("pieces", &self.pieces())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

/// How many pieces [`super::DocumentTokens::with_cache`] pretokenizes before it
/// sends the new ones to the encoder together: the encoder's tables are
/// large, and one rare word every few hundred bytes finds them cold (issue
/// 18: a first-seen piece cost about 1.2 us counted as it came and 0.6 us
/// counted in a row, over the English corpus).
pub(super) const MISS_BATCH_PIECES: usize = 4096;

/// The piece index of `text`, counting the pieces `cache` does not know in
/// batches of [`MISS_BATCH_PIECES`] pieces. `None` when the text is too long
/// for the index (or, defensively, when the pieces do not cover the text).
pub(super) fn index_pieces(counter: Bpe, text: &str, cache: &mut PieceCache) -> Option<PieceIndex> {
    // The pieces without `pieces`' box: one virtual call per piece was
    // measurable over millions of pieces.
    let tokenizer = counter.tokenizer();
    let encoder = Encoder::of(counter);
    match counter.kind {
        TokenizerKind::Cl100kBase => index_of(
            pretokenize::cl100k_pieces(text, tokenizer),
            text,
            encoder,
            cache,
        ),
        TokenizerKind::O200kBase => index_of(tokenizer.split(text), text, encoder, cache),
    }
}

/// [`index_pieces`] over `pieces`, the pretokenizer pieces of `text`.
fn index_of<'t>(
    pieces: impl Iterator<Item = &'t str>,
    text: &str,
    encoder: Encoder,
    cache: &mut PieceCache,
) -> Option<PieceIndex> {
    let mut index = PieceIndex::with_len(text.len())?;
    let mut batch = MissBatch::default();
    let mut covered = 0usize;
    for piece in pieces {
        batch.push(text, covered, piece, cache);
        covered += piece.len();
        if batch.starts.len() == MISS_BATCH_PIECES {
            batch.flush(encoder, cache, &mut index)?;
        }
    }
    batch.flush(encoder, cache, &mut index)?;
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
    /// Adds `piece`, which starts at byte `start` of `text`.
    fn push(&mut self, text: &str, start: usize, piece: &'t str, cache: &mut PieceCache) {
        let slot = self.starts.len();
        self.starts.push(start);
        self.counts.push(match cache.probe_at(text, start, piece) {
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
        encoder: Encoder,
        cache: &mut PieceCache,
        index: &mut PieceIndex,
    ) -> Option<()> {
        for &(slot, piece) in &self.new {
            let c = encoder.count(piece);
            cache.fill(piece, c);
            self.counts[slot] = c;
        }
        for &(slot, piece) in &self.pending {
            self.counts[slot] = match cache.probe(piece) {
                Probe::Known(c) => c,
                // Only cacheable pieces are ever pending, and every one was
                // filled above; count directly rather than trust that.
                Probe::New | Probe::Pending => {
                    let c = encoder.count(piece);
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
