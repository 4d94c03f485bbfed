//! The `table` strategy (the Chunking System specification "TableChunker"): the tables of a document
//! in one of three modes, the rest chunked structurally (spec-v1 budgets);
//! profiles `table-v1` (row groups), `table-rows-v1` and `table-summary-v1`.
//!
//! - `row`: one chunk per row, the header rows in front (units in header
//!   cells travel with every row).
//! - `rowgroup`: consecutive rows sharing the value of the `group_by` column
//!   (default the first) stay together; whole groups are packed within
//!   `target_tokens`, and a group is cut into row runs only when it alone
//!   is larger. An unknown column falls back to the first, and each chunk's
//!   `facet_json` says so (`group_by_fallback`).
//! - `summary`: the table whole (split by rows only beyond the hard max); its
//!   `embed_text` describes it in words (caption or preceding heading,
//!   columns, row count, value ranges or distinct values, the first rows)
//!   and `facet_json` holds the digest and the full table.
//!
//! Every table chunk has `granularity = table` and `is_table = true`; the
//! chunk text is always the table's own Markdown (header first), so nothing
//! is lost and every offset maps back. A table without a header row, or
//! with a row too wide for the hard max under its header, is split as the
//! structural strategy splits it.

mod shape;
mod summary;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::chunk::build::{build_chunks, document_title, BuildContext};
use crate::chunk::granular::assign_granularities;
use crate::chunk::piece::{Piece, Prefix};
use crate::chunk::record::{Chunk, ChunkType, Granularity};
use crate::chunk::trail::HeadingTrail;
use crate::chunk::split::Splitter;
use crate::chunk::unit::{unit_pieces, SplitCounts};
use crate::error::ChunkError;
use crate::markdown::{Block, BlockKind};
use crate::strategy::params::{ParamError, Params, MAX_HARD_MAX, TARGET_TOKENS};
use crate::strategy::structural::{Overlap, StructuralChunker, StructuralParams};
use crate::strategy::chunker::{ChunkInput, Chunker, Strategy};
use crate::strategy::limits::{Limits, Rules};
use crate::tokens::TokenCounter;

/// Tables by rows, row groups or summaries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table;

/// How tables become chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One chunk per row.
    Row,
    /// Rows sharing a grouping value.
    RowGroup,
    /// The table whole, described in words.
    Summary,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Row => "row",
            Self::RowGroup => "rowgroup",
            Self::Summary => "summary",
        }
    }
}

impl Strategy for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "tables as rows, row groups or summaries (header repeated); the rest structural"
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &["mode", "group_by", "target_tokens", "hard_max_tokens"]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[
            include_str!("profiles/table-v1.toml"),
            include_str!("profiles/table-rows-v1.toml"),
            include_str!("profiles/table-summary-v1.toml"),
        ]
    }

    fn configure(&self, p: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let mode = match p.choice("mode", "rowgroup", &["row", "rowgroup", "summary"])? {
            "row" => Mode::Row,
            "summary" => Mode::Summary,
            _ => Mode::RowGroup,
        };
        let group_by = p.opt_string("group_by")?;
        let target = p.usize_in("target_tokens", Some(350), TARGET_TOKENS)?;
        let hard_max = p.usize_in("hard_max_tokens", Some(520.max(target)), target..=MAX_HARD_MAX)?;
        let soft = (target + hard_max) / 2;
        let rest = StructuralParams::new(
            target,
            Some(soft),
            hard_max,
            0,
            Overlap::Tokens {
                tokens: target * 15 / 100,
                sentence_aligned: true,
            },
        );
        Ok(Arc::new(TableChunker {
            mode,
            group_by,
            target,
            hard_max,
            rest: StructuralChunker::new(rest),
        }))
    }
}

/// The table strategy configured by one profile.
#[derive(Debug, Clone)]
pub struct TableChunker {
    /// How tables become chunks.
    pub mode: Mode,
    /// The grouping column of `rowgroup` (default: the first).
    pub group_by: Option<String>,
    /// Row groups stay within this many tokens.
    pub target: usize,
    /// No chunk is larger.
    pub hard_max: usize,
    rest: StructuralChunker,
}

/// What a table chunk carries besides its text.
#[derive(Debug, Clone, Default)]
struct Extra {
    facet: Option<Value>,
    embed_text: Option<String>,
}

