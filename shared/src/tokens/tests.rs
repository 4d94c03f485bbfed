//! Tests of [`DocumentTokens`]: every fast answer must equal a direct count.

// Tests state their expectations with unwrap/expect on values they built.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::cache::{pack, CACHED_PIECE_BYTES};
use super::index::MISS_BATCH_PIECES;
use super::*;
use std::ops::Range;

/// Fragments that stress the pretokenizer: whitespace runs (the `\s+(?!\S)`
/// look-ahead and `\s+$`), newline runs, punctuation followed by newlines,
/// contractions, digit runs (split in threes), scripts with and without case,
/// marks, emoji, tabs and odd Unicode spaces, long words and code.
const FRAGMENTS: &[&str] = &[
    " ",
    "  ",
    "     ",
    "\n",
    "\n\n",
    "\n\n\n",
    " \n",
    "\n ",
    " \n\n ",
    "\t",
    "\t\t",
    " \t",
    "\r\n",
    "\r",
    ".",
    ",",
    ".\n\n",
    "!?",
    "...",
    "'s",
    "'S",
    "'ll",
    "'re",
    "'",
    "'l",
    "don't",
    "12345",
    "1",
    "1234567",
    "3.14",
    "a",
    "hello",
    "World",
    "HTTPServer",
    "ABC",
    "iPhone",
    "supercalifragilisticexpialidocious",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "中文字符",
    "日本語のテキスト",
    "Привет",
    " мир",
    "Ёлка",
    "😀",
    "👍🏽",
    "👨‍👩‍👧",
    "e\u{301}",
    "\u{301}",
    "\u{301}\u{302}",
    "ǅ",
    "ʰ",
    "ß",
    "İ",
    "١٢٣",
    "Ⅻ",
    "½",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{200b}",
    "—",
    "-",
    "fn main() {",
    "}",
    "    let x = 1;",
    "//",
    "/*",
    "->",
    "::",
    "https://example.com/a/b?c=d",
    "/path/to/file.rs",
    "# Heading",
    "| a | b |",
    "```rust",
    "* item",
    "x",
];

/// The tokenizers to check.
fn counters() -> [Bpe; 2] {
    TokenizerKind::ALL.map(TokenizerKind::counter)
}

/// The char boundaries of `text`, end included.
fn char_boundaries(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect()
}

/// A document made of `picks` (indexes into [`FRAGMENTS`]).
fn document(picks: &[usize]) -> String {
    picks
        .iter()
        .map(|&i| FRAGMENTS[i % FRAGMENTS.len()])
        .collect()
}

/// Asserts that every range of `text` on char boundaries counts exactly.
fn assert_all_ranges_exact(text: &str) {
    let bounds = char_boundaries(text);
    for counter in counters() {
        let doc = DocumentTokens::new(counter, text);
        assert_eq!(
            doc.total(),
            counter.count(text),
            "{} total of {text:?}",
            counter.name()
        );
        for (i, &a) in bounds.iter().enumerate() {
            for &b in &bounds[i..] {
                assert_eq!(
                    doc.count(a..b),
                    counter.count(&text[a..b]),
                    "{} count of {a}..{b} = {:?} in {text:?}",
                    counter.name(),
                    &text[a..b]
                );
            }
        }
    }
}

