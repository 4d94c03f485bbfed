//! The `chunking.completed` event of a stored version, built by a pure
//! function: its stable id and the change set against the previous current
//! version.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use shared::contract::{
    ChunkingCompleted, GranularityChunks, UnchangedChunk, COMPLETED_ROUTING_KEY, COMPLETED_SCHEMA,
};
use shared::{Chunk, DocumentMeta};
use uuid::Uuid;

use super::types::NewVersion;

/// Namespace of the deterministic (v5) event ids.
pub const EVENT_NAMESPACE: Uuid = Uuid::from_u128(0x6a4f_0f3e_8c1d_4b7a_9e52_3d0c_7b1e_a9f4);

/// Logical exchange of every event (the relay adds the topology prefix).
pub const EVENTS_EXCHANGE: &str = "ingest.events";

/// The event id of a version's `chunking.completed` event: stable, so a
/// re-publish is a duplicate downstream can drop.
pub fn completed_event_id(tenant_id: &str, document_id: &str, source_version_id: &str) -> Uuid {
    Uuid::new_v5(
        &EVENT_NAMESPACE,
        format!("{COMPLETED_SCHEMA}|{tenant_id}|{document_id}|{source_version_id}").as_bytes(),
    )
}

/// The committed `chunking.completed` row `id` of `v`, as the relay
/// publishes it from memory: the same values the row holds.
pub fn handed_over(
    id: i64,
    event_id: Uuid,
    payload: String,
    v: &NewVersion<'_>,
) -> crate::outbox::committed::Pending {
    crate::outbox::committed::Pending {
        id,
        event_id,
        exchange: EVENTS_EXCHANGE.to_owned(),
        routing_key: COMPLETED_ROUTING_KEY.to_owned(),
        payload,
        headers: v.event_headers.clone(),
        attempts: 0,
    }
}

/// A chunk of the previous current version: `(chunk_id, content_hash,
/// granularity)`.
pub type PreviousChunk = (String, String, String);

/// Compares a version's chunks with the previous version's chunks: returns
/// the ids of new/changed chunks and the pairs of unchanged ones. Equal
/// hashes of the same granularity are paired first come, first served, so a
/// repeated chunk is reused at most as often as it existed before (and a
/// window never reuses a section's embedding).
pub fn change_set(
    chunks: &[Chunk],
    previous: &[PreviousChunk],
) -> (Vec<String>, Vec<UnchangedChunk>) {
    let mut by_hash: HashMap<(&str, &str), VecDeque<&str>> = HashMap::new();
    for (id, hash, granularity) in previous {
        by_hash
            .entry((granularity.as_str(), hash.as_str()))
            .or_default()
            .push_back(id.as_str());
    }
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for c in chunks {
        match by_hash
            .get_mut(&(c.granularity.as_str(), c.content_hash.as_str()))
            .and_then(VecDeque::pop_front)
        {
            Some(prev) => unchanged.push(UnchangedChunk {
                chunk_id: c.chunk_id.clone(),
                previous_chunk_id: prev.to_owned(),
            }),
            None => changed.push(c.chunk_id.clone()),
        }
    }
    (changed, unchanged)
}

/// Where a stored version stands against its document's previous current
/// version.
#[derive(Debug)]
pub struct Standing<'a> {
    /// It is the document's current version after the commit.
    pub is_current: bool,
    /// The current version before the commit, if any.
    pub previous_source_version_id: Option<String>,
    /// That version's chunks, by granularity and ordinal.
    pub previous: &'a [PreviousChunk],
}

/// The `chunking.completed/v1` event of `v`: a pure function of the version,
/// its standing and the time given.
pub fn completed_event(
    v: &NewVersion<'_>,
    standing: &Standing<'_>,
    occurred_at: String,
) -> ChunkingCompleted {
    let (changed_chunk_ids, unchanged_chunks) = change_set(v.chunks, standing.previous);
    let granularities = per_granularity(v.chunks, &changed_chunk_ids);
    ChunkingCompleted {
        schema: COMPLETED_SCHEMA.to_owned(),
        event_id: completed_event_id(v.tenant_id, v.document_id, v.source_version_id).to_string(),
        causation_id: v.causation_id.to_owned(),
        tenant_id: v.tenant_id.to_owned(),
        document_id: v.document_id.to_owned(),
        source_version_id: v.source_version_id.to_owned(),
        source_version_seq: v.source_version_seq,
        is_current: standing.is_current,
        profile: v.profile.to_owned(),
        chunker_version: v.chunker_version.to_owned(),
        tokenizer: v.tokenizer.to_owned(),
        chunk_count: u32::try_from(v.chunks.len()).unwrap_or(u32::MAX),
        chunk_ids: v.chunks.iter().map(|c| c.chunk_id.clone()).collect(),
        total_tokens: v.chunks.iter().map(|c| u64::from(c.token_count)).sum(),
        previous_source_version_id: standing.previous_source_version_id.clone(),
        changed_chunk_ids,
        unchanged_chunks,
        correlation_id: v.correlation_id.map(str::to_owned),
        occurred_at,
        metadata: DocumentMeta::carried_metadata(&v.metadata).map(|m| (*m).clone()),
        granularities,
    }
}

