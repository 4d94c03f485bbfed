//! The two ways a version is written: a new document's first version in one
//! statement (`store_first_version`, alone or in a batch) and the general
//! transaction. Both must leave the same rows in every table, and the
//! one-statement path must write nothing at all when it does not apply.

use serde_json::{json, Value};
use shared::links::{extract_links, Classifier, Link, LinkConfig};
use shared::{ChunkedDocument, DocumentMeta, Engine};
use tests::{Options, TestApp};
use worker::store::links::DocumentKeys;
use worker::store::versions::{self, NewVersion, StoreOutcome};

type R = anyhow::Result<()>;

const TABLES: [&str; 6] = [
    "documents",
    "source_versions",
    "chunks",
    "document_links",
    "cross_links",
    "outbox",
];

const MARKDOWN: &str = "# Runbook\n\nSee [the wiki](https://example.com/wiki) and OPS-12.\n\n\
## Restart\n\nStop the service, then start it. Check [status](https://status.example.com).\n\n\
| step | command |\n|---|---|\n| stop | `systemctl stop svc` |\n| start | `systemctl start svc` |\n\n\
## Verify\n\n```bash\ncurl -f http://localhost:8080/healthz\n```\n\n![graph](img/graph.png)\n";

/// One version of the runbook chunked by `hierarchy-v1`, with its links
/// (shared with the group writer's tests in `store_group.rs`).
pub(crate) fn chunk(
    engine: &Engine,
    doc: &str,
    version: &str,
) -> anyhow::Result<(ChunkedDocument, Vec<Link>)> {
    let meta = DocumentMeta {
        tenant_id: "acme".into(),
        document_id: doc.into(),
        source_version_id: version.into(),
        title: Some("Runbook".into()),
        file_path: Some("ops/runbook.md".into()),
        ..DocumentMeta::default()
    };
    let chunked = engine.chunk(MARKDOWN.as_bytes(), &meta, Some("hierarchy-v1"))?;
    let classifier = Classifier::new(&LinkConfig::default(), None);
    let links = extract_links(&chunked.normalized, &chunked.chunks, &classifier);
    Ok((chunked, links))
}

fn version<'a>(chunked: &'a ChunkedDocument, id: &'a str, metadata: Value) -> NewVersion<'a> {
    NewVersion {
        tenant_id: "acme",
        document_id: "doc-1",
        source_version_id: id,
        source_version_seq: Some(1),
        occurred_at: None,
        source_type: Some("file"),
        causation_id: "cause-1",
        correlation_id: Some("corr-1"),
        content_sha256: "ab".repeat(32),
        normalized: &chunked.normalized,
        metadata,
        profile: "hierarchy-v1",
        chunker_version: "hierarchy:1.0.0",
        tokenizer: "cl100k_base",
        chunks: &chunked.chunks,
        event_headers: json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}),
    }
}

