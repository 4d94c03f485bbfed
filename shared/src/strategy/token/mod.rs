//! The `token` strategy: fixed windows of `chunk_size` tokens with
//! `chunk_overlap` tokens of overlap (LangChain `TokenTextSplitter`, chonkie
//! `TokenChunker`), profile `token-v1`.
//!
//! Windows are cut where a token boundary is also a word start (a
//! pretokenizer piece boundary, which is always a character boundary), so no
//! chunk ends in half a character or half a word, unlike decoding raw token
//! windows (LangChain's windows can end in a broken UTF-8 sequence). Each
//! window holds at most `chunk_size` tokens, counted exactly on its text; the
//! next one starts up to `chunk_overlap` tokens before the previous end, at a
//! word start.

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::record::Chunk;
use crate::chunk::span::chunks_from_spans;
use crate::error::ChunkError;
use crate::markdown::parse::front_matter_len;
use crate::strategy::params::{ParamError, Params, TARGET_TOKENS};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::tokens::DocumentTokens;

/// Fixed token windows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Token;

impl Strategy for Token {
    fn name(&self) -> &'static str {
        "token"
    }

    /// 1.1.0: `conditional` breadcrumbs follow the per-chunk file format exactly (a chunk
    /// that starts a section gets the full breadcrumb, its own heading
    /// included; "short" is below the minimum plus the overlap, 64 + overlap
    /// for strategies without a minimum).
    /// Control characters (C0/C1, DEL, bidi controls) are removed during
    /// normalization (issue 15), so such documents' output changes too.
    fn version(&self) -> &'static str {
        "1.1.0"
    }

    fn summary(&self) -> &'static str {
        "fixed windows of N tokens with overlap, cut at word starts"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &["chunk_size", "chunk_overlap"]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/token-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let chunk_size = p.usize_in("chunk_size", Some(512), TARGET_TOKENS)?;
        let chunk_overlap = p.usize_in(
            "chunk_overlap",
            Some(64.min(chunk_size / 2)),
            0..=chunk_size / 2,
        )?;
        Ok(Arc::new(TokenChunker {
            chunk_size,
            chunk_overlap,
        }))
    }
}

/// The token strategy configured by one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenChunker {
    /// Tokens per window, at most.
    pub chunk_size: usize,
    /// Tokens shared with the previous window, at most.
    pub chunk_overlap: usize,
}

/// Window spans over `range`: each at most `size` tokens, the next starting
/// up to `overlap` tokens before the previous end; trimmed of whitespace.
pub(crate) fn windows(
    tokens: &DocumentTokens<'_>,
    range: Range<usize>,
    size: usize,
    overlap: usize,
) -> Vec<Range<usize>> {
    windows_snapped(tokens, range, size, overlap, |_, end| end, |back, _| back)
}

/// [`windows`] whose ends `snap(start, end)` may move back (to a sentence
/// end, say: any position in `start + 1..=end` on a character boundary),
/// and whose overlap starts `snap_start(back, end)` may move forward (to a
/// sentence start in `back..end`).
pub(crate) fn windows_snapped(
    tokens: &DocumentTokens<'_>,
    range: Range<usize>,
    size: usize,
    overlap: usize,
    snap: impl Fn(usize, usize) -> usize,
    snap_start: impl Fn(usize, usize) -> usize,
) -> Vec<Range<usize>> {
    let text = tokens.text();
    let skip = |p: usize| p + (text[p..range.end].len() - text[p..range.end].trim_start().len());
    let mut spans = Vec::new();
    let mut start = skip(range.start);
    let trim_end = |from: usize, to: usize| from + text[from..to].trim_end().len();
    while start < range.end {
        let mut end = tokens.window_end(start, range.end, size);
        if end < range.end {
            let snapped = snap(start, end);
            if snapped > start && snapped <= end && text.is_char_boundary(snapped) {
                end = snapped;
            }
        }
        let mut trimmed = trim_end(start, end);
        // Trailing whitespace can share a token with what precedes it, so
        // the trimmed window may count one more: shorten until it fits.
        while trimmed > start && tokens.exceeds(start..trimmed, size) {
            end = tokens.window_end(start, trimmed, size);
            trimmed = trim_end(start, end);
        }
        if trimmed > start {
            spans.push(start..trimmed);
        }
        if end >= range.end {
            break;
        }
        let mut next = if overlap > 0 {
            let back = tokens.tail_start(start, end, overlap);
            let back = tokens.piece_boundary_at_or_after(back, end);
            match snap_start(back, end) {
                s if s >= back && s < end && text.is_char_boundary(s) => s,
                _ => back,
            }
        } else {
            end
        };
        next = skip(next);
        // Always move forward: an overlap that would restart the window
        // where it began yields to the window's end.
        start = if next <= start { skip(end) } else { next };
    }
    spans
}

impl Chunker for TokenChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.chunk_size,
            hard_max_tokens: self.chunk_size,
            min_tokens: 0,
            overlap_tokens: self.chunk_overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("chunk_size".into(), (self.chunk_size as i64).into());
        t.insert("chunk_overlap".into(), (self.chunk_overlap as i64).into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let spans = windows(
            input.tokens,
            body..text.len(),
            self.chunk_size,
            self.chunk_overlap,
        );
        Ok(chunks_from_spans(input, &spans, true))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tokens::{TokenCounter, TokenizerKind};

    #[test]
    fn windows_hold_at_most_n_tokens_overlap_and_end_at_word_starts() {
        let text: String = (0..300).map(|i| format!("word{i} ")).collect();
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
        let spans = windows(&tokens, 0..text.len(), 100, 20);
        assert!(spans.len() > 5);
        for w in spans.windows(2) {
            assert!(w[1].start < w[0].end, "windows overlap");
            assert!(w[1].start > w[0].start, "windows advance");
            let shared = tokens.count(w[1].start..w[0].end);
            assert!((10..=20).contains(&shared), "overlap {shared}");
        }
        for s in &spans {
            let t = &text[s.clone()];
            assert!(tokens.counter().count(t) <= 100);
            assert!(t.starts_with("word") && !t.ends_with(' '), "{t:?}");
        }
        assert_eq!(spans.last().unwrap().end, text.trim_end().len());
    }

    #[test]
    fn a_long_string_without_spaces_is_cut_inside_at_char_boundaries() {
        let text = "абв".repeat(400);
        let tokens = DocumentTokens::new(TokenizerKind::Cl100kBase.counter(), &text);
        let spans = windows(&tokens, 0..text.len(), 100, 10);
        assert!(spans.len() > 2);
        for s in &spans {
            assert!(tokens.counter().count(&text[s.clone()]) <= 100);
        }
    }
}