impl TableChunker {
    /// Row ranges (indices into `rows`, inclusive) of the chunks of one table.
    fn groups(
        &self,
        shape: &shape::Shape,
        count: &dyn Fn(Range<usize>) -> usize,
        header_tokens: usize,
        group_col: usize,
    ) -> Vec<(usize, usize)> {
        let rows = &shape.rows;
        let budget = match self.mode {
            Mode::Row => return (0..rows.len()).map(|i| (i, i)).collect(),
            Mode::RowGroup => self.target,
            Mode::Summary => self.hard_max,
        };
        let key = |i: usize| rows[i].1.get(group_col).map(String::as_str).unwrap_or("");
        let fits = |a: usize, b: usize| header_tokens + 1 + count(rows[a].0.start..rows[b].0.end) <= budget;
        // Runs of rows sharing the grouping value (the whole table for a
        // summary), cut where a run alone passes the budget.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut a = 0;
        for i in 1..=rows.len() {
            let same = i < rows.len() && (self.mode == Mode::Summary || key(i) == key(a));
            if same && fits(a, i) {
                continue;
            }
            runs.push((a, i - 1));
            a = i;
        }
        // Whole runs packed together while they fit: a group is never split
        // unless it alone is over the budget.
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (a, b) in runs {
            match out.last_mut() {
                Some(last) if self.mode == Mode::RowGroup && fits(last.0, b) => last.1 = b,
                _ => out.push((a, b)),
            }
        }
        out
    }

    /// The grouping column and, when `group_by` names none, the fallback note.
    fn group_column(&self, shape: &shape::Shape) -> (usize, Option<String>) {
        match &self.group_by {
            None => (0, None),
            Some(want) => match shape
                .columns
                .iter()
                .position(|c| c.trim().eq_ignore_ascii_case(want.trim()))
            {
                Some(i) => (i, None),
                None => (
                    0,
                    Some(format!(
                        "group_by column {want:?} not found; grouped by the first column {:?}",
                        shape.columns.first().map(String::as_str).unwrap_or("")
                    )),
                ),
            },
        }
    }

    /// The pieces of table block `idx`, whose first chunk starts at `start`
    /// (headings in front), with their extras; `None` when the table must
    /// be split structurally instead.
    fn table_pieces(
        &self,
        input: &ChunkInput<'_>,
        trail: &HeadingTrail<'_>,
        idx: usize,
        start: usize,
        ordinal: usize,
    ) -> Option<Vec<(Piece, Extra)>> {
        let text = input.doc.text.as_str();
        let tokens = input.tokens;
        let block = &input.blocks[idx];
        let shape = shape::read(text, block.range.clone())?;
        let header = shape.header.clone()?;
        let prefix = format!("{}\n", &text[header.clone()]);
        let header_tokens = tokens.counter().count(&prefix);
        let (col, fallback) = self.group_column(&shape);
        let count = |r: Range<usize>| tokens.count(r);
        let groups = self.groups(&shape, &count, header_tokens, col);
        let first_block = input.blocks.partition_point(|b| b.range.end <= start).min(idx);
        let headings = trail.path_of(&block.range);
        let mut out = Vec::with_capacity(groups.len());
        for (k, &(a, b)) in groups.iter().enumerate() {
            let own = if k == 0 { start } else { shape.rows[a].0.start }..shape.rows[b].0.end;
            let own = if b + 1 == shape.rows.len() { own.start..block.range.end } else { own };
            let n = if k == 0 {
                tokens.count(own.clone())
            } else {
                tokens.counter().count(&format!("{prefix}{}", &text[own.clone()]))
            };
            if n > self.hard_max {
                return None;
            }
            let mut facet = json!({
                "mode": self.mode.as_str(),
                "table": ordinal,
                "rows": [a + 1, b + 1],
            });
            if self.mode == Mode::RowGroup {
                let mut values: Vec<&str> = Vec::new();
                for (_, cells) in &shape.rows[a..=b] {
                    let v = cells.get(col).map(String::as_str).unwrap_or("");
                    if values.last() != Some(&v) {
                        values.push(v);
                    }
                }
                facet["group_by"] = json!(shape.columns.get(col));
                facet["group_values"] = json!(values);
                if let Some(note) = &fallback {
                    facet["group_by_fallback"] = json!(note);
                }
            }
            let mut extra = Extra {
                facet: Some(facet),
                embed_text: None,
            };
            if self.mode == Mode::Summary && k == 0 {
                let caption = caption(text, input.blocks, idx, &headings);
                let (digest, words) =
                    summary::summarize(&shape, caption.as_deref(), &text[block.range.clone()], ordinal);
                extra.facet = Some(digest);
                // Profiles fitted to an embedder window keep their own
                // embed_text (fitted and counted by the record builder).
                if input.profile.embedder.is_none() {
                    extra.embed_text = Some(words);
                }
            }
            out.push((
                Piece {
                    chunk_type: ChunkType::Table,
                    own,
                    prefix: if k == 0 { Prefix::None } else { Prefix::Text(prefix.clone()) },
                    suffix: String::new(),
                    blocks: if k == 0 { (first_block, idx) } else { (idx, idx) },
                    headings: headings.clone(),
                    detail: Some(format!("table[{ordinal}] rows {}-{}", a + 1, b + 1)),
                    starts_with_heading: k == 0 && start < block.range.start,
                    overlap_source: None,
                },
                extra,
            ));
        }
        Some(out)
    }
}

