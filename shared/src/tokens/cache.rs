//! Token counts of short pretokenizer pieces, kept across documents.
//!
//! Most pieces are short and repeat ("the", " of", "\n\n"), so remembering
//! their counts skips the BPE encoder for the bulk of a text. The cache only
//! memoizes a pure function: results are identical with or without it.
//!
//! Pieces of at most 15 bytes (almost all of them) live in a [`PackedTable`]:
//! one `u128` per slot holds the piece, its length and its count, so a
//! lookup reads one cache line. Issue 18 measured the cache's lookups at a
//! fifth of `spec-v1`'s time with a `HashMap<u128, u32>` (a 32-byte bucket
//! and a control byte group per entry, on two lines): the hot words are
//! evicted between documents and each lookup waited for memory.

use std::sync::OnceLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use rustc_hash::FxHashMap;

use super::{Bpe, TokenizerKind};

/// Pieces up to this many bytes have their counts cached: words, and the
/// whitespace runs of indented code, which repeat (issue 18: over the
/// English corpus, caching up to 128 bytes instead of 24 cut the encoder
/// calls for long pieces from 26,915 to 2,690; most long pieces are
/// indentation). Longer pieces would only grow the cache.
pub(super) const CACHED_PIECE_BYTES: usize = 128;

/// A cache past this many entries is cleared: 2^18 short pieces are a few
/// MB, enough for the working vocabulary of a large corpus.
const MAX_CACHED_PIECES: usize = 1 << 18;

/// Pieces up to this many bytes are keyed by [`pack`].
const PACKED_PIECE_BYTES: usize = 15;

/// Token counts of short pretokenizer pieces, kept across documents (see
/// the module documentation).
#[derive(Debug, Clone)]
pub struct PieceCache {
    kind: TokenizerKind,
    /// Pieces of at most [`PACKED_PIECE_BYTES`] bytes.
    packed: PackedTable,
    /// Longer pieces, up to [`CACHED_PIECE_BYTES`].
    counts: FxHashMap<Box<str>, u32>,
}

/// What a [`PieceCache`] knows of a piece.
pub(super) enum Probe {
    /// Its count.
    Known(usize),
    /// Nothing yet: the caller counts it (and fills it in, if cacheable).
    New,
    /// It was probed as [`Probe::New`] earlier and is not filled in yet.
    Pending,
}

/// The count the long-piece map holds for a piece whose count is still
/// being worked out (between [`PieceCache::probe`] and
/// [`PieceCache::fill`]).
const PENDING: u32 = u32::MAX;

impl PieceCache {
    /// An empty cache for `kind`.
    pub fn new(kind: TokenizerKind) -> Self {
        Self {
            kind,
            packed: PackedTable::default(),
            counts: FxHashMap::default(),
        }
    }

    /// The tokenizer the cached counts belong to.
    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// Clears the cache when it is for another tokenizer or has grown past
    /// [`MAX_CACHED_PIECES`].
    pub(super) fn retarget(&mut self, kind: TokenizerKind) {
        if self.kind != kind || self.counts.len() + self.packed.len > MAX_CACHED_PIECES {
            self.packed.clear();
            self.counts.clear();
            self.kind = kind;
        }
    }

    /// The count of `piece`, from the cache or from `bpe` (then cached).
    pub(super) fn count(&mut self, piece: &str, bpe: impl FnOnce() -> usize) -> usize {
        match self.probe(piece) {
            Probe::Known(c) => c,
            Probe::New | Probe::Pending => {
                let c = bpe();
                self.fill(piece, c);
                c
            }
        }
    }

    /// What the cache knows of `piece`. A cacheable piece it does not know
    /// is entered as pending ([`Probe::New`]); the caller must [`fill`] it
    /// before the cache is used by anyone else. A piece too long to cache
    /// is always [`Probe::New`].
    ///
    /// [`fill`]: PieceCache::fill
    pub(super) fn probe(&mut self, piece: &str) -> Probe {
        if piece.len() <= PACKED_PIECE_BYTES {
            return self.packed.probe(pack(piece.as_bytes()));
        }
        self.probe_long(piece)
    }

