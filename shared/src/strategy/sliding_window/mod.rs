//! The `sliding_window` strategy (the Chunking System specification "SlidingWindowChunker"): token
//! windows with overlap, a robust fallback for documents without structure
//! or with noisy OCR; profile `window-v1`.
//!
//! - Windows hold at most `target_tokens` tokens; the next starts at most
//!   `overlap_ratio x target` tokens before the previous end: at the first
//!   sentence start in that stretch, else at a word start.
//! - A window ends at a sentence end when one lies within its last
//!   `sentence_tail` share of tokens (15% by default), else at a word start.
//! - With `tables = "whole"` (the default), tables are not windowed: each is
//!   one chunk of granularity `table` (`is_table = true`) up to
//!   `hard_max_tokens`, split by rows with its header repeated only beyond
//!   it; windows never run across a table. With `tables = "windows"` a table
//!   is text like any other (the window granularity of `hierarchy-v1`).

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::granular::assign_granularities;
use crate::chunk::record::{Chunk, Granularity};
use crate::chunk::span::{fit_pieces, spans_to_pieces};
use crate::chunk::trail::HeadingTrail;
use crate::chunk::split::Splitter;
use crate::chunk::unit::{unit_pieces, SplitCounts};
use crate::error::ChunkError;
use crate::markdown::BlockKind;
use crate::markdown::parse::front_matter_len;
use crate::sentence::sentence_spans;
use crate::strategy::params::{ParamError, Params, MAX_HARD_MAX, OVERLAP_RATIO};
use crate::strategy::token::windows_snapped;
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, PrefixRule, Rules};
use crate::tokens::DocumentTokens;

/// Sliding token windows ending at sentences where they can.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlidingWindow;

/// Window sizes a profile may ask for (the window granularity of a
/// hierarchy is small).
const WINDOW_TOKENS: std::ops::RangeInclusive<usize> = 32..=4096;

impl Strategy for SlidingWindow {
    fn name(&self) -> &'static str {
        "sliding_window"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "token windows with overlap, ending at sentence ends where one is near; tables whole"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &[
            "target_tokens",
            "overlap_ratio",
            "sentence_tail",
            "hard_max_tokens",
            "tables",
        ]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/window-v1.toml")]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let target = p.usize_in("target_tokens", Some(512), WINDOW_TOKENS)?;
        let ratio = p.f64_in("overlap_ratio", 0.25, OVERLAP_RATIO)?;
        let sentence_tail = p.f64_in("sentence_tail", 0.15, 0.0..=0.5)?;
        let tables_whole = p.choice("tables", "whole", &["whole", "windows"])? == "whole";
        // Whole tables may be larger than a window; windowed ones never are.
        let default_max = if tables_whole { target.max(1024) } else { target };
        let hard_max = p.usize_in("hard_max_tokens", Some(default_max), target..=MAX_HARD_MAX)?;
        Ok(Arc::new(SlidingWindowChunker {
            target,
            overlap: (target as f64 * ratio).round() as usize,
            overlap_ratio: ratio,
            sentence_tail,
            hard_max,
            tables_whole,
        }))
    }
}

/// The sliding window strategy configured by one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct SlidingWindowChunker {
    /// Tokens per window, at most.
    pub target: usize,
    /// Tokens shared with the previous window, at most.
    pub overlap: usize,
    overlap_ratio: f64,
    /// Share of a window's tokens at its end where a sentence end is taken.
    pub sentence_tail: f64,
    /// The largest table chunk.
    pub hard_max: usize,
    /// Tables as whole table chunks (else windowed like text).
    pub tables_whole: bool,
}

