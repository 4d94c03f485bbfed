//! Packing: blocks to planned chunks under the profile's budgets (docs/contract.md#blocks-and-boundaries and #size-policy).
//!
//! The algorithm, block by block in document order:
//! 1. A heading closes the open chunk and waits ("pending") for content: it
//!    travels with the next chunk, never alone. Consecutive headings wait
//!    together. Headings left at the end form a chunk of headings only.
//! 2. A thematic break closes the open chunk and is dropped (a boundary).
//! 3. A table or code block closes the open chunk and becomes its own chunk
//!    (with the pending headings in front); over the hard max it is split by
//!    rows (header repeated) or lines (re-fenced).
//! 4. A list joins the open chunk only if that chunk is below the target and
//!    the result stays under the soft max (a short list after prose: `mixed`);
//!    a list after a list (ordered/unordered switch) starts a new chunk, and
//!    so does any block after a list (list context exits). A list over the
//!    hard max is split between top-level items.
//! 5. Prose (paragraphs, quotes, HTML, other text) joins the open chunk while
//!    the chunk stays within the soft max. When it does not fit and the open
//!    chunk is still small (below half the target, or below the profile's
//!    minimum), the block is split at sentences to fill the chunk up first, so
//!    long sections pack close to the target instead of leaving stubs. A prose
//!    block over the hard max is always split at sentences, and a sentence
//!    over the hard max into token windows.

use std::ops::Range;

use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::ChunkType;
use crate::chunk::split::Splitter;
use crate::chunk::unit::cover;
use crate::markdown::{Block, BlockKind};
use super::params::StructuralParams;
use crate::tokens::DocumentTokens;

/// Plans the chunks of a document.
pub(crate) fn pack(
    text: &str,
    blocks: &[Block],
    tokens: &DocumentTokens<'_>,
    params: &StructuralParams,
) -> Vec<Piece> {
    let mut p = Packer {
        blocks,
        tokens,
        params,
        split: Splitter::new(text, tokens, params.hard_max_tokens, params.target_tokens),
        stack: Vec::new(),
        pending: None,
        open: None,
        out: Vec::new(),
        tables: 0,
        codes: 0,
        lists: 0,
    };
    for (idx, block) in blocks.iter().enumerate() {
        p.add_block(idx, block);
    }
    p.close();
    p.flush_pending_alone();
    p.out
}

/// Headings waiting for their content.
#[derive(Debug, Clone)]
struct Pending {
    range: Range<usize>,
    first_block: usize,
    last_block: usize,
}

/// Kinds of units inside an open chunk, for its `chunk_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    Paragraph,
    Quote,
    List,
}

#[derive(Debug, Clone)]
struct Open {
    start: usize,
    end: usize,
    first_block: usize,
    last_block: usize,
    kinds: Vec<UnitKind>,
    headings: Vec<String>,
    starts_with_heading: bool,
    /// The last unit was a list: any next block starts a new chunk.
    list_open: bool,
    /// Start of the trailing run of paragraph units.
    prose_run: Option<usize>,
    tokens: usize,
}

struct Packer<'a> {
    blocks: &'a [Block],
    tokens: &'a DocumentTokens<'a>,
    params: &'a StructuralParams,
    split: Splitter<'a>,
    stack: Vec<(u8, String)>,
    pending: Option<Pending>,
    open: Option<Open>,
    out: Vec<Piece>,
    tables: usize,
    codes: usize,
    lists: usize,
}

