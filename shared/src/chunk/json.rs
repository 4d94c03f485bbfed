//! A chunk record as one line of JSON, byte for byte what `serde_json`
//! writes for [`Chunk`]'s derived `Serialize`, but with strings escaped
//! eight bytes at a time: `serde_json` tests every byte of a string and
//! makes a separate write for each escaped line feed, which was 5% of
//! `chunk-worker chunk` (issue 18). The derive stays the definition: tests
//! compare the two over every fixture, profile and generated string.

use std::ops::Range;

use super::record::Chunk;

use crate::swar::{bytes_equal, has_less, word};

/// Whether some byte of `w` is a quote, a backslash or below 0x20 (may say
/// yes when none is; never no when one is).
#[inline]
fn may_need_escape(w: u64) -> bool {
    has_less(w, 0x20) || (bytes_equal(w, b'"') | bytes_equal(w, b'\\')) != 0
}

/// Appends `s` as a JSON string, escaped as `serde_json` escapes it: `"`,
/// `\`, and the C0 controls (`\b \t \n \f \r` by name, the others as
/// `\u00xx`); everything else as it is.
pub fn push_json_str(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(w) = word(bytes, i) {
            if !may_need_escape(w) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[run..i]);
        out.extend_from_slice(escape);
        i += 1;
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

fn key(out: &mut Vec<u8>, first: bool, name: &str) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

fn str_field(out: &mut Vec<u8>, name: &str, value: &str) {
    key(out, false, name);
    push_json_str(value, out);
}

fn num_field(out: &mut Vec<u8>, name: &str, value: u64) {
    key(out, false, name);
    push_decimal(value, out);
}

/// Appends `value` in decimal, as `serde_json` writes an integer, without
/// the allocation of `to_string` (eleven numbers per chunk).
fn push_decimal(value: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(decimal(value, &mut [0u8; 20]));
}

/// `n` in decimal, as `format!("{n}")` and `serde_json` write it, in `buf`
/// (chunk ids hash the ordinal and offsets this way too).
pub(crate) fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

fn opt_str_field(out: &mut Vec<u8>, name: &str, value: Option<&str>) {
    match value {
        Some(v) => str_field(out, name, v),
        None => {
            key(out, false, name);
            out.extend_from_slice(b"null");
        }
    }
}

/// Appends `embed_text` as a JSON string, where `out[text]` already holds
/// `chunk_text` as one. An embed text is mostly a breadcrumb in front of the
/// chunk's text, or the text itself: escaping works character by character,
/// so the escaped text is copied instead of escaping it a second time.
fn push_embed_text(embed_text: &str, chunk_text: &str, text: Range<usize>, out: &mut Vec<u8>) {
    match embed_text.strip_suffix(chunk_text) {
        Some(head) => {
            push_json_str(head, out);
            // Drop the head's closing quote; the copy brings the text's
            // characters (past its opening quote) and its closing quote.
            out.pop();
            out.extend_from_within(text.start + 1..text.end);
        }
        None => push_json_str(embed_text, out),
    }
}

fn value_field(
    out: &mut Vec<u8>,
    name: &str,
    value: &serde_json::Value,
) -> Result<(), serde_json::Error> {
    key(out, false, name);
    serde_json::to_writer(&mut *out, value)
}

/// Appends `chunk` as one JSON object (no line feed), in [`Chunk`]'s field
/// order with its `skip_serializing_if` rules.
///
/// # Errors
///
/// Whatever `serde_json` reports for the `metadata` or `facet_json` value.
pub fn push_chunk_json(chunk: &Chunk, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let c = chunk;
    out.push(b'{');
    key(out, true, "chunk_id");
    push_json_str(&c.chunk_id, out);
    str_field(out, "tenant_id", &c.tenant_id);
    str_field(out, "document_id", &c.document_id);
    str_field(out, "source_version_id", &c.source_version_id);
    num_field(out, "ordinal", u64::from(c.ordinal));
    str_field(out, "granularity", c.granularity.as_str());
    str_field(out, "chunk_type", c.chunk_type.as_str());
    key(out, false, "headings_path");
    out.push(b'[');
    for (n, h) in c.headings_path.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        push_json_str(h, out);
    }
    out.push(b']');
    str_field(out, "chunk_path", &c.chunk_path);
    key(out, false, "chunk_text");
    let text = out.len();
    push_json_str(&c.chunk_text, out);
    let text = text..out.len();
    key(out, false, "embed_text");
    push_embed_text(&c.embed_text, &c.chunk_text, text, out);
    if let Some(n) = c.embed_token_count {
        num_field(out, "embed_token_count", u64::from(n));
    }
    num_field(out, "token_count", u64::from(c.token_count));
    num_field(out, "char_start", c.char_start);
    num_field(out, "char_end", c.char_end);
    num_field(out, "byte_start", c.byte_start);
    num_field(out, "byte_end", c.byte_end);
    num_field(out, "block_start_idx", u64::from(c.block_start_idx));
    num_field(out, "block_end_idx", u64::from(c.block_end_idx));
    num_field(
        out,
        "overlap_prefix_chars",
        u64::from(c.overlap_prefix_chars),
    );
    num_field(
        out,
        "closing_suffix_chars",
        u64::from(c.closing_suffix_chars),
    );
    str_field(out, "content_hash", &c.content_hash);
    str_field(out, "profile", &c.profile);
    str_field(out, "chunker_version", &c.chunker_version);
    str_field(out, "tokenizer", &c.tokenizer);
    opt_str_field(out, "source_url", c.source_url.as_deref());
    opt_str_field(out, "file_path", c.file_path.as_deref());
    if let Some(m) = &c.metadata {
        value_field(out, "metadata", m)?;
    }
    if let Some(k) = &c.chunk_key {
        str_field(out, "chunk_key", k);
    }
    if let Some(p) = &c.parent_chunk_id {
        str_field(out, "parent_chunk_id", p);
    }
    if let Some(t) = c.is_table {
        key(out, false, "is_table");
        out.extend_from_slice(if t { b"true" } else { b"false" });
    }
    if let Some(f) = &c.facet_json {
        value_field(out, "facet_json", f)?;
    }
    if let Some(p) = c.page_start {
        num_field(out, "page_start", u64::from(p));
    }
    if let Some(p) = c.page_end {
        num_field(out, "page_end", u64::from(p));
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Strings with every escaped byte, at every offset of the
        /// eight-byte words, next to multi-byte characters.
        #[test]
        fn strings_escape_as_serde_json_does(
            pieces in prop::collection::vec(prop::sample::select(vec![
                "a", "bcdefgh", "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{0}", "\u{1}",
                "\u{1f}", "\u{7f}", " ", "/", "ж", "\u{2028}", "\u{1f600}", "é",
            ]), 0..48)
        ) {
            let s: String = pieces.concat();
            let mut mine = Vec::new();
            push_json_str(&s, &mut mine);
            prop_assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&s).unwrap());
        }

        /// An embed text written from the chunk text's escaped copy is the
        /// embed text escaped: with the text as its suffix (a breadcrumb in
        /// front, or none), and without (then escaped in full).
        #[test]
        fn embed_text_escapes_as_serde_json_does(
            head in prop::collection::vec(prop::sample::select(vec![
                "a", " > ", "\"", "\\", "\n", "\u{1}", "ж", "\u{1f600}",
            ]), 0..8),
            text in prop::collection::vec(prop::sample::select(vec![
                "a", "bcdefgh", "\"", "\\", "\n", "\t", "\u{0}", "ж", "\u{2028}",
            ]), 0..24),
            suffix in any::<bool>(),
        ) {
            let text: String = text.concat();
            let embed = if suffix { head.concat() + &text } else { head.concat() + "x" };
            let mut out = b"prefix".to_vec();
            let start = out.len();
            push_json_str(&text, &mut out);
            let range = start..out.len();
            let before = out.len();
            push_embed_text(&embed, &text, range, &mut out);
            prop_assert_eq!(
                String::from_utf8(out[before..].to_vec()).unwrap(),
                serde_json::to_string(&embed).unwrap()
            );
        }
    }

    #[test]
    fn integers_print_as_serde_json_does() {
        for v in [
            0,
            1,
            9,
            10,
            99,
            100,
            12_345,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut mine = Vec::new();
            push_decimal(v, &mut mine);
            assert_eq!(
                String::from_utf8(mine).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
        }
    }

    #[test]
    fn every_control_character_escapes_as_serde_json_does() {
        for b in 0u8..0x80 {
            let s = format!("ab{}cdefghijk{}", b as char, b as char);
            let mut mine = Vec::new();
            push_json_str(&s, &mut mine);
            assert_eq!(
                String::from_utf8(mine).unwrap(),
                serde_json::to_string(&s).unwrap(),
                "{b}"
            );
        }
    }
}
