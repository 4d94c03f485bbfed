//! The validation checklist (docs/contract.md#validation), run on every output: the universal
//! rules every strategy keeps (docs/contract.md#strategies), then the rules the profile's
//! strategy declares for itself ([`Rules`]).
//!
//! It re-derives what it needs from the normalized document and its blocks
//! (spans, Markdown validity of every chunk text) instead of trusting the
//! strategy that produced the chunks, so a bug in any strategy surfaces as
//! `VALIDATION_FAILED` and is never emitted silently. Ids, content hashes
//! and keys are no strategy's: the engine derives them from the final
//! records right before this runs (`chunk::seal`), in every build; here
//! they are checked to be unique and to name their chunk. Token counts are
//! trusted as computed (they are exact counts; the corpus tests compare them
//! with tiktoken).

use pulldown_cmark::{Event, Parser, Tag};

use crate::chunk::granular::{chunk_key, is_table, slot};
use crate::chunk::record::{Chunk, ChunkType, Granularity};
use crate::error::ChunkError;
use crate::ids::unclosed_fence;
use crate::markdown::parse::parser_options;
use crate::markdown::{pipe_rows, Block, BlockKind, CharIndex};
use crate::normalize::NormalizedDocument;
use crate::profile::model::Profile;
use crate::strategy::limits::{PrefixRule, Rules};

/// At most this many violations are reported: enough to diagnose, bounded
/// so that a pathological document cannot produce a huge error.
const MAX_REPORTED: usize = 20;

/// Which text of the document a chunk set must cover ("nothing lost").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Every non-whitespace character outside front matter and thematic
    /// breaks.
    All,
    /// The text of the tables only (a `table` granularity beside others).
    Tables,
    /// Nothing (the `document` granularity: the head of the document).
    None,
}

/// Checks `chunks` against the docs/contract.md#validation checklist; `blocks` are the
/// document's blocks ([`crate::markdown::parse_blocks`]) and `chars` its
/// [`CharIndex`]. A profile of the `document` granularity covers only the
/// head of the document.
pub fn validate(
    doc: &NormalizedDocument,
    blocks: &[Block],
    chunks: &[Chunk],
    profile: &Profile,
    chars: &CharIndex<'_>,
) -> Result<(), ChunkError> {
    let coverage = if profile.granularity == Granularity::Document {
        Coverage::None
    } else {
        Coverage::All
    };
    validate_scoped(doc, blocks, chunks, profile, coverage, chars)
}

/// [`validate`] for one granularity of a multi-granularity profile:
/// `coverage` says what the chunks must cover.
pub fn validate_scoped(
    doc: &NormalizedDocument,
    blocks: &[Block],
    chunks: &[Chunk],
    profile: &Profile,
    coverage: Coverage,
    chars: &CharIndex<'_>,
) -> Result<(), ChunkError> {
    let text = doc.text.as_str();
    let rules = profile.rules();
    let hard_max = profile.hard_max_tokens();
    let mut v = Violations::default();
    let mut seen_ids = std::collections::HashSet::new();
    let first_heading = blocks
        .iter()
        .find(|b| matches!(b.kind, BlockKind::Heading { .. }))
        .map_or(usize::MAX, |b| b.range.start);

    let mut next_ordinal = [0u32; 5];
    for (i, c) in chunks.iter().enumerate() {
        let at = At(i, c.byte_start, c.byte_end);
        // Ordinals run 0..n-1 within each granularity.
        let expected = &mut next_ordinal[slot(c.granularity)];
        if c.ordinal != *expected {
            v.push(format!(
                "{at}: ordinal {} where {expected} was expected among the {} chunks",
                c.ordinal,
                c.granularity.as_str()
            ));
        }
        *expected = c.ordinal.saturating_add(1);
        match &c.chunk_key {
            Some(key)
                if *key
                    == chunk_key(&c.document_id, &profile.strategy, c.granularity, c.ordinal) => {}
            Some(key) => v.push(format!("{at}: chunk_key {key} does not name the chunk")),
            None => v.push(format!("{at}: chunk_key missing")),
        }
        if c.is_table != Some(is_table(c.granularity, c.chunk_type)) {
            v.push(format!(
                "{at}: is_table {:?} does not say whether it holds a table",
                c.is_table
            ));
        }
        if c.token_count as usize > hard_max {
            v.push(format!(
                "{at}: {} tokens, over the hard max {hard_max}",
                c.token_count
            ));
        }
        match (&profile.embedder, c.embed_token_count) {
            (Some(w), Some(n)) if n as usize > w.max_tokens => v.push(format!(
                "{at}: embed_text has {n} tokens of {}, over the embedder window {}",
                w.tokenizer.spelling(),
                w.max_tokens
            )),
            (Some(_), None) => v.push(format!("{at}: embed_token_count missing")),
            (None, Some(_)) => v.push(format!("{at}: embed_token_count without an embedder")),
            _ => {}
        }
        if c.chunk_text.trim().is_empty() {
            v.push(format!("{at}: empty chunk text"));
        }
        if rules.verbatim_text {
            check_span(text, c, chars, rules.prefixes, &at, &mut v);
        } else {
            check_rendered(text, c, chars, &at, &mut v);
        }
        if let Some(prev) = i.checked_sub(1).and_then(|p| chunks.get(p)) {
            if prev.byte_end > c.byte_start {
                v.push(format!(
                    "{at}: own span overlaps or precedes chunk {}",
                    i - 1
                ));
            }
        }
        if !seen_ids.insert(c.chunk_id.as_str()) {
            v.push(format!("{at}: duplicate chunk id"));
        }
        check_markdown(c, &rules, &at, &mut v);
        if rules.headings_path {
            check_heading_path(blocks, first_heading, c, &at, &mut v);
        }
        if let Some(min) = rules.min_tokens.filter(|&m| m > 0) {
            check_min(text, blocks, chunks, i, min, &at, &mut v);
        }
    }
    if coverage != Coverage::None {
        check_nothing_lost(text, blocks, chunks, &rules, coverage, &mut v);
    }
    v.into_result()
}

