//! The `section_aware` strategy (the Chunking System specification "SectionAwareChunker"): cuts at
//! every section of a configured top level, keeps chosen sections whole;
//! profiles `pmc-v1` (IMRaD papers), `ctgov-v1` (clinical trial records,
//! eligibility criteria atomic), `dailymed-v1` (drug labels, adverse
//! reactions atomic).
//!
//! 1. Every heading of level `section_level` or higher (a smaller number)
//!    starts a section; nothing crosses a section boundary. The text before
//!    the first such heading is a section too.
//! 2. A section whose heading matches one of `atomic_sections`
//!    (case-insensitive; a pattern matches when the heading contains it, or
//!    by `*` wildcards) is one chunk when it fits `hard_max_tokens`.
//! 3. Inside a section, whole blocks accumulate while the chunk stays within
//!    `target_tokens x (1 + tolerance)`; headings travel with the block after
//!    them; a thematic break closes the chunk. A block is split only when it
//!    alone is over the hard max (tables by rows with the header repeated,
//!    code by lines re-fenced, lists between items, prose at sentences).

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::granular::assign_granularities;
use crate::chunk::piece::Piece;
use crate::chunk::record::Chunk;
use crate::chunk::trail::HeadingTrail;
use crate::chunk::split::Splitter;
use crate::chunk::unit::{plain_piece, unit_pieces, SplitCounts};
use crate::error::ChunkError;
use crate::markdown::{Block, BlockKind};
use crate::markdown::parse::front_matter_len;
use crate::strategy::params::{ParamError, Params, MAX_HARD_MAX, TARGET_TOKENS};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};

/// Sections of a top level, packed by whole blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct SectionAware;

impl Strategy for SectionAware {
    fn name(&self) -> &'static str {
        "section_aware"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "cuts at every top-level section, packs whole blocks to the target, keeps chosen sections whole"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &[
            "section_level",
            "target_tokens",
            "tolerance",
            "hard_max_tokens",
            "atomic_sections",
        ]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/pmc-v1.toml"),
            include_str!("profiles/ctgov-v1.toml"),
            include_str!("profiles/dailymed-v1.toml"),
        ]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let section_level = p.usize_in("section_level", Some(2), 1..=6)?;
        let target = p.usize_in("target_tokens", Some(400), TARGET_TOKENS)?;
        let tolerance = p.f64_in("tolerance", 0.15, 0.0..=0.5)?;
        let upper = (target as f64 * (1.0 + tolerance)).floor() as usize;
        let hard_max = p.usize_in(
            "hard_max_tokens",
            Some((2 * target).min(MAX_HARD_MAX)),
            upper.max(target)..=MAX_HARD_MAX,
        )?;
        let atomic = p.strings("atomic_sections")?;
        if let Some(empty) = atomic.iter().position(|a| a.trim().is_empty()) {
            return Err(p.error(
                "atomic_sections",
                format!("holds an empty pattern at position {empty}; it would match every section"),
            ));
        }
        Ok(Arc::new(SectionAwareChunker {
            section_level: section_level as u8,
            target,
            tolerance,
            hard_max,
            atomic_sections: atomic,
        }))
    }
}

/// The section-aware strategy configured by one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionAwareChunker {
    /// Headings of this level or higher start a section.
    pub section_level: u8,
    /// What chunks aim at.
    pub target: usize,
    /// Chunks stay within `target x (1 + tolerance)` unless one block is larger.
    pub tolerance: f64,
    /// No chunk is larger.
    pub hard_max: usize,
    /// Heading patterns of sections kept whole.
    pub atomic_sections: Vec<String>,
}

/// Whether `heading` matches `pattern`: case-insensitive, `*` matches any
/// run of characters; without `*`, containing the pattern is a match.
pub fn heading_matches(pattern: &str, heading: &str) -> bool {
    let (p, h) = (pattern.to_lowercase(), heading.to_lowercase());
    if !p.contains('*') {
        return h.contains(p.trim());
    }
    let parts: Vec<&str> = p.split('*').collect();
    let mut rest = h.as_str();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        match rest.find(part) {
            Some(at) if i > 0 || at == 0 => rest = &rest[at + part.len()..],
            _ => return false,
        }
    }
    parts.last().is_some_and(|l| l.is_empty()) || rest.is_empty()
}

impl SectionAwareChunker {
    fn upper(&self) -> usize {
        ((self.target as f64) * (1.0 + self.tolerance)).floor() as usize
    }

    fn atomic(&self, heading: &Block) -> bool {
        matches!(heading.kind, BlockKind::Heading { .. })
            && self
                .atomic_sections
                .iter()
                .any(|p| heading_matches(p, &heading.heading_text))
    }

    fn starts_section(&self, b: &Block) -> bool {
        matches!(b.kind, BlockKind::Heading { level } if level <= self.section_level)
    }
}

/// Plans the pieces of one section (`blocks[range]`).
struct Section<'s, 'a> {
    chunker: &'s SectionAwareChunker,
    blocks: &'a [Block],
    trail: &'s HeadingTrail<'a>,
    split: &'s Splitter<'a>,
    counts: &'s mut SplitCounts,
    out: &'s mut Vec<Piece>,
    open: Option<Range<usize>>,
}

impl Section<'_, '_> {
    fn split_unit(&mut self, idx: usize, start: usize) {
        let parts = unit_pieces(
            self.split,
            self.blocks,
            self.trail,
            idx,
            start,
            self.chunker.upper(),
            self.counts,
        );
        self.out.extend(parts);
    }

    fn close(&mut self) {
        if let Some(own) = self.open.take() {
            self.out.push(plain_piece(self.blocks, self.trail, own));
        }
    }