/// Asserts the `cut_points` contract for `range` and `max_tokens`.
fn assert_cut_points(doc: &DocumentTokens<'_>, range: Range<usize>, max_tokens: usize) {
    let text = doc.text();
    let counter = doc.counter();
    let cuts = doc.cut_points(range.clone(), max_tokens);
    let fits_whole = counter.count(&text[range.clone()]) <= max_tokens;
    let one_char_range = text[range.clone()].chars().count() == 1;
    assert_eq!(
        cuts.is_empty(),
        fits_whole || one_char_range,
        "cuts {cuts:?} of {range:?}"
    );
    if range.is_empty() {
        return;
    }
    let mut edges = vec![range.start];
    edges.extend(&cuts);
    edges.push(range.end);
    for part in edges.windows(2) {
        let (s, e) = (part[0], part[1]);
        assert!(s < e, "cuts must be strictly ascending: {edges:?}");
        assert!(text.is_char_boundary(e), "cut {e} is not a char boundary");
        let tokens = counter.count(&text[s..e]);
        let one_char = text[s..e].chars().count() == 1;
        assert!(
            tokens <= max_tokens || one_char,
            "part {s}..{e} has {tokens} > {max_tokens} tokens"
        );
        if e == range.end {
            continue;
        }
        if doc.is_piece_boundary(e) {
            // Greedy: the next piece boundary would not have fitted.
            let next = (e + 1..=range.end)
                .find(|&x| doc.is_piece_boundary(x) || x == range.end)
                .unwrap();
            assert!(
                counter.count(&text[s..next]) > max_tokens,
                "part {s}..{e} could have run to the boundary {next} (max {max_tokens})"
            );
        } else {
            // Inside a piece only when the first piece of the part is too long.
            let first = (s + 1..=range.end)
                .find(|&x| doc.is_piece_boundary(x) || x == range.end)
                .unwrap();
            assert!(
                e < first,
                "in-piece cut {e} must lie inside the first piece {s}..{first}"
            );
            assert!(
                counter.count(&text[s..first]) > max_tokens,
                "part {s}..{e} cuts a piece that fits (max {max_tokens})"
            );
            // Greedy over the token boundaries of the piece's encoding that
            // are char boundaries: the next such boundary would not fit.
            let tokenizer = counter.tokenizer();
            let mut next = s;
            for id in tokenizer.encode(&text[s..first]) {
                next += tokenizer.bpe.token_len(id);
                if next > e && text.is_char_boundary(next) {
                    break;
                }
            }
            if next < first && !one_char {
                assert!(
                    counter.count(&text[s..next]) > max_tokens,
                    "in-piece part {s}..{e} could have run to the token boundary {next} (max {max_tokens})"
                );
            }
        }
    }
}

/// Asserts the `tail_start` contract.
fn assert_tail_start(doc: &DocumentTokens<'_>, floor: usize, end: usize, tokens: usize) {
    let text = doc.text();
    let counter = doc.counter();
    let p = doc.tail_start(floor, end, tokens);
    assert!(
        p >= floor && p <= end && text.is_char_boundary(p),
        "tail_start {p} out of {floor}..{end}"
    );
    assert!(
        counter.count(&text[p..end]) <= tokens,
        "tail {p}..{end} over {tokens}"
    );
    if p > floor {
        let before = text[..p]
            .char_indices()
            .next_back()
            .map(|(i, _)| i)
            .unwrap();
        assert!(
            counter.count(&text[before..end]) > tokens,
            "tail could start one char earlier than {p} (floor {floor}, tokens {tokens})"
        );
    }
}

#[test]
fn tokenizer_names_round_trip() {
    for kind in TokenizerKind::ALL {
        assert_eq!(TokenizerKind::parse(kind.name()), Some(kind));
        assert_eq!(kind.counter().name(), kind.name());
    }
    assert_eq!(TokenizerKind::parse("gpt2"), None);
}

#[test]
fn empty_document_counts_zero() {
    for counter in counters() {
        let doc = DocumentTokens::new(counter, "");
        assert_eq!(doc.count(0..0), 0);
        assert_eq!(doc.total(), 0);
        assert!(doc.cut_points(0..0, 1).is_empty());
        assert_eq!(doc.tail_start(0, 0, 0), 0);
    }
}