/// Where a violation is: the chunk's index and own byte span, formatted
/// only when a violation is reported.
#[derive(Debug, Clone, Copy)]
struct At(usize, u64, u64);

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chunk {} ({}..{})", self.0, self.1, self.2)
    }
}

#[derive(Default)]
struct Violations {
    lines: Vec<String>,
}

impl Violations {
    fn push(&mut self, line: String) {
        if self.lines.len() < MAX_REPORTED {
            self.lines.push(line);
        }
    }

    fn into_result(self) -> Result<(), ChunkError> {
        if self.lines.is_empty() {
            Ok(())
        } else {
            Err(ChunkError::Validation {
                violations: self.lines,
            })
        }
    }
}

/// `chunk_text == prefix + normalized[own] + suffix`, offsets consistent,
/// and prefix/suffix only where the strategy's prefix rule allows them.
fn check_span(
    text: &str,
    c: &Chunk,
    chars: &CharIndex<'_>,
    rule: PrefixRule,
    at: &At,
    v: &mut Violations,
) {
    let Some((bs, be)) = own_span(text, c, chars, at, v) else {
        return;
    };
    let (prefix, suffix) = (c.prefix(), c.suffix());
    let (prefix_len, suffix_len) = (prefix.len(), suffix.len());
    let own = c
        .chunk_text
        .get(prefix_len..c.chunk_text.len().saturating_sub(suffix_len));
    if own != Some(&text[bs..be]) {
        v.push(format!(
            "{at}: chunk text is not prefix + own span + suffix"
        ));
    }
    let preceding = prefix_len == 0 || text[..bs].ends_with(prefix);
    let table = c.chunk_type == ChunkType::Table;
    if rule == PrefixRule::PrecedingText || rule == PrefixRule::PrecedingOrTableHeader {
        // A table chunk's header prefix is checked with the table rules.
        let header_allowed = table && rule == PrefixRule::PrecedingOrTableHeader;
        if !preceding && !header_allowed {
            v.push(format!(
                "{at}: overlap prefix is not the text before the own span"
            ));
        }
        if suffix_len > 0 {
            v.push(format!("{at}: carries a suffix its strategy never adds"));
        }
        return;
    }
    if suffix_len > 0
        && !(suffix.starts_with('\n') && suffix.trim().bytes().all(|b| b == b'`' || b == b'~'))
    {
        v.push(format!("{at}: closing suffix is not a closing code fence"));
    }
    match c.chunk_type {
        ChunkType::List | ChunkType::Quote if prefix_len > 0 => v.push(format!(
            "{at}: {} chunk carries a prefix",
            c.chunk_type.as_str()
        )),
        ChunkType::Paragraph | ChunkType::Mixed if !preceding => v.push(format!(
            "{at}: overlap prefix is not the text before the own span"
        )),
        _ => {}
    }
}