    fn pack(&mut self, range: Range<usize>) {
        let tokens = self.split.tokens();
        let hard_max = self.split.hard_max();
        // Headings waiting for their block: (start, end, last heading index).
        let mut pending: Option<(usize, usize, usize)> = None;
        for idx in range {
            let b = &self.blocks[idx];
            match b.kind {
                BlockKind::Heading { .. } => {
                    let start = pending.map_or(b.range.start, |p| p.0);
                    pending = Some((start, b.range.end, idx));
                    continue;
                }
                BlockKind::ThematicBreak => {
                    self.close();
                    continue;
                }
                BlockKind::FrontMatter => continue,
                _ => {}
            }
            let start = pending.take().map_or(b.range.start, |p| p.0);
            if tokens.exceeds(start..b.range.end, hard_max) {
                self.close();
                self.split_unit(idx, start);
                continue;
            }
            self.open = match self.open.take() {
                Some(o) if !tokens.exceeds(o.start..b.range.end, self.chunker.upper()) => {
                    Some(o.start..b.range.end)
                }
                Some(o) => {
                    self.out.push(plain_piece(self.blocks, self.trail, o));
                    Some(start..b.range.end)
                }
                None => Some(start..b.range.end),
            };
        }
        // Headings left at the end of the section join the open chunk when
        // it has room, else form a chunk of headings only.
        if let Some((start, end, idx)) = pending {
            match self.open.take() {
                Some(o) if !tokens.exceeds(o.start..end, hard_max) => self.open = Some(o.start..end),
                other => {
                    self.open = other;
                    self.close();
                    if tokens.exceeds(start..end, hard_max) {
                        self.split_unit(idx, start);
                    } else {
                        self.open = Some(start..end);
                    }
                }
            }
        }
        self.close();
    }
}

impl Chunker for SectionAwareChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.target,
            hard_max_tokens: self.hard_max,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }

    fn rules(&self) -> Rules {
        Rules::TYPED
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("section_level".into(), i64::from(self.section_level).into());
        t.insert("target_tokens".into(), (self.target as i64).into());
        t.insert("tolerance".into(), self.tolerance.into());
        t.insert("hard_max_tokens".into(), (self.hard_max as i64).into());
        let atomic: Vec<toml::Value> = self
            .atomic_sections
            .iter()
            .map(|a| a.as_str().into())
            .collect();
        t.insert("atomic_sections".into(), atomic.into());
        t
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let text = input.doc.text.as_str();
        let body = front_matter_len(text);
        let blocks = input.blocks;
        let trail = HeadingTrail::new(blocks);
        // Splits reserve a few tokens for a closing fence the record builder
        // may add to a chunk cut through a nested fence.
        let split = Splitter::new(text, input.tokens, self.hard_max.saturating_sub(8).max(16), self.target);
        let mut counts = SplitCounts::default();
        let mut out = Vec::new();
        let first = blocks.partition_point(|b| b.range.end <= body);
        let mut starts: Vec<usize> = (first..blocks.len())
            .filter(|&i| i == first || self.starts_section(&blocks[i]))
            .collect();
        starts.push(blocks.len());
        // A section of headings only (a title right before the first
        // section) travels with the next section: headings are never alone
        // while content follows.
        let headings_only = |from: usize, to: usize| {
            blocks[from..to]
                .iter()
                .all(|b| matches!(b.kind, BlockKind::Heading { .. }))
        };
        let mut merged: Vec<usize> = Vec::with_capacity(starts.len());
        for (k, &s) in starts.iter().enumerate() {
            let prev_headings_only = k >= 1 && !merged.is_empty() && {
                let (a, b) = (merged[merged.len() - 1], s);
                a < b && headings_only(a, b)
            };
            if prev_headings_only && s < blocks.len() {
                continue;
            }
            merged.push(s);
        }
        for w in merged.windows(2) {
            let (from, to) = (w[0], w[1]);
            if from >= to {
                continue;
            }
            let range = blocks[from].range.start..blocks[to - 1].range.end;
            let has_content = blocks[from..to].iter().any(|b| b.kind != BlockKind::ThematicBreak && b.kind != BlockKind::FrontMatter);
            if !has_content {
                continue;
            }
            let atomic = blocks[from..to]
                .iter()
                .take_while(|b| matches!(b.kind, BlockKind::Heading { .. }))
                .any(|b| self.atomic(b));
            if atomic && !input.tokens.exceeds(range.clone(), split.hard_max()) {
                // Leading or trailing thematic breaks are trimmed away.
                let content: Vec<&Block> = blocks[from..to].iter().filter(|b| b.kind != BlockKind::ThematicBreak).collect();
                if let (Some(a), Some(z)) = (content.first(), content.last()) {
                    out.push(plain_piece(blocks, &trail, a.range.start..z.range.end));
                }
                continue;
            }
            let mut section = Section {
                chunker: self,
                blocks,
                trail: &trail,
                split: &split,
                counts: &mut counts,
                out: &mut out,
                open: None,
            };
            section.pack(from..to);
        }
        let ctx = BuildContext::new(input, document_title(input.meta, blocks));
        let mut chunks = build_chunks(out, &ctx);
        let g = input.profile.granularity;
        assign_granularities(&mut chunks, |_| g);
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::heading_matches;

    #[test]
    fn patterns_match_case_insensitively_by_containment_or_wildcards() {
        assert!(heading_matches("eligibility", "Eligibility Criteria"));
        assert!(heading_matches("ADVERSE REACTIONS", "6 Adverse Reactions"));
        assert!(heading_matches("*reactions", "6 Adverse Reactions"));
        assert!(heading_matches("adverse*", "Adverse Reactions"));
        assert!(!heading_matches("adverse*", "6 Adverse Reactions"));
        assert!(!heading_matches("methods", "Results"));
    }
}