impl SlidingWindowChunker {
    /// Windows over `region`, ending at sentence ends in each window's tail.
    fn windows(&self, tokens: &DocumentTokens<'_>, region: Range<usize>) -> Vec<Range<usize>> {
        let text = tokens.text();
        let sentences = sentence_spans(&text[region.clone()]);
        let ends: Vec<usize> = sentences
            .iter()
            .map(|s| region.start + s.start + text[region.start + s.start..region.start + s.end].trim_end().len())
            .collect();
        let starts: Vec<usize> = sentences
            .iter()
            .map(|s| {
                let at = region.start + s.start;
                at + (text[at..region.start + s.end].len() - text[at..region.start + s.end].trim_start().len())
            })
            .collect();
        let head = ((self.target as f64) * (1.0 - self.sentence_tail)).floor() as usize;
        let snap = |start: usize, end: usize| {
            let lower = tokens.window_end(start, end, head.max(1));
            let i = ends.partition_point(|&e| e <= end);
            match i.checked_sub(1).map(|k| ends[k]) {
                Some(e) if e >= lower && e > start => e,
                _ => end,
            }
        };
        // Overlap starts at the first sentence start inside it, if any.
        let snap_start = |back: usize, end: usize| {
            let i = starts.partition_point(|&s| s < back);
            starts.get(i).copied().filter(|&s| s < end).unwrap_or(back)
        };
        windows_snapped(tokens, region, self.target, self.overlap, snap, snap_start)
    }
}

impl Chunker for SlidingWindowChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.target,
            hard_max_tokens: self.hard_max,
            min_tokens: 0,
            overlap_tokens: self.overlap,
        }
    }

    fn rules(&self) -> Rules {
        Rules {
            prefixes: PrefixRule::PrecedingOrTableHeader,
            table_header: self.tables_whole,
            ..Rules::UNIVERSAL
        }
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("target_tokens".into(), (self.target as i64).into());
        t.insert("overlap_ratio".into(), self.overlap_ratio.into());
        t.insert("sentence_tail".into(), self.sentence_tail.into());
        t.insert("hard_max_tokens".into(), (self.hard_max as i64).into());
        let tables = if self.tables_whole { "whole" } else { "windows" };
        t.insert("tables".into(), tables.into());
        t
    }

    fn extra_granularities(&self) -> &'static [Granularity] {
        if self.tables_whole {
            &[Granularity::Table]
        } else {
            &[]
        }
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let (blocks, tokens) = (input.blocks, input.tokens);
        let trail = HeadingTrail::new(blocks);
        let split = Splitter::new(text, tokens, self.hard_max, self.hard_max);
        let mut counts = SplitCounts::default();
        let mut pieces = Vec::new();
        let mut tables: Vec<Range<usize>> = Vec::new();
        let mut from = body;
        let region = |from: usize, to: usize, pieces: &mut Vec<_>| {
            if from < to && !text[from..to].trim().is_empty() {
                let spans = self.windows(tokens, from..to);
                let own = spans_to_pieces(text, blocks, &trail, &spans, from, true);
                pieces.extend(fit_pieces(own, tokens, self.target));
            }
        };
        if self.tables_whole {
            for (idx, b) in blocks.iter().enumerate() {
                if b.kind != BlockKind::Table || b.range.start < body {
                    continue;
                }
                region(from, b.range.start, &mut pieces);
                pieces.extend(unit_pieces(
                    &split,
                    blocks,
                    &trail,
                    idx,
                    b.range.start,
                    self.hard_max,
                    &mut counts,
                ));
                tables.push(b.range.clone());
                from = b.range.end;
            }
        }
        region(from, text.len(), &mut pieces);
        let mut ctx = BuildContext::new(input, document_title(input.meta, blocks));
        ctx.close_fences = false;
        let mut chunks = build_chunks(pieces, &ctx);
        let in_table = |c: &Chunk| {
            let at = c.byte_start as usize;
            let i = tables.partition_point(|t| t.end <= at);
            tables.get(i).is_some_and(|t| t.start <= at)
        };
        assign_granularities(&mut chunks, |c| {
                if in_table(c) {
                    Granularity::Table
                } else {
                    input.profile.granularity
                }
            },
        );
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