/// The own span's byte range, if it is one (non-empty, on character
/// boundaries, its char offsets agreeing).
fn own_span(
    text: &str,
    c: &Chunk,
    chars: &CharIndex<'_>,
    at: &At,
    v: &mut Violations,
) -> Option<(usize, usize)> {
    let (bs, be) = (c.byte_start as usize, c.byte_end as usize);
    if bs >= be || be > text.len() || !text.is_char_boundary(bs) || !text.is_char_boundary(be) {
        v.push(format!("{at}: own span is empty or not on char boundaries"));
        return None;
    }
    if chars.char_offset(bs) != c.char_start || chars.char_offset(be) != c.char_end {
        v.push(format!("{at}: char offsets disagree with byte offsets"));
    }
    Some((bs, be))
}

/// A rendered chunk (`Rules::verbatim_text` false): offsets consistent, no
/// prefix or suffix, and the chunk text's non-whitespace characters are
/// found in the own span, in order.
fn check_rendered(text: &str, c: &Chunk, chars: &CharIndex<'_>, at: &At, v: &mut Violations) {
    let Some((bs, be)) = own_span(text, c, chars, at, v) else {
        return;
    };
    if c.overlap_prefix_chars != 0 || c.closing_suffix_chars != 0 {
        v.push(format!("{at}: a rendered chunk carries a prefix or suffix"));
    }
    let mut own = text[bs..be].chars().filter(|c| !c.is_whitespace());
    if !c
        .chunk_text
        .chars()
        .filter(|c| !c.is_whitespace())
        .all(|x| own.any(|y| y == x))
    {
        v.push(format!(
            "{at}: chunk text holds characters its own span does not, or not in order"
        ));
    }
}