#[test]
fn every_range_of_tricky_texts_counts_exactly() {
    let texts = [
        "Hello world, it's 2024!\n\n  Next paragraph.\n",
        "a  b   c    \n\n\n   d\t\te \u{a0} f\u{3000}g   ",
        "中ABCDEF ghi 中ABCdef 'll'LL's ǅx ʰa",
        "12345678 9.99 ١٢٣٤ 1,000,000 Ⅻ½",
        "fn main() {\n    let x = \"y\";\n    // comment\n}\n\n",
        ".\n\n.\n\n\n...\n \n//\n/// doc\n",
        "Привет, мир! Ёлка's 'Tis don'T I'M we'Re",
        "e\u{301}\u{301} \u{301}x 👍🏽👨‍👩‍👧 😀😀 \u{200b}\u{2028}z",
        "    \n    \n",
        "x\r\n\r\ny\rz \r ",
    ];
    for text in texts {
        assert_all_ranges_exact(text);
    }
}

#[test]
fn exceeds_is_exact_and_cheap_on_huge_pieces() {
    let text = "a".repeat(300_000) + " b";
    for counter in counters() {
        let doc = DocumentTokens::new(counter, &text);
        let want = counter.count(&text[7..]);
        assert!(doc.exceeds(7..text.len(), 100));
        assert!(!doc.exceeds(7..text.len(), want));
        assert!(doc.exceeds(7..text.len(), want - 1));
        assert_eq!(doc.count(7..text.len()), want);
    }
}

#[test]
fn long_piece_is_cut_at_token_boundaries() {
    let text = "abcdefghij".repeat(500) + " tail";
    for counter in counters() {
        let doc = DocumentTokens::new(counter, &text);
        for max_tokens in [1, 7, 50, 300] {
            assert_cut_points(&doc, 0..text.len(), max_tokens);
            assert_cut_points(&doc, 3..text.len() - 2, max_tokens);
        }
    }
}

#[test]
fn long_piece_of_multibyte_chars_is_cut_on_char_boundaries() {
    let text = "Ёжик中文😀".repeat(300);
    for counter in counters() {
        let doc = DocumentTokens::new(counter, &text);
        for max_tokens in [1, 4, 9, 100] {
            assert_cut_points(&doc, 0..text.len(), max_tokens);
        }
    }
}

#[test]
fn cut_points_prefer_word_starts() {
    let text = "one two three four five six seven eight nine ten";
    let doc = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), text);
    let cuts = doc.cut_points(0..text.len(), 3);
    assert_eq!(cuts, vec![13, 27, 44], "cuts {cuts:?}");
    assert_cut_points(&doc, 0..text.len(), 3);
}

#[test]
fn index_stays_small() {
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(20_000);
    let doc = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
    // Bitmap (1/8) + checkpoints (1/8) + one byte per piece (about 1/5 of
    // the bytes here) stays under two thirds of a byte per document byte.
    assert!(doc.index_heap_bytes() * 3 < text.len() * 2, "{:?}", doc);
    assert_eq!(
        doc.piece_count(),
        doc.counter().tokenizer().split(&text).count()
    );
}

/// Strategy: a document of up to `max` fragments.
fn picks(max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..FRAGMENTS.len(), 0..max)
}

