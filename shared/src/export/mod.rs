//! The per-chunk JSON file format (`chunk-worker chunk --format files`).
//!
//! One object per chunk, field for field as the format defines it: ids built
//! from the content type and the file's name, `embedText` / `originalText`,
//! the heading trail with depths and GitHub anchors, positions in the
//! **original** file in UTF-16 code units, token statistics, prev/next, the
//! Markdown node types (nested ones too), processing metadata and the
//! optional `source` lines. Our own record fields ride along under one extra
//! key, `chunkWorker`, never mixed into the format's names.
//!
//! A profile with several granularities writes one chain of files per
//! granularity: the profile's primary granularity under the format's own
//! names (`{contentType}_{docName}__ch{N}.json`, ids `{contentType}:{docName}::ch{N}`),
//! exactly what a single-granularity profile writes, and every other
//! granularity in a folder of its own (`{granularity}/{contentType}_{docName}__ch{N}.json`,
//! ids `{contentType}:{docName}:{granularity}::ch{N}`). In every chain
//! `chunkNumber` is the `N` of the name (the chunk's ordinal within its
//! granularity) and `prevId` / `nextId` link the chunks of that granularity
//! in order, both ways; `parentId` keeps the format's meaning (the
//! document), and the link to the coarser chunk that contains this one is
//! `chunkWorker.parent_chunk_id` with the file's id in
//! `chunkWorker.parent_file_id`. Pure: the caller reads and writes the
//! files, and passes the clock's readings when it wants them recorded.

use serde::Serialize;

use crate::chunk::document_title;
use crate::chunk::record::{Chunk, DocumentMeta, Granularity};
use crate::chunk::trail::HeadingTrail;
use crate::engine::ChunkedDocument;
use crate::error::ChunkError;
use crate::markdown::anchors::heading_anchors;
use crate::markdown::{nested_nodes, parse_blocks};
use crate::profile::model::Profile;
use crate::source_map::{SourceMap, Utf16Index};

mod nodes;

use nodes::{node_types, Trails};

/// Characters per token of `tokenStats.estimatedTokens`: the usual rule of
/// thumb for English text with BPE tokenizers (`ceil(chars / 4)`, chars in
/// Unicode code points of `originalText`).
pub const CHARS_PER_ESTIMATED_TOKEN: usize = 4;

/// What names and describes one document's files.
#[derive(Debug, Clone)]
pub struct FileOptions<'a> {
    /// `contentType` (`doc`, `post`).
    pub content_type: &'a str,
    /// `docName`: the source file's name without its extension.
    pub doc_name: &'a str,
    /// `metadata.sourceFile`: the source file's name.
    pub source_file: &'a str,
    /// `source.filePath`: the path as given.
    pub file_path: &'a str,
    /// `metadata.processedAt` (ISO 8601) and `pipeline.processingTimeMs`,
    /// only when asked for: without them the files are the same bytes on
    /// every run.
    pub timestamps: Option<(String, u64)>,
}

/// What every file of one document shares, computed once; the files borrow
/// from it.
#[derive(Debug)]
pub struct DocumentParts {
    /// The granularity written under the format's own names.
    primary: Granularity,
    parent_id: String,
    file_title: String,
    chunking_options: serde_json::Value,
    headers: Vec<(Vec<u8>, Vec<String>)>,
    positions: Vec<(SourcePosition, usize, usize)>,
    node_types: Vec<Vec<&'static str>>,
}

/// One chunk's file: its path under `chunks/` and its object.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkFile<'a> {
    /// `{contentType}_{docName}__ch{N}.json`, in a folder named after the
    /// granularity for a granularity other than the primary one.
    #[serde(skip)]
    pub file_name: String,
    /// The object written to it.
    #[serde(flatten)]
    pub object: ChunkFileObject<'a>,
}

