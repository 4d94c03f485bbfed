//! Page breaks across normalization: a PDF text export separates its pages
//! with form feeds, which step 2 removes with the other controls; their
//! places in the normalized text are kept in
//! [`NormalizedDocument::page_breaks`](super::NormalizedDocument).

use crate::source_map::SourceMap;

/// The normalized byte offsets of the form feeds of `bytes`, in order, one
/// per place (two form feeds with nothing kept between them are one break).
/// Empty when the input has none: the scan is all most documents pay.
pub(super) fn form_feeds(bytes: &[u8], text: &str) -> Vec<usize> {
    if memchr::memchr(b'\x0c', bytes).is_none() {
        return Vec::new();
    }
    let Ok(original) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let Some(map) = SourceMap::new(original, text) else {
        return Vec::new();
    };
    let mut breaks: Vec<usize> = memchr::memchr_iter(b'\x0c', bytes)
        .map(|at| map.normalized_at(at))
        .collect();
    breaks.dedup();
    breaks
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use crate::normalize::{normalize, normalize_with_blocks};

    #[test]
    fn form_feeds_are_removed_and_their_places_kept() {
        let src = "Page one text.\n\u{c}Page two   text.\r\n\u{c}\u{c}\nThree.\u{c}";
        let doc = normalize(src.as_bytes()).unwrap();
        assert_eq!(doc.text, "Page one text.\nPage two text.\n\nThree.");
        let at: Vec<&str> = doc.page_breaks.iter().map(|&b| &doc.text[b..]).collect();
        assert_eq!(at, ["Page two text.\n\nThree.", "\nThree.", ""]);
        let (with_blocks, _) = normalize_with_blocks(src.as_bytes()).unwrap();
        assert_eq!(with_blocks, doc);
    }

    #[test]
    fn no_form_feed_no_break() {
        let doc = normalize(b"# Title\n\nText.\n").unwrap();
        assert!(doc.page_breaks.is_empty());
    }
}