    /// [`probe`] of `piece`, which starts at byte `start` of `text`: the
    /// key of a short piece is read from the text 16 bytes at once (one
    /// load and a mask instead of a copy through a zeroed buffer, a fifth
    /// of the lookups' time in issue 18's profile).
    ///
    /// [`probe`]: PieceCache::probe
    pub(super) fn probe_at(&mut self, text: &str, start: usize, piece: &str) -> Probe {
        if piece.len() <= PACKED_PIECE_BYTES {
            return self
                .packed
                .probe(pack_at(text.as_bytes(), start, piece.as_bytes()));
        }
        self.probe_long(piece)
    }

    /// [`probe`] of a piece longer than [`PACKED_PIECE_BYTES`].
    ///
    /// [`probe`]: PieceCache::probe
    fn probe_long(&mut self, piece: &str) -> Probe {
        if piece.len() > CACHED_PIECE_BYTES {
            return Probe::New;
        }
        match self.counts.get(piece) {
            Some(&PENDING) => Probe::Pending,
            Some(&c) => Probe::Known(c as usize),
            None => {
                self.counts.insert(piece.into(), PENDING);
                Probe::New
            }
        }
    }

    /// Records the count of `piece` (a no-op for pieces too long to cache).
    pub(super) fn fill(&mut self, piece: &str, count: usize) {
        if piece.len() <= PACKED_PIECE_BYTES {
            self.packed.fill(piece.as_bytes(), count);
        } else if piece.len() <= CACHED_PIECE_BYTES {
            // A piece of at most 128 bytes has at most 128 tokens, never PENDING.
            let count = u32::try_from(count).unwrap_or(PENDING - 1);
            match self.counts.get_mut(piece) {
                Some(c) => *c = count,
                None => {
                    self.counts.insert(piece.into(), count);
                }
            }
        }
    }

    /// Whether any piece was left pending (a bug in a caller).
    #[cfg(test)]
    pub(super) fn has_pending(&self) -> bool {
        self.counts.values().any(|&c| c == PENDING)
            || self
                .packed
                .slots
                .iter()
                .any(|&s| s != 0 && s >> COUNT_SHIFT == 0)
    }
}

/// The BPE encoder of one tokenizer, for the pieces a cache does not know.
///
/// A piece that is one whole token of the vocabulary counts 1 without the
/// encoder: over the English corpus about a third of the first-seen pieces
/// are, and the encoder took over a microsecond for each (its tables are
/// cold for a rare word), where the lookup takes one memory access. The
/// shortcut cannot change a count: `bpe.count` of every token of both
/// vocabularies is 1 (`every_whole_token_counts_one` checks them all).
#[derive(Clone, Copy)]
pub(super) struct Encoder {
    bpe: &'static BytePairEncoding,
    whole: &'static PackedTable,
}

impl Encoder {
    /// The encoder of `counter`'s tokenizer; the first call for a tokenizer
    /// builds its table of whole tokens (a few milliseconds, once per
    /// process).
    pub(super) fn of(counter: Bpe) -> Self {
        static TABLES: [OnceLock<PackedTable>; 2] = [OnceLock::new(), OnceLock::new()];
        let bpe = &counter.tokenizer().bpe;
        let cell = match counter.kind() {
            TokenizerKind::Cl100kBase => &TABLES[0],
            TokenizerKind::O200kBase => &TABLES[1],
        };
        let whole = cell.get_or_init(|| whole_tokens(bpe));
        Self { bpe, whole }
    }

    /// The token count of one pretokenizer piece.
    pub(super) fn count(&self, piece: &str) -> usize {
        let bytes = piece.as_bytes();
        if !bytes.is_empty()
            && bytes.len() <= PACKED_PIECE_BYTES
            && self.whole.find(pack(bytes)).is_ok()
        {
            return 1;
        }
        self.bpe.count(bytes)
    }
}