/// The per-chunk file format's chunk object, in its field order.
#[allow(missing_docs)] // the fields are the per-chunk file format's, documented there
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkFileObject<'a> {
    pub id: String,
    pub parent_id: &'a str,
    pub chunk_number: u32,
    pub content_type: &'a str,
    pub embed_text: &'a str,
    pub original_text: &'a str,
    pub file_title: &'a str,
    pub section_title: &'a str,
    pub header_path: &'a [String],
    pub header_breadcrumb: String,
    pub header_depths: Vec<u8>,
    pub header_slugs: Vec<String>,
    pub section_slug: String,
    pub source_position: SourcePosition,
    pub token_stats: TokenStats,
    pub prev_id: Option<String>,
    pub next_id: Option<String>,
    pub node_types: Vec<&'static str>,
    pub metadata: FileMetadata<'a>,
    pub source: SourceLines<'a>,
    /// Our own record fields (ids, hashes, normalized offsets).
    pub chunk_worker: OwnFields<'a>,
}

impl DocumentParts {
    /// The granularity written under the format's own names.
    pub fn primary(&self) -> Granularity {
        self.primary
    }
}

/// The per-chunk file format `sourcePosition`: the chunk's own span in the original file,
/// UTF-16 code units.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcePosition {
    pub char_start: usize,
    pub char_end: usize,
    pub total_chars: usize,
}

/// The per-chunk file format `tokenStats`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenStats {
    /// Exact count of `originalText` in the profile's tokenizer.
    pub tokens: u32,
    /// `ceil(chars / CHARS_PER_ESTIMATED_TOKEN)`.
    pub estimated_tokens: usize,
}

/// The per-chunk file format `metadata`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileMetadata<'a> {
    pub source_file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processed_at: Option<&'a str>,
    pub chunking_options: &'a serde_json::Value,
    pub pipeline: Pipeline<'a>,
}

/// The per-chunk file format `metadata.pipeline`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pipeline<'a> {
    /// The chunker version (`structural:1.3.0`).
    pub version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processing_time_ms: Option<u64>,
}

/// The per-chunk file format's optional `source`: 1-based lines of the original file.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceLines<'a> {
    pub file_path: &'a str,
    pub start_line: usize,
    pub end_line: usize,
}

/// The chunk record's own fields that the per-chunk file format has no name for.
#[allow(missing_docs)] // the JSONL record's fields, documented on `Chunk`
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwnFields<'a> {
    pub chunk_id: &'a str,
    pub content_hash: &'a str,
    pub granularity: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_table: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_chunk_id: Option<&'a str>,
    /// The file id of the chunk `parent_chunk_id` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_file_id: Option<String>,
    pub tenant_id: &'a str,
    pub document_id: &'a str,
    pub source_version_id: &'a str,
    pub ordinal: u32,
    pub chunk_type: &'static str,
    pub chunk_path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_token_count: Option<u32>,
    pub char_start: u64,
    pub char_end: u64,
    pub byte_start: u64,
    pub byte_end: u64,
    pub overlap_prefix_chars: u32,
    pub closing_suffix_chars: u32,
    pub profile: &'a str,
    pub tokenizer: &'a str,
    /// The pages the chunk's own content spans (`layout_heuristic`, when
    /// the document carries page markers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_start: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_end: Option<u32>,
}

/// The name of chunk `n`'s file.
pub fn file_name(content_type: &str, doc_name: &str, n: usize) -> String {
    format!("{content_type}_{doc_name}__ch{n}.json")
}

/// The folder (under `chunks/`) of a granularity's files: none for the
/// primary one, the granularity's name for the others.
pub fn granularity_folder(granularity: Granularity, primary: Granularity) -> Option<&'static str> {
    (granularity != primary).then(|| granularity.as_str())
}