/// A table's caption: a short paragraph right before it that starts with
/// "Table", else the heading it sits under.
fn caption(text: &str, blocks: &[Block], idx: usize, headings: &[String]) -> Option<String> {
    let before = idx.checked_sub(1).and_then(|i| blocks.get(i));
    let para = before
        .filter(|b| b.kind == BlockKind::Paragraph && b.range.len() <= 300)
        .map(|b| text[b.range.clone()].split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| p.to_lowercase().starts_with("table"));
    para.or_else(|| headings.last().filter(|h| !h.trim().is_empty()).cloned())
}

impl Chunker for TableChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: self.target,
            hard_max_tokens: self.hard_max,
            min_tokens: 0,
            overlap_tokens: self.target * 15 / 100,
        }
    }

    fn rules(&self) -> Rules {
        Rules::TYPED
    }

    fn params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("mode".into(), self.mode.as_str().into());
        if let Some(g) = &self.group_by {
            t.insert("group_by".into(), g.as_str().into());
        }
        t.insert("target_tokens".into(), (self.target as i64).into());
        t.insert("hard_max_tokens".into(), (self.hard_max as i64).into());
        t
    }

    fn extra_granularities(&self) -> &'static [Granularity] {
        &[Granularity::Section]
    }

    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        let blocks = input.blocks;
        let trail = HeadingTrail::new(blocks);
        // As an auxiliary that keeps its tables only, the structural rest
        // is not planned: every table stands alone.
        let planned = if input.only == Some(Granularity::Table) {
            blocks
                .iter()
                .filter(|b| b.kind == BlockKind::Table)
                .map(|b| crate::chunk::unit::plain_piece(blocks, &trail, b.range.clone()))
                .collect()
        } else {
            self.rest.plan(input)
        };
        // Which table block each planned piece overlaps (structural gives
        // every table chunks of its own, headings in front).
        let table_of = |p: &Piece| {
            let i = blocks.partition_point(|b| b.range.end <= p.own.start);
            (i..=p.blocks.1.min(blocks.len().saturating_sub(1)))
                .find(|&i| blocks[i].kind == BlockKind::Table && blocks[i].range.start < p.own.end)
        };
        let mut pieces: Vec<Piece> = Vec::with_capacity(planned.len());
        let mut extras: BTreeMap<usize, Extra> = BTreeMap::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        let mut ordinal = 0usize;
        let mut iter = planned.into_iter().peekable();
        while let Some(first) = iter.next() {
            let Some(idx) = table_of(&first) else {
                pieces.push(first);
                continue;
            };
            let mut group = vec![first];
            while iter.peek().is_some_and(|p| table_of(p) == Some(idx)) {
                group.extend(iter.next());
            }
            let start = group.iter().map(|p| p.own.start).min().unwrap_or(0);
            let end = group.iter().map(|p| p.own.end).max().unwrap_or(0);
            let table_end = blocks[idx].range.end;
            let replaced = (end <= table_end)
                .then(|| self.table_pieces(input, &trail, idx, start, ordinal))
                .flatten();
            ordinal += 1;
            spans.push(start..table_end);
            match replaced {
                Some(parts) => {
                    for (piece, extra) in parts {
                        extras.insert(piece.own.start, extra);
                        pieces.push(piece);
                    }
                }
                None => {
                    if end <= table_end {
                        // No header, or a row too wide: split as structural does.
                        let split = Splitter::new(input.doc.text.as_str(), input.tokens, self.hard_max, self.target);
                        let mut counts = SplitCounts::default();
                        pieces.extend(unit_pieces(&split, blocks, &trail, idx, start, self.target, &mut counts));
                    } else {
                        pieces.extend(group);
                    }
                }
            }
        }
        let ctx = BuildContext::new(input, document_title(input.meta, blocks));
        let mut chunks = build_chunks(pieces, &ctx);
        for c in &mut chunks {
            if let Some(extra) = extras.get(&(c.byte_start as usize)) {
                c.facet_json = extra.facet.clone();
                if let Some(words) = &extra.embed_text {
                    c.embed_text = words.clone();
                }
            }
        }
        let in_table = |c: &Chunk| {
            let at = c.byte_start as usize;
            spans.iter().any(|s| s.start <= at && at < s.end)
        };
        assign_granularities(&mut chunks, |c| {
            if in_table(c) {
                Granularity::Table
            } else {
                Granularity::Section
            }
        });
        Ok(chunks)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
