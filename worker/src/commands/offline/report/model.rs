//! What the report shows, before any HTML: the profiles and files of a run
//! and, for one chunked document, the normalized text cut into chunk spans
//! and the gaps between them, the overlap regions, and each chunk's
//! synthetic prefix and suffix.
//!
//! Spans, gaps and overlaps are byte ranges of `ChunkedDocument::normalized`, so the
//! pieces concatenate back to the document exactly: the renderer writes
//! every byte of it once, and nothing else, as text.

use std::ops::Range;

use shared::{Chunk, ChunkedDocument, Granularity, Profile};

/// One top-level piece of the document: a chunk's own span or the text
/// between two spans (blank lines, skipped front matter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Item {
    /// Text no chunk owns.
    Gap(Range<usize>),
    /// The own span of `chunks[index]`.
    Chunk {
        /// Index into `ChunkedDocument::chunks`.
        index: usize,
        /// `byte_start..byte_end`, clamped to the document.
        range: Range<usize>,
    },
}

#[cfg(test)]
impl Item {
    /// The bytes of the normalized document this item covers.
    pub(super) fn range(&self) -> Range<usize> {
        match self {
            Self::Gap(r) | Self::Chunk { range: r, .. } => r.clone(),
        }
    }
}

/// Text before a chunk's own span that the chunk repeats: marked where it
/// stands in the document, in the colour of the chunk that repeats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Overlap {
    /// Bytes of the normalized document (never overlapping another region).
    pub range: Range<usize>,
    /// Ordinal of the chunk whose prefix this is.
    pub of: u32,
}

/// Where a chunk's leading `overlap_prefix_chars` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix<'a> {
    /// No prefix.
    None,
    /// Overlap: the text right before the own span, this many UTF-16 code
    /// units long (what the page's script counts in).
    Overlap(usize),
    /// Text that is not in the document there: a repeated table header or a
    /// re-opened code fence.
    Synthetic(&'a str),
}

/// A chunk as the page shows it, beside its own span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChunkView<'a> {
    /// The chunk.
    pub chunk: &'a Chunk,
    /// Its prefix.
    pub prefix: Prefix<'a>,
    /// Its closing suffix (a closing fence), if any.
    pub suffix: Option<&'a str>,
    /// `embed_text` less `chunk_text` when `embed_text` ends with it and
    /// `chunk_text` is prefix + own span + suffix (the page puts the rest
    /// back together from the document); `None`: store `embed_text` whole.
    pub embed_head: Option<&'a str>,
}

/// One document under one profile, cut up for display.
#[derive(Debug)]
pub(super) struct Layout<'a> {
    /// The normalized document.
    pub text: &'a str,
    /// Gaps and own spans in document order, covering the text exactly.
    pub items: Vec<Item>,
    /// Overlap regions, sorted and disjoint.
    pub overlaps: Vec<Overlap>,
    /// One view per chunk, in ordinal order.
    pub chunks: Vec<ChunkView<'a>>,
}

impl<'a> Layout<'a> {
    /// Cuts `doc` up. Own spans are validated disjoint and in order; should
    /// one start before the previous ended it is clamped, so the items
    /// still cover the document once.
    pub(super) fn new(doc: &'a ChunkedDocument) -> Self {
        let text = doc.normalized.as_str();
        let len = text.len();
        let mut items = Vec::with_capacity(doc.chunks.len() * 2 + 1);
        let mut overlaps: Vec<Overlap> = Vec::new();
        let mut chunks = Vec::with_capacity(doc.chunks.len());
        let mut cursor = 0;
        for (index, chunk) in doc.chunks.iter().enumerate() {
            let start = clamp_to_char(text, to_usize(chunk.byte_start).clamp(cursor, len));
            let end = clamp_to_char(text, to_usize(chunk.byte_end).clamp(start, len));
            if start > cursor {
                items.push(Item::Gap(cursor..start));
            }
            items.push(Item::Chunk {
                index,
                range: start..end,
            });
            cursor = end;

            let view = ChunkView::new(chunk, text);
            if let Prefix::Overlap(_) = view.prefix {
                let own_start = to_usize(chunk.byte_start);
                let from = own_start - view.chunk.prefix().len();
                // Disjoint regions: a prefix reaching into an earlier
                // chunk's region keeps only what lies after it.
                let from = overlaps.last().map_or(from, |o| from.max(o.range.end));
                if from < own_start {
                    overlaps.push(Overlap {
                        range: from..own_start,
                        of: chunk.ordinal,
                    });
                }
            }
            chunks.push(view);
        }
        if cursor < len {
            items.push(Item::Gap(cursor..len));
        }
        Self {
            text,
            items,
            overlaps,
            chunks,
        }
    }
}