/// The chunk ids and changed ids per granularity, when there are several.
fn per_granularity(
    chunks: &[Chunk],
    changed: &[String],
) -> Option<BTreeMap<String, GranularityChunks>> {
    let first = chunks.first()?.granularity;
    if chunks.iter().all(|c| c.granularity == first) {
        return None;
    }
    let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
    let mut out: BTreeMap<String, GranularityChunks> = BTreeMap::new();
    for c in chunks {
        let g = out
            .entry(c.granularity.as_str().to_owned())
            .or_insert_with(|| GranularityChunks {
                chunk_ids: Vec::new(),
                changed_chunk_ids: Vec::new(),
            });
        g.chunk_ids.push(c.chunk_id.clone());
        if changed.contains(c.chunk_id.as_str()) {
            g.changed_chunk_ids.push(c.chunk_id.clone());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_event_lists_every_chunk_what_changed_and_the_metadata() {
        let meta = DocumentMeta {
            tenant_id: "t".into(),
            document_id: "d".into(),
            source_version_id: "v2".into(),
            ..DocumentMeta::default()
        };
        let doc = shared::Engine::builtin()
            .unwrap()
            .chunk(b"# A\n\nOne.\n\n# B\n\nTwo.\n", &meta, None)
            .unwrap();
        let v = NewVersion {
            tenant_id: "t",
            document_id: "d",
            source_version_id: "v2",
            source_version_seq: Some(2),
            occurred_at: None,
            source_type: Some("confluence"),
            causation_id: "e2",
            correlation_id: Some("c"),
            content_sha256: String::new(),
            normalized: &doc.normalized,
            metadata: serde_json::json!({"title": "T", "other": 1}),
            profile: "spec-v1",
            chunker_version: "structural:1.3.0",
            tokenizer: "cl100k_base",
            chunks: &doc.chunks,
            event_headers: serde_json::json!({}),
        };
        // The previous version had the first chunk's content under another id.
        let previous = vec![(
            "old-0".to_owned(),
            doc.chunks[0].content_hash.clone(),
            "section".to_owned(),
        )];
        let e = completed_event(
            &v,
            &Standing {
                is_current: true,
                previous_source_version_id: Some("v1".into()),
                previous: &previous,
            },
            "2026-11-24T00:00:00Z".into(),
        );
        assert_eq!(e.chunk_count as usize, doc.chunks.len());
        assert_eq!(e.chunk_ids.len(), doc.chunks.len());
        assert_eq!(e.unchanged_chunks.len(), 1);
        assert_eq!(e.unchanged_chunks[0].previous_chunk_id, "old-0");
        assert_eq!(e.changed_chunk_ids.len(), doc.chunks.len() - 1);
        assert_eq!(e.event_id, completed_event_id("t", "d", "v2").to_string());
        assert_eq!(e.metadata, Some(serde_json::json!({"title": "T"})));
        assert_eq!(e.granularities, None, "one granularity: no breakdown");
        assert_eq!(
            e.total_tokens,
            doc.chunks
                .iter()
                .map(|c| u64::from(c.token_count))
                .sum::<u64>()
        );
    }

    #[test]
    fn a_multi_granularity_version_lists_ids_per_granularity_and_pairs_within_one() {
        let meta = DocumentMeta {
            tenant_id: "t".into(),
            document_id: "d".into(),
            source_version_id: "v2".into(),
            ..DocumentMeta::default()
        };
        let doc = shared::Engine::builtin()
            .unwrap()
            .chunk(
                b"# A\n\nOne short paragraph.\n",
                &meta,
                Some("hierarchy-v1"),
            )
            .unwrap();
        let section = doc
            .chunks
            .iter()
            .find(|c| c.granularity.as_str() == "section")
            .unwrap();
        // The same content as a previous window does not make the section
        // unchanged: embeddings are reused within a granularity only.
        let previous = vec![(
            "old-w".to_owned(),
            section.content_hash.clone(),
            "window".to_owned(),
        )];
        let (changed, unchanged) = change_set(&doc.chunks, &previous);
        let window = doc
            .chunks
            .iter()
            .find(|c| c.granularity.as_str() == "window")
            .unwrap();
        assert_eq!(
            unchanged.len(),
            usize::from(window.content_hash == section.content_hash)
        );
        assert!(changed.contains(&section.chunk_id));
        let groups = per_granularity(&doc.chunks, &changed).unwrap();
        assert_eq!(
            groups.keys().map(String::as_str).collect::<Vec<_>>(),
            ["document", "section", "window"]
        );
        let listed: usize = groups.values().map(|g| g.chunk_ids.len()).sum();
        assert_eq!(listed, doc.chunks.len());
    }
}