/// The tokens of `bpe`'s vocabulary that are valid UTF-8 (a piece is a
/// `&str`) of 1 to [`PACKED_PIECE_BYTES`] bytes, each with count 1.
///
/// The tokens go in in the order of their home slots, not of their ids:
/// then each insert writes next to the previous one instead of at a random
/// place in the table's 4 MiB, which made the build a quarter of the CLI's
/// start-up (issue 18, 2026-12-02 fifth session: 14 of 57 ms for a one-line
/// file). The layout differs, the entries do not.
fn whole_tokens(bpe: &BytePairEncoding) -> PackedTable {
    let mut table = PackedTable::with_capacity(bpe.num_tokens());
    // (home slot << 32 | token id) of each whole token.
    let mut order: Vec<u64> = Vec::with_capacity(bpe.num_tokens());
    for id in 0..bpe.num_tokens() {
        let Ok(id) = u32::try_from(id) else { break };
        let bytes = bpe.token_bytes(id);
        if (1..=PACKED_PIECE_BYTES).contains(&bytes.len()) && std::str::from_utf8(bytes).is_ok() {
            let home = slot_of(pack(bytes), table.slots.len(), table.seed) as u64;
            order.push(home << 32 | u64::from(id));
        }
    }
    // By home slot only (the top half): the ids' order within a slot does
    // not matter.
    radix_sort(&mut order, 32);
    for entry in order {
        table.fill(bpe.token_bytes(entry as u32), 1);
    }
    table
}

/// Sorts `values` ascending by their bits from `low` up (stable: values
/// equal there keep their order): least significant digit first, 11 bits a
/// pass, passes only over the bits some value has set.
fn radix_sort(values: &mut Vec<u64>, low: u32) {
    const BITS: u32 = 11;
    let top = values.iter().fold(0, |acc, &v| acc | v);
    let mut other = vec![0u64; values.len()];
    let mut shift = low;
    while shift < u64::BITS && top >> shift != 0 {
        let digit = |v: u64| ((v >> shift) & ((1 << BITS) - 1)) as usize;
        let mut starts = vec![0usize; 1 << BITS];
        for &v in values.iter() {
            starts[digit(v)] += 1;
        }
        let mut at = 0;
        for start in &mut starts {
            let n = *start;
            *start = at;
            at += n;
        }
        for &v in values.iter() {
            let d = digit(v);
            other[starts[d]] = v;
            starts[d] += 1;
        }
        std::mem::swap(values, &mut other);
        shift += BITS;
    }
}

/// A piece of at most [`PACKED_PIECE_BYTES`] bytes as one integer: its bytes
/// in the low 15 bytes and its length in bits 120..124, so no two pieces
/// share a key; bits 124..128 stay free for the count.
pub(super) fn pack(piece: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    buf[..piece.len()].copy_from_slice(piece);
    buf[15] = piece.len() as u8;
    u128::from_le_bytes(buf)
}

/// [`pack`] of `piece`, which starts at byte `start` of `text`, reading the
/// 16 bytes there at once when the text has them (`pack` otherwise).
fn pack_at(text: &[u8], start: usize, piece: &[u8]) -> u128 {
    let len = piece.len();
    if let Some(window) = text.get(start..start.saturating_add(16)) {
        if let Ok(bytes) = <[u8; 16]>::try_from(window) {
            if len <= PACKED_PIECE_BYTES {
                let mask = (1u128 << (8 * len)) - 1;
                return (u128::from_le_bytes(bytes) & mask) | (len as u128) << 120;
            }
        }
    }
    pack(piece)
}

/// Where a slot keeps the count: the top four bits. A piece of `n` bytes
/// holds 1 to `n` tokens (a token is at least one byte), so 1..=15 fits, and
/// 0 marks a pending count.
const COUNT_SHIFT: u32 = 124;

/// Open addressing with linear probing over `u128` slots: 0 is an empty
/// slot (no key is 0: a key's length field is at least 1), any other value
/// is [`pack`]'s key with the count in its top four bits.
#[derive(Clone)]
struct PackedTable {
    /// A power of two slots (or none before the first insert), at most half
    /// of them full.
    slots: Vec<u128>,
    len: usize,
    /// This table's hash key, drawn per table: pieces come from documents,
    /// and a document crafted to collide under a fixed hash would turn every
    /// lookup into a walk along one cluster. The layout is all it changes.
    seed: [u64; 2],
}

impl Default for PackedTable {
    fn default() -> Self {
        use std::hash::BuildHasher;
        let state = std::collections::hash_map::RandomState::new();
        Self {
            slots: Vec::new(),
            len: 0,
            seed: [state.hash_one(0u8), state.hash_one(1u8)],
        }
    }
}

impl std::fmt::Debug for PackedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedTable")
            .field("len", &self.len)
            .field("slots", &self.slots.len())
            .finish()
    }
}

/// The first table's size: 4,096 slots (64 KiB).
const FIRST_SLOTS: usize = 1 << 12;