impl<'a> ChunkView<'a> {
    fn new(chunk: &'a Chunk, text: &'a str) -> Self {
        let own = text.get(to_usize(chunk.byte_start)..to_usize(chunk.byte_end));
        let prefix_text = chunk.prefix();
        let prefix = if prefix_text.is_empty() {
            Prefix::None
        } else {
            let start = to_usize(chunk.byte_start);
            let before = start
                .checked_sub(prefix_text.len())
                .and_then(|from| text.get(from..start));
            if before == Some(prefix_text) {
                Prefix::Overlap(prefix_text.encode_utf16().count())
            } else {
                Prefix::Synthetic(prefix_text)
            }
        };
        let suffix = Some(chunk.suffix()).filter(|s| !s.is_empty());
        let rebuilt = own.is_some_and(|own| {
            let suffix = suffix.unwrap_or("");
            chunk.chunk_text.len() == prefix_text.len() + own.len() + suffix.len()
                && chunk.chunk_text.starts_with(prefix_text)
                && chunk.chunk_text[prefix_text.len()..].starts_with(own)
                && chunk.chunk_text.ends_with(suffix)
        });
        let embed_head = chunk
            .embed_text
            .strip_suffix(chunk.chunk_text.as_str())
            .filter(|_| rebuilt);
        Self {
            chunk,
            prefix,
            suffix,
            embed_head,
        }
    }
}

/// What the page says about a profile, or about one granularity of a
/// profile that has several (a lane of its own).
#[derive(Debug, Clone)]
pub(super) struct ProfileInfo {
    /// The profile's name.
    pub name: String,
    /// The granularity of the lane, for a profile with several.
    pub granularity: Option<Granularity>,
    /// `strategy:version`.
    pub chunker_version: String,
    /// The tokenizer token counts are in.
    pub tokenizer: String,
    /// What chunks aim at, in tokens.
    pub target: usize,
    /// No chunk is larger, in tokens.
    pub hard_max: usize,
}

impl ProfileInfo {
    /// What `profile` declares.
    pub(super) fn of(profile: &Profile) -> Self {
        let limits = profile.limits();
        Self {
            name: profile.name.clone(),
            granularity: None,
            chunker_version: profile.chunker_version.clone(),
            tokenizer: profile.tokenizer.name().to_owned(),
            target: limits.target_tokens,
            hard_max: limits.hard_max_tokens,
        }
    }

    /// The lanes of `profile`: itself, or one per granularity when it has
    /// several, each with the budgets of the part that makes it.
    pub(super) fn lanes(profile: &Profile) -> Vec<Self> {
        let granularities = profile.granularities();
        if granularities.len() < 2 {
            return vec![Self::of(profile)];
        }
        granularities
            .into_iter()
            .map(|g| {
                let part = profile
                    .active_auxiliaries()
                    .iter()
                    .find(|a| a.profile.granularity == g)
                    .map_or(profile, |a| &a.profile);
                Self {
                    granularity: Some(g),
                    ..Self::of(part)
                }
            })
            .map(|mut lane| {
                lane.name = profile.name.clone();
                lane
            })
            .collect()
    }

    /// The lane's title: the profile, and the granularity of a lane.
    pub(super) fn title(&self) -> String {
        match self.granularity {
            Some(g) => format!("{} \u{b7} {}", self.name, g.as_str()),
            None => self.name.clone(),
        }
    }
}

/// One input file: its chunking under each profile, in profile order, or
/// the `CHUNKING_FAILED` line of that run.
#[derive(Debug)]
pub(super) struct FileReport {
    /// The path as given or found.
    pub path: String,
    /// Size of the file as read.
    pub bytes: usize,
    /// One per profile (by [`FileReport::into_lanes`], one per lane), in
    /// order.
    pub runs: Vec<Result<ChunkedDocument, String>>,
    /// Why each chunk ends (`chunk-worker explain`'s sentence), by profile
    /// name and chunk id: the hover text of its shading.
    pub reasons: std::collections::HashMap<(String, String), String>,
}

impl FileReport {
    /// The runs of `names` (one per profile) as the runs of `lanes`: a
    /// lane of one granularity keeps that granularity's chunks.
    pub(super) fn into_lanes(self, names: &[String], lanes: &[ProfileInfo]) -> Self {
        let runs = lanes
            .iter()
            .map(|lane| {
                let i = names.iter().position(|n| *n == lane.name).unwrap_or(0);
                match (&self.runs[i], lane.granularity) {
                    (Ok(doc), Some(g)) => Ok(ChunkedDocument {
                        chunks: doc
                            .chunks
                            .iter()
                            .filter(|c| c.granularity == g)
                            .cloned()
                            .collect(),
                        ..doc.clone()
                    }),
                    (run, _) => run.clone(),
                }
            })
            .collect();
        Self { runs, ..self }
    }
}