proptest! {
    // No regression files: the seeds that matter are the fragment list.
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn all_ranges_of_small_documents_count_exactly(picks in picks(14)) {
        assert_all_ranges_exact(&document(&picks));
    }

    #[test]
    fn random_ranges_of_larger_documents_count_exactly(
        picks in picks(400),
        ranges in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 40),
    ) {
        let text = document(&picks);
        let bounds = char_boundaries(&text);
        for counter in counters() {
            let doc = DocumentTokens::new(counter, &text);
            for (x, y) in &ranges {
                let (x, y) = (x.get(&bounds), y.get(&bounds));
                let (a, b) = (*x.min(y), *x.max(y));
                let want = counter.count(&text[a..b]);
                prop_assert_eq!(doc.count(a..b), want, "{} {}..{}", counter.name(), a, b);
                // The capped check must agree on both sides of the count.
                for cap in [0, 1, 3, want.saturating_sub(1), want, want + 1] {
                    prop_assert_eq!(doc.exceeds(a..b, cap), want > cap, "{} {}..{} cap {}", counter.name(), a, b, cap);
                }
            }
        }
    }

    #[test]
    fn cut_points_fit_and_are_greedy(
        picks in picks(120),
        x in any::<prop::sample::Index>(),
        y in any::<prop::sample::Index>(),
        max_tokens in 1usize..40,
    ) {
        let text = document(&picks);
        let bounds = char_boundaries(&text);
        let (x, y) = (x.get(&bounds), y.get(&bounds));
        let range = *x.min(y)..*x.max(y);
        for counter in counters() {
            let doc = DocumentTokens::new(counter, &text);
            assert_cut_points(&doc, range.clone(), max_tokens);
        }
    }

    #[test]
    fn tail_start_is_the_smallest_fitting_start(
        picks in picks(120),
        x in any::<prop::sample::Index>(),
        y in any::<prop::sample::Index>(),
        tokens in 0usize..60,
    ) {
        let text = document(&picks);
        let bounds = char_boundaries(&text);
        let (x, y) = (x.get(&bounds), y.get(&bounds));
        for counter in counters() {
            let doc = DocumentTokens::new(counter, &text);
            assert_tail_start(&doc, *x.min(y), *x.max(y), tokens);
        }
    }
}

#[test]
fn packed_keys_tell_pieces_of_every_cached_length_apart() {
    // Same bytes, different lengths (trailing NULs), and pieces on both
    // sides of the packed limit, through one cache: every count must equal
    // the encoder's own.
    let bpe = &bpe_openai::cl100k_base().bpe;
    let mut cache = PieceCache::new(TokenizerKind::Cl100kBase);
    let mut pieces: Vec<String> = vec!["a".into(), "a\0".into(), "a\0\0".into(), "\0".into()];
    for len in 1..=CACHED_PIECE_BYTES + 2 {
        pieces.push("x".repeat(len));
        pieces.push("ab".repeat(len).chars().take(len).collect());
    }
    for _ in 0..2 {
        for p in &pieces {
            let want = bpe.count(p.as_bytes());
            assert_eq!(cache.count(p, || bpe.count(p.as_bytes())), want, "{p:?}");
        }
    }
    assert_ne!(pack(b"a"), pack(b"a\0"));
}

#[test]
fn new_pieces_counted_in_batches_give_the_direct_counts() {
    // More than two batches of pieces; words first seen in one batch and
    // repeated in it (pending) and in later batches (cached), pieces too
    // long to cache, and a warm cache for the second document: every piece
    // count and the total must equal the encoder's own.
    use std::fmt::Write as _;
    let bpe = &bpe_openai::cl100k_base().bpe;
    let counter = TokenizerKind::Cl100kBase.counter();
    let mut text = String::new();
    for i in 0..MISS_BATCH_PIECES {
        let _ = write!(text, "w{} zq{} zq{} ", i % 700, i % 3, i);
        if i % 997 == 0 {
            text.push_str(&"y".repeat(CACHED_PIECE_BYTES + 40));
            text.push(' ');
        }
    }
    let mut cache = PieceCache::new(TokenizerKind::Cl100kBase);
    for round in 0..2 {
        let doc = DocumentTokens::with_cache(counter, &text, &mut cache);
        let pieces: Vec<&str> = counter.pieces(&text).collect();
        assert!(pieces.len() > 2 * MISS_BATCH_PIECES, "{}", pieces.len());
        let mut at = 0;
        for piece in pieces {
            let want = bpe.count(piece.as_bytes());
            assert_eq!(
                doc.count(at..at + piece.len()),
                want,
                "round {round}: {piece:?} at {at}"
            );
            at += piece.len();
        }
        assert!(
            !cache.has_pending(),
            "a pending count was left in the cache"
        );
        assert_eq!(doc.total(), counter.count(&text), "round {round}");
    }
}
