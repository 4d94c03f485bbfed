//! Robustness: arbitrary bytes, arbitrary strings and Markdown soup chunk
//! without panics; invalid UTF-8 is reported at its offset.

use proptest::prelude::*;
use shared::normalize::normalize;
use shared::{ChunkError, ErrorCode};

use crate::common::{self, engine, invariant_violations, meta, Level};
use crate::config;

/// Markdown-flavoured character soup: every structural character in odd
/// combinations.
fn soup() -> impl Strategy<Value = String> {
    let atoms = proptest::sample::select(
        &[
            "\u{1b}[31m",
            "\u{202e}",
            "\u{0}",
            "\u{85}",
            "\u{c}",
            "#",
            "# ",
            "## ",
            "-",
            "- ",
            "* ",
            "+ ",
            "1. ",
            "2) ",
            "`",
            "```",
            "~~~",
            "|",
            "| a |",
            "|---|",
            ">",
            "> ",
            " ",
            "  ",
            "    ",
            "\t",
            "\n",
            "\n\n",
            "\r",
            "\r\n",
            "a",
            "word",
            "слово",
            ".",
            "!",
            "?",
            "e.g.",
            "***",
            "---",
            "___",
            "===",
            "<div>",
            "</div>",
            "<!--",
            "-->",
            "[x]: /u",
            "[x]",
            "*",
            "_",
            "\\",
            "&amp;",
            "👍",
            "e\u{301}",
            "\u{a0}",
            "\u{200b}",
            "\u{feff}",
            "{#id}",
            "+++",
            "...",
            "\u{2028}",
            "\u{85}",
            "\0",
            "\u{c}",
        ][..],
    );
    proptest::collection::vec(atoms, 0..120).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(300))]

    /// Arbitrary bytes never panic; invalid UTF-8 is `INVALID_UTF8` at the
    /// offset of the first bad byte.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_bytes(&bytes)?;
    }

    /// Valid Markdown with bad bytes spliced in.
    #[test]
    fn markdown_with_invalid_bytes_reports_the_offset(
        s in soup(),
        at in any::<prop::sample::Index>(),
        bad in proptest::sample::select(BAD_BYTES),
    ) {
        let mut bytes = s.into_bytes();
        let i = at.index(bytes.len() + 1);
        bytes.splice(i..i, bad.iter().copied());
        check_bytes(&bytes)?;
    }

    /// Arbitrary strings and Markdown soup chunk without panics or errors,
    /// and the basic invariants hold.
    #[test]
    fn arbitrary_strings_chunk_cleanly(s in prop_oneof![any::<String>(), soup()]) {
        for pr in common::all_profiles() {
            let p = pr.name.as_str();
            let out = engine().chunk(s.as_bytes(), &meta("props", "soup", "v1"), Some(p));
            let out = match out {
                Ok(d) => d,
                Err(e) => return Err(TestCaseError::fail(format!("{p}: {e}\n{e:?}"))),
            };
            let level = common::level_for(pr, Level::Basic);
            let v = invariant_violations(&out.normalized, &out.chunks, pr, level);
            prop_assert!(v.is_empty(), "{p}: {}", common::describe(&v));
        }
    }

    /// Normalization is idempotent on arbitrary strings and soup.
    #[test]
    fn normalization_is_idempotent(s in prop_oneof![any::<String>(), soup()]) {
        let once = normalize(s.as_bytes()).unwrap();
        let twice = normalize(once.text.as_bytes()).unwrap();
        prop_assert_eq!(&once.text, &twice.text);
        // A form feed's place is kept, in order, inside the text; the
        // normalized text has none left to keep.
        prop_assert!(twice.page_breaks.is_empty());
        prop_assert!(once.page_breaks.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(once.page_breaks.iter().all(|&b| b <= once.text.len() && once.text.is_char_boundary(b)));
        prop_assert_eq!(once.page_breaks.is_empty(), !s.contains('\u{c}'));
        // No control character survives, and the original maps back.
        let kept: Vec<char> = once
            .text
            .chars()
            .filter(|c| shared::normalize::is_removed_control(*c))
            .collect();
        prop_assert!(kept.is_empty(), "{:?}", kept);
        prop_assert!(shared::source_map::SourceMap::new(&s, &once.text).is_some());
    }
}

/// Invalid UTF-8 sequences: stray bytes, truncated sequences, surrogates,
/// over-long forms.
const BAD_BYTES: &[&[u8]] = &[
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\x80",
];

fn check_bytes(bytes: &[u8]) -> Result<(), TestCaseError> {
    for p in common::all_profiles() {
        check_bytes_with(bytes, &p.name)?;
    }
    Ok(())
}

fn check_bytes_with(bytes: &[u8], profile: &str) -> Result<(), TestCaseError> {
    let result = engine().chunk(bytes, &meta("props", "bytes", "v1"), Some(profile));
    match std::str::from_utf8(bytes) {
        Ok(_) => {
            prop_assert!(result.is_ok(), "valid UTF-8 failed: {:?}", result.err());
        }
        Err(e) => match result {
            Err(err @ ChunkError::InvalidUtf8 { byte_offset }) => {
                prop_assert_eq!(byte_offset, e.valid_up_to());
                prop_assert_eq!(err.code(), ErrorCode::InvalidUtf8);
                prop_assert_eq!(err.code().as_str(), "INVALID_UTF8");
            }
            other => prop_assert!(false, "invalid UTF-8 gave {other:?}"),
        },
    }
    Ok(())
}
