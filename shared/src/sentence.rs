//! Sentence segmentation for English and Russian prose.
//!
//! Placeholder splitter: breaks after `.`, `!` or `?` followed by whitespace.
//! (Being replaced by a real segmenter; see the module's test table.)

use std::ops::Range;

/// Splits `text` into sentences. The returned ranges partition `text`
/// (contiguous, covering every byte, in order); each sentence keeps its
/// trailing whitespace. Empty input gives no ranges.
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?') {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if j > i + 1 && j < bytes.len() {
                spans.push(start..j);
                start = j;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        spans.push(start..text.len());
    }
    spans
}