impl PackedTable {
    /// An empty table with room for `entries` without growing.
    fn with_capacity(entries: usize) -> Self {
        let size = entries.saturating_mul(2).next_power_of_two();
        Self {
            slots: vec![0; size.max(FIRST_SLOTS)],
            ..Self::default()
        }
    }

    /// What the table knows of the piece packed as `key`; an unknown one is
    /// entered as pending. The empty piece (key `0`, the empty slot's value)
    /// is never entered.
    fn probe(&mut self, key: u128) -> Probe {
        if key == 0 {
            return Probe::New;
        }
        match self.find(key) {
            Ok(i) => match self.slots[i] >> COUNT_SHIFT {
                0 => Probe::Pending,
                c => Probe::Known(c as usize),
            },
            Err(empty) => {
                self.insert_at(key, empty);
                Probe::New
            }
        }
    }

    fn fill(&mut self, piece: &[u8], count: usize) {
        // Counts outside 1..=15 cannot happen for pieces of 1..=15 bytes;
        // such a piece simply stays uncached (or pending, and is recounted).
        if piece.is_empty() || !(1..=15).contains(&count) {
            return;
        }
        let key = pack(piece);
        let i = match self.find(key) {
            Ok(i) => i,
            Err(empty) => self.insert_at(key, empty),
        };
        self.slots[i] = key | (count as u128) << COUNT_SHIFT;
    }

    /// The slot holding `key` (`Ok`), or the empty slot where it would go.
    fn find(&self, key: u128) -> Result<usize, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let mut i = slot_of(key, self.slots.len(), self.seed);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return Err(i);
            }
            if slot & KEY_MASK == key {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Enters `key` with a pending count; `empty` is the slot [`find`]
    /// returned for it (it is not in the table). Returns its slot.
    ///
    /// Why the slot is passed in: building the table of whole tokens
    /// (about 100,000 entries, 4 MiB) probed every key twice, and that
    /// build was a quarter of the CLI's start-up (docs/benchmarks-log.md, issue 18,
    /// 2026-12-02 fourth session).
    ///
    /// [`find`]: Self::find
    fn insert_at(&mut self, key: u128, empty: usize) -> usize {
        let i = if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
            match self.find(key) {
                Ok(i) | Err(i) => i,
            }
        } else {
            empty
        };
        self.slots[i] = key;
        self.len += 1;
        i
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|&s| s != 0) {
            let mut i = slot_of(slot & KEY_MASK, size, self.seed);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    fn clear(&mut self) {
        self.slots = Vec::new();
        self.len = 0;
    }
}

/// A key without its count.
const KEY_MASK: u128 = !(0xF << COUNT_SHIFT);