/// Every row of every table as JSON, without the columns that hold the time
/// of writing (`*_at`, and the event's `occurred_at` inside the payload).
async fn rows(pool: &sqlx::PgPool) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for table in TABLES {
        let values: Vec<Value> = sqlx::query_scalar(&format!("SELECT to_jsonb(t) FROM {table} t"))
            .fetch_all(pool)
            .await?;
        let mut texts = Vec::new();
        for mut v in values {
            if let Value::Object(map) = &mut v {
                map.retain(|k, _| !k.ends_with("_at"));
                if let Some(Value::String(payload)) = map.get_mut("payload") {
                    let mut event: Value = serde_json::from_str(payload)?;
                    if let Value::Object(e) = &mut event {
                        e.remove("occurred_at");
                    }
                    *payload = event.to_string();
                }
            }
            texts.push(v.to_string());
        }
        texts.sort();
        out.push((table.to_owned(), texts));
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_statement_and_the_transaction_write_the_same_rows() -> R {
    let engine = Engine::builtin()?;
    let (mut chunked, links) = chunk(&engine, "doc-1", "v1")?;
    assert!(links.len() >= 3, "the fixture must have links: {links:?}");
    // Heading texts that an array literal must quote and escape, and an
    // empty path: both paths store them exactly.
    chunked.chunks[0].headings_path = ["say \"hi\"", r"C:\temp\", "NULL", "", " {a, b} "]
        .map(str::to_owned)
        .to_vec();
    chunked.chunks[1].headings_path.clear();
    assert!(chunked.chunks.iter().any(|c| c.parent_chunk_id.is_some()));
    let metadata = json!({"title": "Runbook", "file_path": "ops/runbook.md"});
    let keys = DocumentKeys::from_metadata(&metadata);

    let deferred = || Options {
        defer_start: true,
        ..Options::default()
    };
    let (one, general) = (
        TestApp::spawn_with(deferred()).await?,
        TestApp::spawn_with(deferred()).await?,
    );
    let v1 = version(&chunked, "v1", metadata.clone());
    let stored = versions::store_first_version(&one.pool, &v1, &links, &keys).await?;
    assert!(
        matches!(stored, Some(StoreOutcome::Stored { is_current: true, chunk_count, changed, event: Some(_) })
            if chunk_count == chunked.chunks.len() && changed == chunk_count),
        "{stored:?}"
    );
    let stored = versions::store_later_version_with_links(&general.pool, &v1, &links).await?;
    assert!(matches!(
        stored,
        StoreOutcome::Stored {
            is_current: true,
            ..
        }
    ));

    let (a, b) = (rows(&one.pool).await?, rows(&general.pool).await?);
    for ((table, a), (_, b)) in a.iter().zip(&b) {
        // No page links, so no document -> document edges.
        assert_eq!(a.is_empty(), table == "cross_links", "{table}: {a:?}");
        assert_eq!(a, b, "{table} differs between the two paths");
    }
    let mut expected: Vec<(String, i32, Vec<String>)> = chunked
        .chunks
        .iter()
        .map(|c| {
            let ordinal = i32::try_from(c.ordinal).unwrap_or(i32::MAX);
            (
                c.granularity.as_str().to_owned(),
                ordinal,
                c.headings_path.clone(),
            )
        })
        .collect();
    expected.sort();
    for app in [&one, &general] {
        let stored: Vec<(String, i32, Vec<String>)> = sqlx::query_as(
            "SELECT granularity, ordinal, headings_path FROM chunks ORDER BY granularity, ordinal",
        )
        .fetch_all(&app.pool)
        .await?;
        assert_eq!(stored, expected, "headings_path must round-trip exactly");
        // The audit of the dropped foreign key links -> chunks (issue 18).
        let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM orphan_links")
            .fetch_one(&app.pool)
            .await?;
        assert_eq!(orphans, 0, "every stored link has its chunk");
    }
    let mut tx = one.pool.begin().await?;
    sqlx::query(
        "UPDATE chunks SET ordinal = ordinal + 100000 \
         WHERE (tenant_id, document_id, source_version_id, granularity, ordinal) IN \
           (SELECT tenant_id, source_document_id, source_version_id, chunk_granularity, chunk_ordinal \
            FROM document_links LIMIT 1)",
    )
    .execute(&mut *tx)
    .await?;
    let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM orphan_links")
        .fetch_one(&mut *tx)
        .await?;
    assert!(orphans > 0, "a link without its chunk is listed");
    tx.rollback().await?;

    // The document exists now: the one-statement path writes nothing.
    let (chunked2, links2) = chunk(&engine, "doc-1", "v2")?;
    let v2 = version(&chunked2, "v2", metadata);
    assert_eq!(
        versions::store_first_version(&one.pool, &v2, &links2, &keys).await?,
        None
    );
    assert_eq!(rows(&one.pool).await?, a);

    one.cleanup().await?;
    general.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_that_takes_part_in_link_resolution_is_left_to_the_transaction() -> R {
    let engine = Engine::builtin()?;
    let (chunked, links) = chunk(&engine, "doc-1", "v1")?;
    let app = TestApp::spawn_with(Options {
        defer_start: true,
        ..Options::default()
    })
    .await?;
    // A Confluence page id makes the document a link target.
    let metadata = json!({"title": "Runbook", "page_id": "4242", "space_key": "OPS"});
    let keys = DocumentKeys::from_metadata(&metadata);
    let v1 = version(&chunked, "v1", metadata);
    assert_eq!(
        versions::store_first_version(&app.pool, &v1, &links, &keys).await?,
        None
    );
    let written: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM documents) + (SELECT count(*) FROM chunks) \
           + (SELECT count(*) FROM outbox)",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(written, 0);
    // The general path stores it.
    let stored = versions::store_version_with_links(&app.pool, &v1, &links).await?;
    assert!(matches!(
        stored,
        StoreOutcome::Stored {
            is_current: true,
            ..
        }
    ));
    app.cleanup().await
}

fn version_of<'a>(chunked: &'a ChunkedDocument, doc: &'a str, id: &'a str) -> NewVersion<'a> {
    NewVersion {
        document_id: doc,
        ..version(
            chunked,
            id,
            json!({"title": "Runbook", "file_path": "ops/runbook.md"}),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_first_versions_writes_what_one_statement_each_writes() -> R {
    let engine = Engine::builtin()?;
    let docs = ["doc-5", "doc-1", "doc-2", "doc-3", "doc-4"];
    let chunked: Vec<(ChunkedDocument, Vec<Link>)> = docs
        .iter()
        .map(|d| chunk(&engine, d, "v1"))
        .collect::<Result<_, _>>()?;
    let keys = DocumentKeys::from_metadata(&json!({"title": "Runbook"}));
    let views: Vec<NewVersion<'_>> = docs
        .iter()
        .zip(&chunked)
        .map(|(d, (c, _))| version_of(c, d, "v1"))
        .collect();
    let items: Vec<versions::FirstVersion<'_>> = views
        .iter()
        .zip(&chunked)
        .map(|(v, (_, links))| versions::FirstVersion {
            version: v,
            links,
            keys: &keys,
        })
        .collect();
    let deferred = || Options {
        defer_start: true,
        ..Options::default()
    };
    let (batched, single) = (
        TestApp::spawn_with(deferred()).await?,
        TestApp::spawn_with(deferred()).await?,
    );
    // doc-5 exists before the batch: the batch leaves it alone and writes
    // the other four.
    for item in &items[..1] {
        let stored = versions::store_first_versions(&batched.pool, &[*item]).await?;
        assert!(matches!(stored[..], [Some(StoreOutcome::Stored { .. })]));
    }
    let before = rows(&batched.pool).await?;
    let stored = versions::store_first_versions(&batched.pool, &items).await?;
    assert_eq!(stored.len(), items.len());
    assert_eq!(stored[0], None, "an existing document is not written");
    for (outcome, (c, _)) in stored[1..].iter().zip(&chunked[1..]) {
        assert!(
            matches!(outcome, Some(StoreOutcome::Stored { is_current: true, chunk_count, event: Some(_), .. })
                if *chunk_count == c.chunks.len()),
            "{outcome:?}"
        );
    }
    let ids: Vec<i64> = stored
        .iter()
        .flatten()
        .filter_map(|s| match s {
            StoreOutcome::Stored { event: Some(e), .. } => Some(e.id),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 4);
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "events in input order: {ids:?}"
    );
    assert_ne!(rows(&batched.pool).await?, before);

    for item in &items {
        let stored =
            versions::store_first_version(&single.pool, item.version, item.links, &keys).await?;
        assert!(stored.is_some());
    }
    let (a, b) = (rows(&batched.pool).await?, rows(&single.pool).await?);
    for ((table, a), (_, b)) in a.iter().zip(&b) {
        assert_eq!(
            a, b,
            "{table} differs between a batch and one statement each"
        );
    }
    batched.cleanup().await?;
    single.cleanup().await
}