/// A chunk's file id: `{contentType}:{docName}::ch{N}`, with the
/// granularity before `::ch` for a granularity other than the primary one.
fn file_id(parent_id: &str, folder: Option<&str>, n: u32) -> String {
    match folder {
        Some(g) => format!("{parent_id}:{g}::ch{n}"),
        None => format!("{parent_id}::ch{n}"),
    }
}

/// The per-document parts of the per-chunk file format's objects for `doc`, chunked from
/// `original` (the file's bytes as text) with `meta` under `profile`:
/// positions in the original, heading depths and slugs, node types.
pub fn document_parts(
    original: &str,
    doc: &ChunkedDocument,
    meta: &DocumentMeta,
    profile: &Profile,
    opts: &FileOptions<'_>,
) -> Result<DocumentParts, ChunkError> {
    let map = SourceMap::new(original, &doc.normalized).ok_or_else(|| {
        ChunkError::SourcePositions(format!(
            "the normalized text of {} does not align with the file",
            opts.file_path
        ))
    })?;
    let utf16 = Utf16Index::new(original);
    let blocks = parse_blocks(&doc.normalized);
    let nested = nested_nodes(&doc.normalized);
    let anchors = heading_anchors(&doc.normalized, &blocks);
    let trails = Trails {
        trail: HeadingTrail::new(&blocks),
        anchors: &anchors,
    };
    let total_chars = utf16.len_utf16();
    let mut headers = Vec::with_capacity(doc.chunks.len());
    let mut positions = Vec::with_capacity(doc.chunks.len());
    let mut node_kinds = Vec::with_capacity(doc.chunks.len());
    for chunk in &doc.chunks {
        let own = chunk.byte_start as usize..chunk.byte_end as usize;
        let (start, end) = (map.start(own.start), map.end(own.end));
        let header = trails.header(&chunk.headings_path, own.end);
        headers.push((header.depths, header.slugs));
        positions.push((
            SourcePosition {
                char_start: utf16.utf16(start),
                char_end: utf16.utf16(end),
                total_chars,
            },
            utf16.line(start),
            utf16.line(end.saturating_sub(1).max(start)),
        ));
        node_kinds.push(node_types(&blocks, &nested, &own));
    }
    Ok(DocumentParts {
        primary: profile.granularity,
        parent_id: format!("{}:{}", opts.content_type, opts.doc_name),
        file_title: document_title(meta, &blocks).unwrap_or_default(),
        chunking_options: chunking_options(profile),
        headers,
        positions,
        node_types: node_kinds,
    })
}

