//! The cluster test's checks once the faults are over: every published
//! version stored exactly once with all its chunks, the newest version of
//! each document current, nothing dead-lettered, every version announced.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures_util::StreamExt;
use lapin::options::{BasicConsumeOptions, BasicGetOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde_json::Value;
use sqlx::PgPool;
use worker::amqp::topology::Topology;

use super::TENANT;

/// Checks everything; returns the documents, the events received and the
/// versions they announce.
pub async fn everything_once(
    pool: &PgPool,
    capture: &Channel,
    topology: &Topology,
    events_queue: &str,
    expected: &[(String, String)],
) -> (usize, usize, usize) {
    // Exactly once, the newest current, nothing dead-lettered.
    let stored: Vec<(String, String)> = sqlx::query_as(
        "SELECT document_id, source_version_id FROM source_versions \
         WHERE tenant_id = $1 ORDER BY 1, 2",
    )
    .bind(TENANT)
    .fetch_all(pool)
    .await
    .unwrap();
    let stored_set: BTreeSet<(String, String)> = stored.iter().cloned().collect();
    assert_eq!(stored.len(), stored_set.len(), "a version stored twice");
    let expected_set: BTreeSet<(String, String)> = expected.iter().cloned().collect();
    let lost: Vec<_> = expected_set.difference(&stored_set).collect();
    assert!(lost.is_empty(), "lost: {lost:?}");
    assert_eq!(stored_set, expected_set, "stored something never published");
    let bad_chunks: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM source_versions v WHERE v.chunk_count <> \
         (SELECT count(*) FROM chunks c WHERE c.tenant_id = v.tenant_id \
          AND c.document_id = v.document_id AND c.source_version_id = v.source_version_id)",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(
        bad_chunks, 0,
        "versions whose chunk rows do not match chunk_count"
    );
    let mut newest: BTreeMap<String, usize> = BTreeMap::new();
    for (d, v) in expected {
        let n: usize = v.trim_start_matches('v').parse().unwrap();
        let e = newest.entry(d.clone()).or_default();
        *e = (*e).max(n);
    }
    let current: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT document_id, current_source_version_id FROM documents")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(current.len(), newest.len(), "documents stored");
    for (d, c) in &current {
        assert_eq!(
            c.as_deref(),
            Some(format!("v{}", newest[d]).as_str()),
            "{d}"
        );
    }
    let failures: i64 = sqlx::query_scalar("SELECT count(*) FROM chunking_failures")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(failures, 0, "chunking_failures rows");
    let dead = capture
        .basic_get(&topology.failed_queue(), BasicGetOptions { no_ack: false })
        .await
        .unwrap();
    assert!(dead.is_none(), "a dead letter: {dead:?}");

    // Every version announced (at least once).
    let mut events = capture
        .basic_consume(
            events_queue,
            "cluster-test",
            BasicConsumeOptions {
                no_ack: true,
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();
    let mut announced: BTreeSet<(String, String)> = BTreeSet::new();
    let mut event_count = 0usize;
    while let Ok(Some(Ok(d))) = tokio::time::timeout(Duration::from_secs(2), events.next()).await {
        event_count += 1;
        let ev: Value = serde_json::from_slice(&d.data).unwrap();
        assert_eq!(ev["schema"], "chunking.completed/v1", "{ev}");
        announced.insert((
            ev["document_id"].as_str().unwrap_or("").to_owned(),
            ev["source_version_id"].as_str().unwrap_or("").to_owned(),
        ));
    }
    assert_eq!(announced, expected_set, "versions announced");
    (newest.len(), event_count, announced.len())
}