/// No chunk opens a code fence it does not close (fences as docs/contract.md#chunk-record reads
/// them for canonical text); a table chunk's text is a table from its header
/// row (after any leading heading lines).
fn check_markdown(c: &Chunk, rules: &Rules, at: &At, v: &mut Violations) {
    if rules.fences_closed && unclosed_fence(&c.chunk_text).is_some() {
        v.push(format!("{at}: chunk opens a code fence it does not close"));
    }
    if !rules.table_header || c.chunk_type != ChunkType::Table {
        return;
    }
    // A table flattened into a list of pipe rows starts with its header
    // row when it has one (the split repeats it), else with a row.
    let first_line = c
        .chunk_text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    if first_line.is_some_and(|l| pipe_rows::row_of_item(l).is_some()) {
        return;
    }
    let mut depth = 0usize;
    let mut table_seen = false;
    let mut only_headings_before = true;
    for event in Parser::new_ext(&c.chunk_text, parser_options()) {
        match &event {
            Event::Start(Tag::Table(_)) if depth == 0 => table_seen = true,
            Event::Start(Tag::Heading { .. }) => {}
            Event::Start(_) if depth == 0 && !table_seen => only_headings_before = false,
            _ => {}
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if !(table_seen && only_headings_before) {
        v.push(format!(
            "{at}: table chunk does not start with its header row"
        ));
    }
}

/// A chunk whose first content comes after a heading has a headings path.
fn check_heading_path(
    blocks: &[Block],
    first_heading: usize,
    c: &Chunk,
    at: &At,
    v: &mut Violations,
) {
    // Blocks are sorted and disjoint: binary searches keep this linear in
    // the number of chunks (a scan per chunk is quadratic on big documents).
    let (start, end) = (c.byte_start as usize, c.byte_end as usize);
    let first_touching = blocks.partition_point(|b| b.range.end <= start);
    let first_content = blocks[first_touching..]
        .iter()
        .take_while(|b| b.range.start < end)
        .find(|b| b.kind.is_content())
        .map_or(start, |b| b.range.start);
    let under_heading = first_heading < first_content;
    // Every block the chunk touches (thematic breaks aside) is a heading.
    let mut touching = blocks[first_touching..]
        .iter()
        .take_while(|b| b.range.start < end)
        .filter(|b| b.kind != BlockKind::ThematicBreak)
        .peekable();
    let only_headings =
        touching.peek().is_some() && touching.all(|b| matches!(b.kind, BlockKind::Heading { .. }));
    if (under_heading || only_headings) && c.headings_path.is_empty() {
        v.push(format!("{at}: under a heading but headings_path is empty"));
    }
}

/// Below-min chunks only where the Russian enterprise specification allows them: the last chunk of a
/// section (or of the document), a lone table/list/code/quote, or a chunk
/// cut short by a boundary docs/contract.md#blocks-and-boundaries makes mandatory (the next chunk is a
/// table, list or code; the chunk ends with a list, whose exit starts a new
/// chunk; a thematic break lies between them).
fn check_min(
    text: &str,
    blocks: &[Block],
    chunks: &[Chunk],
    i: usize,
    min_tokens: usize,
    at: &At,
    v: &mut Violations,
) {
    let c = &chunks[i];
    if (c.token_count as usize) >= min_tokens || chunks.len() == 1 {
        return;
    }
    if !matches!(c.chunk_type, ChunkType::Paragraph | ChunkType::Mixed) {
        return;
    }
    let Some(next) = chunks.get(i + 1) else {
        return;
    };
    let next_structural = matches!(
        next.chunk_type,
        ChunkType::Table | ChunkType::Code | ChunkType::List
    );
    let gap = text
        .get(c.byte_end as usize..next.byte_start as usize)
        .unwrap_or("");
    let broken_by_rule = !gap.trim().is_empty();
    let end = c.byte_end as usize;
    // The block holding byte `pos`, by binary search (blocks are sorted).
    let block_at = |pos: usize| {
        let i = blocks.partition_point(|b| b.range.end <= pos);
        blocks.get(i).filter(|b| b.range.start <= pos)
    };
    let ends_with_list =
        block_at(end.saturating_sub(1)).is_some_and(|b| matches!(b.kind, BlockKind::List { .. }));
    let in_heading =
        |pos: usize| block_at(pos).is_some_and(|b| matches!(b.kind, BlockKind::Heading { .. }));
    let headings_only = in_heading(c.byte_start as usize) && in_heading(end.saturating_sub(1));
    // The next chunk opens a section when its own span starts with a heading
    // block: by the parsed blocks, since a setext heading's underline can sit
    // several lines down, and two sibling sections can share a title path.
    let next_first_block = {
        let start = next.byte_start as usize;
        let i = blocks.partition_point(|b| b.range.end <= start);
        blocks
            .get(i)
            .filter(|b| (b.range.start as u64) < next.byte_end)
    };
    let next_opens_section =
        next_first_block.is_some_and(|b| matches!(b.kind, BlockKind::Heading { .. }));
    // A table, code block or list stands alone even when it had to be split
    // as text (its pieces are then typed paragraph).
    let next_structural = next_structural
        || next_first_block.is_some_and(|b| {
            matches!(
                b.kind,
                BlockKind::Table | BlockKind::Code { .. } | BlockKind::List { .. }
            )
        });
    let new_section =
        next.headings_path != c.headings_path || next_opens_section || starts_with_heading(next);
    if !(next_structural || new_section || broken_by_rule || ends_with_list || headings_only) {
        v.push(format!(
            "{at}: {} tokens, below the minimum {min_tokens} in the middle of a section",
            c.token_count
        ));
    }
}

fn starts_with_heading(c: &Chunk) -> bool {
    let own = c
        .chunk_text
        .chars()
        .skip(c.overlap_prefix_chars as usize)
        .collect::<String>();
    let t = own.trim_start();
    t.starts_with('#')
        || t.lines()
            .nth(1)
            .is_some_and(|l| l.trim_start().starts_with(['=', '-']))
}

/// Every non-whitespace character outside thematic breaks and front matter
/// (and headings, where the strategy carries them as metadata) lies in some
/// chunk's own span.
fn check_nothing_lost(
    text: &str,
    blocks: &[Block],
    chunks: &[Chunk],
    rules: &Rules,
    coverage: Coverage,
    v: &mut Violations,
) {
    let mut spans: Vec<(usize, usize)> = chunks
        .iter()
        .map(|c| (c.byte_start as usize, c.byte_end as usize))
        .collect();
    spans.extend(
        blocks
            .iter()
            .filter(|b| match b.kind {
                BlockKind::ThematicBreak | BlockKind::FrontMatter => true,
                _ if coverage == Coverage::Tables => b.kind != BlockKind::Table,
                BlockKind::Heading { .. } => rules.headings_as_metadata,
                _ => false,
            })
            .map(|b| (b.range.start, b.range.end)),
    );
    spans.sort_unstable();
    let mut covered = 0usize;
    for (s, e) in spans {
        if s > covered {
            if let Some(gap) = text.get(covered..s) {
                if let Some(off) = gap.find(|c: char| !c.is_whitespace()) {
                    v.push(format!("text lost: byte {} is in no chunk", covered + off));
                }
            }
        }
        covered = covered.max(e);
    }
    if let Some(off) = text
        .get(covered..)
        .and_then(|g| g.find(|c: char| !c.is_whitespace()))
    {
        v.push(format!("text lost: byte {} is in no chunk", covered + off));
    }
}