/// The file objects of every chunk of `doc`, borrowing from `doc`, `parts`
/// (from [`document_parts`]) and `opts`: one chain per granularity (see the
/// module docs), in the order of `doc.chunks`.
pub fn per_chunk_files<'a>(
    doc: &'a ChunkedDocument,
    parts: &'a DocumentParts,
    opts: &'a FileOptions<'a>,
) -> Vec<ChunkFile<'a>> {
    let folder = |g: Granularity| granularity_folder(g, parts.primary);
    // Chunks per granularity (ordinals run 0..n-1 within each), and where
    // each chunk id's file is, for the parent links.
    let mut counts = [0u32; 5];
    let mut files_of: std::collections::HashMap<&str, String> =
        std::collections::HashMap::with_capacity(doc.chunks.len());
    for c in &doc.chunks {
        let slot = crate::chunk::granular::slot(c.granularity);
        counts[slot] = counts[slot].max(c.ordinal + 1);
        files_of.insert(
            &c.chunk_id,
            file_id(&parts.parent_id, folder(c.granularity), c.ordinal),
        );
    }
    let mut out = Vec::with_capacity(doc.chunks.len());
    for (i, chunk) in doc.chunks.iter().enumerate() {
        let (depths, slugs) = &parts.headers[i];
        let (position, start_line, end_line) = parts.positions[i];
        let g = chunk.granularity;
        let n = chunk.ordinal;
        let in_chain = counts[crate::chunk::granular::slot(g)];
        let id = |k: u32| file_id(&parts.parent_id, folder(g), k);
        let name = file_name(opts.content_type, opts.doc_name, n as usize);
        let mut own = own_fields(chunk);
        own.parent_file_id = chunk
            .parent_chunk_id
            .as_deref()
            .and_then(|p| files_of.get(p).cloned());
        out.push(ChunkFile {
            file_name: match folder(g) {
                Some(dir) => format!("{dir}/{name}"),
                None => name,
            },
            object: ChunkFileObject {
                id: id(n),
                parent_id: &parts.parent_id,
                chunk_number: n,
                content_type: opts.content_type,
                embed_text: &chunk.embed_text,
                original_text: &chunk.chunk_text,
                file_title: &parts.file_title,
                section_title: chunk.headings_path.last().map_or("", String::as_str),
                header_path: &chunk.headings_path,
                header_breadcrumb: chunk.headings_path.join(" > "),
                header_depths: depths.clone(),
                section_slug: slugs.last().cloned().unwrap_or_default(),
                header_slugs: slugs.clone(),
                source_position: position,
                token_stats: TokenStats {
                    tokens: chunk.token_count,
                    estimated_tokens: chunk
                        .chunk_text
                        .chars()
                        .count()
                        .div_ceil(CHARS_PER_ESTIMATED_TOKEN),
                },
                prev_id: n.checked_sub(1).map(id),
                next_id: (n + 1 < in_chain).then(|| id(n + 1)),
                node_types: parts.node_types[i].clone(),
                metadata: FileMetadata {
                    source_file: opts.source_file,
                    processed_at: opts.timestamps.as_ref().map(|(at, _)| at.as_str()),
                    chunking_options: &parts.chunking_options,
                    pipeline: Pipeline {
                        version: &doc.chunker_version,
                        processing_time_ms: opts.timestamps.as_ref().map(|(_, ms)| *ms),
                    },
                },
                source: SourceLines {
                    file_path: opts.file_path,
                    start_line,
                    end_line,
                },
                chunk_worker: own,
            },
        });
    }
    out
}

/// `metadata.chunkingOptions`: the profile and its parameters.
fn chunking_options(profile: &Profile) -> serde_json::Value {
    let params = serde_json::to_value(profile.chunker().params()).unwrap_or_default();
    let mut v = serde_json::json!({
        "profile": profile.name,
        "strategy": profile.strategy,
        "tokenizer": profile.tokenizer.name(),
        "granularity": profile.granularity.as_str(),
        "breadcrumbMode": profile.breadcrumb.as_str(),
        "params": params,
    });
    if let (Some(w), Some(obj)) = (&profile.embedder, v.as_object_mut()) {
        obj.insert(
            "embedder".into(),
            serde_json::json!({ "name": w.name, "maxTokens": w.max_tokens }),
        );
    }
    v
}

fn own_fields(c: &Chunk) -> OwnFields<'_> {
    OwnFields {
        chunk_id: &c.chunk_id,
        content_hash: &c.content_hash,
        granularity: c.granularity.as_str(),
        chunk_key: c.chunk_key.as_deref(),
        is_table: c.is_table,
        parent_chunk_id: c.parent_chunk_id.as_deref(),
        parent_file_id: None,
        tenant_id: &c.tenant_id,
        document_id: &c.document_id,
        source_version_id: &c.source_version_id,
        ordinal: c.ordinal,
        chunk_type: c.chunk_type.as_str(),
        chunk_path: &c.chunk_path,
        embed_token_count: c.embed_token_count,
        char_start: c.char_start,
        char_end: c.char_end,
        byte_start: c.byte_start,
        byte_end: c.byte_end,
        overlap_prefix_chars: c.overlap_prefix_chars,
        closing_suffix_chars: c.closing_suffix_chars,
        profile: &c.profile,
        tokenizer: &c.tokenizer,
        page_start: c.page_start,
        page_end: c.page_end,
    }
}
