//! [`DocumentTokens`]: a whole normalized document counted once, answering
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

use std::ops::Range;

use super::index::{index_pieces, PieceIndex};
use super::{ceil_char_boundary, floor_char_boundary, Bpe, PieceCache, TokenCounter};

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