/// Token counts of a set of chunks, for the summary and the histogram.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Sizes {
    /// Every chunk's `token_count`, sorted.
    pub tokens: Vec<u32>,
}

impl Sizes {
    /// The sizes of `chunks`.
    pub(super) fn of<'c>(chunks: impl IntoIterator<Item = &'c Chunk>) -> Self {
        let mut tokens: Vec<u32> = chunks.into_iter().map(|c| c.token_count).collect();
        tokens.sort_unstable();
        Self { tokens }
    }

    /// Adds `other`'s sizes.
    pub(super) fn extend(&mut self, other: &Self) {
        self.tokens.extend_from_slice(&other.tokens);
        self.tokens.sort_unstable();
    }

    /// `min / median / max`, or `-` with no chunks.
    pub(super) fn describe(&self) -> String {
        match (self.tokens.first(), self.tokens.last()) {
            (Some(min), Some(max)) => {
                let median = self.tokens[self.tokens.len() / 2];
                format!("{min} / {median} / {max}")
            }
            _ => "-".to_owned(),
        }
    }
}

fn to_usize(offset: u64) -> usize {
    usize::try_from(offset).unwrap_or(usize::MAX)
}

/// The largest char boundary at or before `at` (validated spans always are
/// one; this only keeps a broken span from splitting a character).
fn clamp_to_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use shared::{DocumentMeta, Engine};

    use super::*;

    fn chunked(markdown: &str, profile: &str) -> ChunkedDocument {
        let meta = DocumentMeta {
            tenant_id: "local".into(),
            document_id: "doc".into(),
            source_version_id: "v1".into(),
            ..Default::default()
        };
        Engine::builtin()
            .unwrap()
            .chunk(markdown.as_bytes(), &meta, Some(profile))
            .unwrap()
    }

    fn table(rows: usize) -> String {
        let mut md = String::from(
            "# Prices\n\nIntro line.\n\n| Item | Description | Price |\n|---|---|---|\n",
        );
        for i in 0..rows {
            md.push_str(&format!(
                "| item {i} | a fairly long description of item number {i} to fill tokens | {i}.00 |\n"
            ));
        }
        md
    }

    #[test]
    fn items_cover_the_document_once_in_order() {
        let doc = chunked(&table(200), "spec-v1");
        let layout = Layout::new(&doc);
        let mut rebuilt = String::new();
        let mut last_end = 0;
        let mut chunk_items = 0;
        for item in &layout.items {
            let r = item.range();
            assert_eq!(r.start, last_end, "{item:?}");
            last_end = r.end;
            rebuilt.push_str(&doc.normalized[r]);
            if let Item::Chunk { index, .. } = item {
                assert_eq!(*index, chunk_items);
                chunk_items += 1;
            }
        }
        assert_eq!(rebuilt, doc.normalized);
        assert_eq!(chunk_items, doc.chunks.len());
    }

    #[test]
    fn table_pieces_repeat_their_header_as_a_synthetic_prefix() {
        let doc = chunked(&table(200), "spec-v1");
        let layout = Layout::new(&doc);
        let synthetic: Vec<_> = layout
            .chunks
            .iter()
            .filter_map(|v| match v.prefix {
                Prefix::Synthetic(p) => Some(p),
                _ => None,
            })
            .collect();
        assert!(!synthetic.is_empty(), "a 200-row table is split");
        for p in synthetic {
            assert!(p.starts_with("| Item | Description | Price |"), "{p:?}");
        }
        for view in &layout.chunks {
            assert!(view.embed_head.is_some(), "{:?}", view.chunk.embed_text);
        }
    }

    #[test]
    fn overlap_regions_end_where_the_repeating_chunk_starts() {
        let para = "This sentence is about chunk boundaries and how overlap repeats text. ";
        let md = format!("# Long\n\n{}\n", para.repeat(400));
        let doc = chunked(&md, "recursive-v1");
        let layout = Layout::new(&doc);
        assert!(!layout.overlaps.is_empty(), "recursive-v1 overlaps prose");
        let mut last = 0;
        for o in &layout.overlaps {
            assert!(o.range.start >= last && o.range.start < o.range.end);
            last = o.range.end;
            let chunk = &doc.chunks[o.of as usize];
            assert_eq!(o.range.end as u64, chunk.byte_start);
            assert!(chunk.prefix().ends_with(&doc.normalized[o.range.clone()]));
        }
    }

    #[test]
    fn sizes_describe_min_median_max() {
        let sizes = Sizes {
            tokens: vec![1, 5, 9],
        };
        assert_eq!(sizes.describe(), "1 / 5 / 9");
        assert_eq!(Sizes::default().describe(), "-");
    }
}
