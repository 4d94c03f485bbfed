//! The `chunking.completed` event of a stored version: its stable id and
//! the change set against the previous current version.

use std::collections::{HashMap, VecDeque};

use shared::contract::{UnchangedChunk, COMPLETED_SCHEMA};
use shared::Chunk;
use uuid::Uuid;

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

/// Compares a version's chunks with the previous version's `(chunk_id,
/// content_hash)` list: returns the ids of new/changed chunks and the pairs of
/// unchanged ones. Equal hashes are paired first come, first served, so a
/// repeated chunk is reused at most as often as it existed before.
pub fn change_set(
    chunks: &[Chunk],
    previous: &[(String, String)],
) -> (Vec<String>, Vec<UnchangedChunk>) {
    let mut by_hash: HashMap<&str, VecDeque<&str>> = HashMap::new();
    for (id, hash) in previous {
        by_hash
            .entry(hash.as_str())
            .or_default()
            .push_back(id.as_str());
    }
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for c in chunks {
        match by_hash
            .get_mut(c.content_hash.as_str())
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