/// The home slot of `key` in a table of `size` (a power of two) slots: the
/// top bits of a keyed multiplicative hash, one half after the other (each
/// half mixed with its own key word before the multiply, so no fixed
/// relation between the halves collides for every seed).
fn slot_of(key: u128, size: usize, seed: [u64; 2]) -> usize {
    let lo = key as u64;
    let hi = (key >> 64) as u64;
    let h = (lo ^ seed[0]).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let h = (h ^ (h >> 29) ^ hi ^ seed[1]).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (h >> (64 - size.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_every_count_through_growth() {
        // Enough keys to grow the table several times, with lengths 1..=15
        // and shared prefixes; pending entries stay pending until filled.
        let mut table = PackedTable::default();
        let keys: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| {
                let len = 1 + (i % 15) as usize;
                let mut k = format!("{i:015}").into_bytes();
                k.truncate(len);
                k.extend(std::iter::repeat_n(b'x', len.saturating_sub(k.len())));
                k
            })
            .collect();
        let want = |k: &[u8]| 1 + (k.iter().map(|&b| b as usize).sum::<usize>() % k.len());
        for k in &keys {
            match table.probe(pack(k)) {
                Probe::New => {}
                Probe::Pending => assert!(table.find(pack(k)).is_ok()),
                Probe::Known(c) => assert_eq!(c, want(k)),
            }
            assert!(matches!(
                table.probe(pack(k)),
                Probe::Pending | Probe::Known(_)
            ));
            table.fill(k, want(k));
        }
        for k in &keys {
            match table.probe(pack(k)) {
                Probe::Known(c) => assert_eq!(c, want(k), "{k:?}"),
                _ => panic!("{k:?} lost"),
            }
        }
        assert!(table.len * 2 <= table.slots.len());
        assert!(matches!(table.probe(pack(b"")), Probe::New));
        assert!(matches!(table.probe(pack(b"")), Probe::New));
    }

    #[test]
    fn every_whole_token_counts_one() {
        // The shortcut of `Encoder::count` holds for every entry of both
        // tables: the encoder itself counts each of them 1. A table that
        // took in a token the encoder splits (or a wrong count) fails here.
        for kind in TokenizerKind::ALL {
            let encoder = Encoder::of(kind.counter());
            let mut checked = 0;
            for &slot in encoder.whole.slots.iter().filter(|&&s| s != 0) {
                let bytes = (slot & KEY_MASK).to_le_bytes();
                let piece = &bytes[..bytes[15] as usize];
                assert_eq!(slot >> COUNT_SHIFT, 1, "{piece:?}");
                assert_eq!(encoder.bpe.count(piece), 1, "{kind:?} {piece:?}");
                checked += 1;
            }
            // Nearly all of the vocabulary (98,453 of cl100k's 100,256
            // tokens, 192,951 of o200k's 199,998) is short, valid UTF-8.
            assert!(
                checked > encoder.bpe.num_tokens() * 9 / 10,
                "{kind:?}: {checked}"
            );
            // A whole token is in the table; a piece of several tokens is
            // not, and is counted by the encoder.
            assert!(encoder.whole.find(pack(b" the")).is_ok());
            let several = " zqxjkv";
            assert!(encoder.bpe.count(several.as_bytes()) > 1);
            assert!(encoder.whole.find(pack(several.as_bytes())).is_err());
            assert_eq!(
                encoder.count(several),
                encoder.bpe.count(several.as_bytes())
            );
        }
    }

    #[test]
    fn every_short_token_is_in_its_whole_table() {
        for kind in TokenizerKind::ALL {
            let encoder = Encoder::of(kind.counter());
            let mut expected = 0;
            for id in 0..encoder.bpe.num_tokens() {
                let bytes = encoder.bpe.token_bytes(id as u32);
                if (1..=PACKED_PIECE_BYTES).contains(&bytes.len())
                    && std::str::from_utf8(bytes).is_ok()
                {
                    assert!(encoder.whole.find(pack(bytes)).is_ok(), "{kind:?} {id}");
                    expected += 1;
                }
            }
            assert_eq!(encoder.whole.len, expected, "{kind:?}");
        }
    }

    #[test]
    fn radix_sort_sorts() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for (n, mask) in [
            (0, u64::MAX),
            (1, u64::MAX),
            (5_000, 0x3_FFFF << 32 | 0xFFFF),
            (3_000, u64::MAX),
            (100, 7),
        ] {
            let values: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x & mask
                })
                .collect();
            let mut expected = values.clone();
            expected.sort_unstable();
            let mut all = values.clone();
            radix_sort(&mut all, 0);
            assert_eq!(all, expected);
            // From bit 32: ordered by the top half, ties in their order.
            let mut high = values.clone();
            expected = values.clone();
            expected.sort_by_key(|v| v >> 32);
            radix_sort(&mut high, 32);
            assert_eq!(high, expected);
        }
    }

    #[test]
    fn a_key_read_from_the_text_is_the_copied_key() {
        // Every piece of every length at every offset, near the end of the
        // text (where fewer than 16 bytes remain) included.
        let text = "ab cde\nfghij klmnopqrstuvwxyz 0123456789 ÄÖÜ end";
        for start in 0..text.len() {
            for end in start..=text.len().min(start + PACKED_PIECE_BYTES) {
                let piece = &text.as_bytes()[start..end];
                assert_eq!(
                    pack_at(text.as_bytes(), start, piece),
                    pack(piece),
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn each_table_draws_its_own_hash_key() {
        // Two tables place the same keys differently (a fixed layout is what
        // a crafted document could flood); both still find every key.
        let (a, b) = (PackedTable::default(), PackedTable::default());
        assert_ne!(a.seed, b.seed);
        let keys: Vec<u128> = (0..64u8).map(|i| pack(&[b'a', i])).collect();
        assert!(keys
            .iter()
            .any(|&k| slot_of(k, FIRST_SLOTS, a.seed) != slot_of(k, FIRST_SLOTS, b.seed)));
    }
}