impl Packer<'_> {
    fn headings(&self) -> Vec<String> {
        self.stack.iter().map(|(_, t)| t.clone()).collect()
    }

    fn count(&self, range: Range<usize>) -> usize {
        self.tokens.count(range)
    }

    fn add_block(&mut self, idx: usize, block: &Block) {
        match block.kind {
            BlockKind::FrontMatter => {}
            BlockKind::ThematicBreak => self.close(),
            BlockKind::Heading { level } => {
                self.close();
                self.add_heading(idx, block, level);
            }
            BlockKind::Table => {
                self.close();
                self.tables += 1;
                self.add_atomic(idx, block, ChunkType::Table);
            }
            BlockKind::Code { .. } => {
                self.close();
                self.codes += 1;
                self.add_atomic(idx, block, ChunkType::Code);
            }
            BlockKind::List { .. } => {
                self.lists += 1;
                self.add_list(idx, block);
            }
            BlockKind::Quote => self.add_prose(idx, block.range.clone(), UnitKind::Quote),
            BlockKind::Paragraph | BlockKind::Html | BlockKind::Other => {
                self.add_prose(idx, block.range.clone(), UnitKind::Paragraph)
            }
        }
    }

    fn add_heading(&mut self, idx: usize, block: &Block, level: u8) {
        // Headings that already fill half the budget cannot carry content
        // under the hard max: let them go out on their own first.
        if let Some(p) = &self.pending {
            if self.count(p.range.start..block.range.end) > self.params.hard_max_tokens / 2 {
                self.flush_pending_alone();
            }
        }
        match &mut self.pending {
            Some(p) => {
                p.range.end = block.range.end;
                p.last_block = idx;
            }
            None => {
                self.pending = Some(Pending {
                    range: block.range.clone(),
                    first_block: idx,
                    last_block: idx,
                })
            }
        }
        while self.stack.last().is_some_and(|(l, _)| *l >= level) {
            self.stack.pop();
        }
        self.stack.push((level, block.heading_text.clone()));
    }

    /// Emits pending headings as a chunk of headings only (end of document,
    /// or headings too long to travel with content).
    fn flush_pending_alone(&mut self) {
        let Some(p) = self.pending.take() else { return };
        let headings = self.headings();
        let units = self
            .split
            .prose_units(p.range.clone(), self.params.hard_max_tokens, &[]);
        for part in self.split.group(&units, None, self.params.soft_max_tokens) {
            self.out.push(Piece {
                chunk_type: ChunkType::Paragraph,
                own: part,
                prefix: Prefix::None,
                suffix: String::new(),
                blocks: (p.first_block, p.last_block),
                headings: headings.clone(),
                detail: None,
                starts_with_heading: true,
                overlap_source: None,
            });
        }
    }

    /// Token budget left for a block's own text once the pending headings
    /// (and the blank line after them) are in front of it.
    fn budget_after_pending(&self) -> usize {
        match &self.pending {
            Some(p) => self
                .params
                .hard_max_tokens
                .saturating_sub(self.count(p.range.clone()) + 1),
            None => self.params.hard_max_tokens,
        }
    }

    fn add_atomic(&mut self, idx: usize, block: &Block, chunk_type: ChunkType) {
        self.budget_for_parts();
        let pending = self.pending.take();
        let start = pending
            .as_ref()
            .map_or(block.range.start, |p| p.range.start);
        let first_block = pending.as_ref().map_or(idx, |p| p.first_block);
        let headings = self.headings();
        let base = Piece {
            chunk_type,
            own: start..block.range.end,
            prefix: Prefix::None,
            suffix: String::new(),
            blocks: (first_block, idx),
            headings,
            detail: None,
            starts_with_heading: pending.is_some(),
            overlap_source: None,
        };
        if self.count(start..block.range.end) <= self.params.hard_max_tokens {
            self.out.push(base);
            return;
        }
        let ordinal = if chunk_type == ChunkType::Table {
            self.tables
        } else {
            self.codes
        };
        let limit = self.params.soft_max_tokens;
        let pieces = match chunk_type {
            ChunkType::Table => self.split.table(block.range.clone(), start, limit, ordinal),
            _ => self.split.code(block.range.clone(), start, limit, ordinal),
        };
        for (i, part) in pieces.into_iter().enumerate() {
            self.out.push(Piece {
                chunk_type: part.chunk_type.unwrap_or(chunk_type),
                own: part.own,
                prefix: part.prefix.map_or(Prefix::None, Prefix::Text),
                suffix: part.suffix,
                blocks: if i == 0 {
                    (first_block, idx)
                } else {
                    (idx, idx)
                },
                headings: base.headings.clone(),
                detail: Some(part.detail),
                starts_with_heading: i == 0 && base.starts_with_heading,
                overlap_source: None,
            });
        }
    }

    fn add_list(&mut self, idx: usize, block: &Block) {
        if let Some(open) = &self.open {
            let joined = self.count(open.start..block.range.end);
            if open.list_open
                || open.tokens >= self.params.target_tokens
                || joined > self.params.soft_max_tokens
            {
                self.close();
            }
        }
        let start = self.chunk_start(block.range.start);
        if self.count(start..block.range.end) <= self.params.hard_max_tokens {
            self.append(idx, block.range.clone(), UnitKind::List);
            if let Some(open) = &mut self.open {
                open.list_open = true;
            }
            return;
        }
        // Oversized: split between top-level items, each piece its own chunk.
        // Headings that fill half the budget go out alone first (before the
        // pending headings are taken, or the first part would carry them).
        self.close();
        let budget = self.budget_for_parts();
        let pending = self.pending.take();
        let start = pending
            .as_ref()
            .map_or(block.range.start, |p| p.range.start);
        let first_block = pending.as_ref().map_or(idx, |p| p.first_block);
        let headings = self.headings();
        let limit = self.params.soft_max_tokens;
        let mut units: Vec<Range<usize>> = Vec::new();
        for item in cover(self.split.text(), &block.range, &block.items) {
            if self.count(item.clone()) > budget {
                units.extend(self.split.prose_units(item, budget, &block.nested_code));
            } else {
                units.push(item);
            }
        }
        let groups = self.split.group(&units, Some(start), limit);
        let total = groups.len();
        for (i, own) in groups.into_iter().enumerate() {
            self.out.push(Piece {
                chunk_type: ChunkType::List,
                own,
                prefix: Prefix::None,
                suffix: String::new(),
                blocks: if i == 0 {
                    (first_block, idx)
                } else {
                    (idx, idx)
                },
                headings: headings.clone(),
                detail: Some(format!("list[{}] part {}/{}", self.lists, i + 1, total)),
                starts_with_heading: i == 0 && pending.is_some(),
                overlap_source: None,
            });
        }
    }

    /// The budget for parts of a split unit: the hard max, less room for the
    /// pending headings that the first part carries. Headings that fill half
    /// the budget on their own go out first as a chunk of their own.
    fn budget_for_parts(&mut self) -> usize {
        if self.budget_after_pending() < self.params.hard_max_tokens / 2 {
            self.flush_pending_alone();
        }
        self.budget_after_pending()
    }

    /// Where a chunk that took `unit_start` next would start.
    fn chunk_start(&self, unit_start: usize) -> usize {
        match (&self.open, &self.pending) {
            (Some(o), _) => o.start,
            (None, Some(p)) => p.range.start,
            (None, None) => unit_start,
        }
    }

    fn add_prose(&mut self, idx: usize, range: Range<usize>, kind: UnitKind) {
        if self.open.as_ref().is_some_and(|o| o.list_open) {
            self.close();
        }
        if self.reached_target() {
            self.close();
        }
        let start = self.chunk_start(range.start);
        let joined = self.count(start..range.end);
        let limit = if self.open.is_some() {
            self.params.soft_max_tokens
        } else {
            self.params.hard_max_tokens
        };
        if joined <= limit {
            self.append(idx, range, kind);
            return;
        }
        let fill_floor = self.params.min_tokens.max(self.params.target_tokens / 2);
        if self.open.as_ref().is_some_and(|o| o.tokens >= fill_floor) {
            self.close();
            return self.add_prose(idx, range, kind);
        }
        // Split at sentences (token windows for overlong sentences) and pack
        // the parts like blocks.
        let budget = self.budget_for_parts();
        let mut queue: std::collections::VecDeque<Range<usize>> = self
            .split
            .prose_units(range, budget, &self.blocks[idx].nested_code)
            .into();
        while let Some(unit) = queue.pop_front() {
            if self.reached_target() {
                self.close();
            }
            if let Some(open) = &self.open {
                if self.count(open.start..unit.end) > self.params.soft_max_tokens {
                    // Below the profile's minimum, fill up with the head of
                    // the unit (a token window) rather than leave a stub.
                    if open.tokens < self.params.min_tokens {
                        let soft = self.params.soft_max_tokens;
                        if let (head, Some(rest)) =
                            self.split.fit_within(open.start, unit.clone(), soft)
                        {
                            self.append(idx, head, kind);
                            self.close();
                            queue.push_front(rest);
                            continue;
                        }
                    }
                    self.close();
                }
            }
            let start = self.chunk_start(unit.start);
            let (head, rest) = self.split.fit(start, unit);
            self.append(idx, head, kind);
            if let Some(rest) = rest {
                self.close();
                queue.push_front(rest);
            }
        }
    }

    /// Whether the open chunk is full under a profile that closes at target.
    fn reached_target(&self) -> bool {
        self.params.close_at_target
            && self
                .open
                .as_ref()
                .is_some_and(|o| o.tokens >= self.params.target_tokens)
    }

    /// Appends a unit to the open chunk, opening one (with the pending
    /// headings in front) if needed.
    fn append(&mut self, idx: usize, unit: Range<usize>, kind: UnitKind) {
        if self.open.is_none() {
            let pending = self.pending.take();
            self.open = Some(Open {
                start: pending.as_ref().map_or(unit.start, |p| p.range.start),
                end: unit.start,
                first_block: pending.as_ref().map_or(idx, |p| p.first_block),
                last_block: idx,
                kinds: Vec::new(),
                headings: self.headings(),
                starts_with_heading: pending.is_some(),
                list_open: false,
                prose_run: None,
                tokens: 0,
            });
        }
        let tokens = self.tokens;
        if let Some(open) = &mut self.open {
            open.end = unit.end;
            open.last_block = idx;
            if !open.kinds.contains(&kind) {
                open.kinds.push(kind);
            }
            open.prose_run = match kind {
                UnitKind::Paragraph => open.prose_run.or(Some(unit.start)),
                _ => None,
            };
            open.tokens = tokens.count(open.start..open.end);
        }
    }

    fn close(&mut self) {
        let Some(open) = self.open.take() else { return };
        let chunk_type = match open.kinds.as_slice() {
            [UnitKind::Paragraph] => ChunkType::Paragraph,
            [UnitKind::Quote] => ChunkType::Quote,
            [UnitKind::List] => ChunkType::List,
            _ => ChunkType::Mixed,
        };
        self.out.push(Piece {
            chunk_type,
            own: open.start..open.end,
            prefix: Prefix::None,
            suffix: String::new(),
            blocks: (open.first_block, open.last_block),
            headings: open.headings,
            detail: None,
            starts_with_heading: open.starts_with_heading,
            overlap_source: open.prose_run,
        });
    }
}
