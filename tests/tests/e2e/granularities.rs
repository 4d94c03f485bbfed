//! Multi-granularity storage (issue 10) against the real RabbitMQ and
//! Postgres: a `hierarchy-v1` version stores its document, section, window
//! and table chunks in one transaction, exactly as the engine makes them
//! (ordinals per granularity, parents, keys, table digests); its event lists
//! the ids per granularity and pairs unchanged content within a granularity;
//! links name the granularity of the chunk that holds them; `window-v1`'s
//! window and table chunks (both numbered from 0) are stored side by side.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use serde_json::{json, Value};
use shared::Engine;
use tests::{message, meta_of, TestApp};

type R = anyhow::Result<()>;

const DOC: &str = "# Handbook\n\nThe on-call handbook explains how incidents are handled. \
See [the escalation page](https://acme.atlassian.net/wiki/spaces/ENG/pages/42/Escalation) first.\n\n\
## Severity levels\n\nSeverity is decided by the incident commander within ten minutes. \
A severity one incident pages the whole rotation. A severity two incident pages the primary only.\n\n\
| Severity | Response | Pager |\n|---|---|---|\n| SEV1 | 5 min | everyone |\n| SEV2 | 15 min | primary |\n| SEV3 | next day | none |\n\n\
## Handover\n\nWrite the handover note before the shift ends. List open incidents, their owners and the next steps. \
Link every incident ticket, and say which alerts were silenced and why.\n";

/// `(granularity, ordinal, chunk_id, parent_chunk_id, chunk_key, is_table, facet_json)`.
type Row = (
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<bool>,
    Option<Value>,
);

async fn rows(app: &TestApp, document: &str, version: &str) -> Vec<Row> {
    sqlx::query_as(
        "SELECT granularity, ordinal, chunk_id, parent_chunk_id, chunk_key, is_table, facet_json \
         FROM chunks WHERE document_id = $1 AND source_version_id = $2 \
         ORDER BY array_position(ARRAY['document','section','paragraph','table','window'], granularity), ordinal",
    )
    .bind(document)
    .bind(version)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hierarchy_version_stores_every_granularity_and_its_event_lists_them() -> R {
    let app = TestApp::spawn().await?;
    let mut msg = message("acme-prod", "handbook", "v1", DOC);
    msg["profile"] = json!("hierarchy-v1");
    app.publish_json(&msg).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["schema"], "chunking.completed/v1", "{ev}");
    assert_eq!(
        ev["chunker_version"],
        "structural:1.3.0+document:1.0.0+sliding_window:1.0.0+table:1.0.0"
    );

    let expected =
        Engine::builtin()?.chunk(DOC.as_bytes(), &meta_of(&msg), Some("hierarchy-v1"))?;
    let stored = rows(&app, "handbook", "v1").await;
    assert_eq!(stored.len(), expected.chunks.len());
    for (row, c) in stored.iter().zip(&expected.chunks) {
        assert_eq!(row.0, c.granularity.as_str());
        assert_eq!(row.1 as u32, c.ordinal);
        assert_eq!(row.2, c.chunk_id);
        assert_eq!(row.3, c.parent_chunk_id);
        assert_eq!(row.4, c.chunk_key);
        assert_eq!(row.5, c.is_table);
        assert_eq!(row.6, c.facet_json);
    }
    let groups = ev["granularities"].as_object().unwrap();
    let keys: Vec<&str> = groups.keys().map(String::as_str).collect();
    assert_eq!(keys, ["document", "section", "table", "window"]);
    for (g, ids) in groups {
        let want: Vec<&str> = expected
            .chunks
            .iter()
            .filter(|c| c.granularity.as_str() == g)
            .map(|c| c.chunk_id.as_str())
            .collect();
        let got: Vec<&str> = ids["chunk_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(got, want, "{g}");
        assert_eq!(
            ids["changed_chunk_ids"], ids["chunk_ids"],
            "a first version: all new"
        );
    }
    // The link lives in the first section chunk.
    let links: Vec<(String, i32)> = sqlx::query_as(
        "SELECT chunk_granularity, chunk_ordinal FROM document_links WHERE source_document_id = 'handbook'",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(links, [("section".to_owned(), 0)]);

    // A second version that changes one section: per granularity, only the
    // chunks whose content is new are changed.
    let v2_doc = DOC.replace("ten minutes", "five minutes");
    let mut v2 = message("acme-prod", "handbook", "v2", &v2_doc);
    v2["profile"] = json!("hierarchy-v1");
    v2["occurred_at"] = json!("2026-11-20T11:00:00Z");
    app.publish_json(&v2).await?;
    let ev2 = app.next_event().await?.json()?;
    let sections = &ev2["granularities"]["section"];
    let changed = sections["changed_chunk_ids"].as_array().unwrap().len();
    let all = sections["chunk_ids"].as_array().unwrap().len();
    assert!(
        changed >= 1 && changed < all,
        "{changed} of {all} sections changed"
    );
    let tables = &ev2["granularities"]["table"];
    assert_eq!(
        tables["changed_chunk_ids"].as_array().unwrap().len(),
        0,
        "the table did not change"
    );

    // The analyst's questions: a document's sections, a chunk's parent.
    let sections: Vec<i32> = sqlx::query_scalar(
        "SELECT ordinal FROM current_chunks WHERE tenant_id = 'acme-prod' AND document_id = 'handbook' \
         AND granularity = 'section' ORDER BY ordinal",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(sections, (0..all as i32).collect::<Vec<_>>());
    // A window that crosses a section boundary climbs to the document chunk.
    let parents: Vec<(String, bool)> = sqlx::query_as(
        "SELECT p.granularity, p.byte_start <= w.byte_start AND w.byte_end <= p.byte_end \
         FROM current_chunks w JOIN current_chunks p \
           ON p.tenant_id = w.tenant_id AND p.document_id = w.document_id \
          AND p.source_version_id = w.source_version_id AND p.chunk_id = w.parent_chunk_id \
         WHERE w.document_id = 'handbook' AND w.granularity = 'window' ORDER BY w.ordinal",
    )
    .fetch_all(&app.pool)
    .await?;
    assert!(
        parents
            .iter()
            .all(|(g, contains)| *contains && g != "window"),
        "{parents:?}"
    );
    assert!(parents.iter().any(|(g, _)| g == "section"), "{parents:?}");
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_and_table_chunks_numbered_from_zero_are_stored_side_by_side() -> R {
    let app = TestApp::spawn().await?;
    let mut msg = message("acme-prod", "windows", "v1", DOC);
    msg["profile"] = json!("window-v1");
    app.publish_json(&msg).await?;
    let ev = app.next_event().await?.json()?;
    assert_eq!(ev["schema"], "chunking.completed/v1", "{ev}");
    let stored = rows(&app, "windows", "v1").await;
    let firsts: Vec<(&str, i32)> = stored
        .iter()
        .filter(|r| r.1 == 0)
        .map(|r| (r.0.as_str(), r.1))
        .collect();
    assert_eq!(firsts, [("table", 0), ("window", 0)]);
    assert_eq!(ev["chunk_count"].as_u64().unwrap() as usize, stored.len());
    app.cleanup().await
}

/// Every profile's chunks are stored with `chunk_key` and `is_table`; rows
/// stored before that (NULL) are back-filled by migration 0013 to exactly
/// what the engine writes now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_profiles_chunks_carry_keys_and_old_rows_are_back_filled() -> R {
    let app = TestApp::spawn().await?;
    for (document, profile) in [
        ("keyed-spec", "spec-v1"),
        ("keyed-recursive", "recursive-v1"),
    ] {
        let mut msg = message("acme-prod", document, "v1", DOC);
        msg["profile"] = json!(profile);
        app.publish_json(&msg).await?;
        app.wait_stored(document, "v1").await?;
    }
    let stored: Vec<(String, i32, Option<String>, Option<bool>)> = sqlx::query_as(
        "SELECT document_id, ordinal, chunk_key, is_table FROM chunks ORDER BY 1, 2",
    )
    .fetch_all(&app.pool)
    .await?;
    assert!(stored.len() > 2);
    for (document, ordinal, key, table) in &stored {
        let strategy = if document == "keyed-spec" {
            "structural"
        } else {
            "recursive"
        };
        assert_eq!(
            key.as_deref(),
            Some(format!("{document}:{strategy}:section:{ordinal}").as_str())
        );
        assert!(table.is_some(), "{document} #{ordinal}");
    }
    assert!(
        stored.iter().any(|r| r.3 == Some(true)),
        "the table is a table"
    );
    // As a release before every chunk had a key stored them.
    sqlx::query("UPDATE chunks SET chunk_key = NULL, is_table = NULL")
        .execute(&app.pool)
        .await?;
    let migration = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../migrations/0013_chunk_keys_everywhere.sql"),
    )?;
    sqlx::raw_sql(&migration).execute(&app.pool).await?;
    let back: Vec<(String, i32, Option<String>, Option<bool>)> = sqlx::query_as(
        "SELECT document_id, ordinal, chunk_key, is_table FROM chunks ORDER BY 1, 2",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(back, stored);
    app.cleanup().await
}

/// `(ordinal, page_start, page_end, facet_json)`.
type PageRow = (i32, Option<i32>, Option<i32>, Option<Value>);

/// The newer record fields reach the table exactly as the engine writes
/// them: `layout-v1`'s page numbers (from a converted PDF with page markers)
/// and `clinical-v1`'s role facets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_numbers_and_role_facets_are_stored_as_the_engine_writes_them() -> R {
    let app = TestApp::spawn().await?;
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tests/fixtures");
    let slides = std::fs::read_to_string(fixtures.join("layout/04-slides.md"))?;
    let clinical = "# Dosage and Administration\n\nThe recommended dose is 40 mg every other week by subcutaneous injection.\n\n\
# Adverse Reactions\n\nThe most common adverse reactions were injection site reactions (20%) and headache (12%).\n";
    let engine = Engine::builtin()?;
    for (document, profile, text) in [
        ("slides", "layout-v1", slides.as_str()),
        ("label", "clinical-v1", clinical),
    ] {
        let mut msg = message("acme-prod", document, "v1", text);
        msg["profile"] = json!(profile);
        app.publish_json(&msg).await?;
        app.wait_stored(document, "v1").await?;
        let expected = engine.chunk(text.as_bytes(), &meta_of(&msg), Some(profile))?;
        let stored: Vec<PageRow> = sqlx::query_as(
            "SELECT ordinal, page_start, page_end, facet_json FROM current_chunks \
             WHERE document_id = $1 ORDER BY ordinal",
        )
        .bind(document)
        .fetch_all(&app.pool)
        .await?;
        assert_eq!(stored.len(), expected.chunks.len(), "{profile}");
        for (row, c) in stored.iter().zip(&expected.chunks) {
            assert_eq!(
                row.1.map(|p| p as u32),
                c.page_start,
                "{profile} #{}",
                row.0
            );
            assert_eq!(row.2.map(|p| p as u32), c.page_end, "{profile} #{}", row.0);
            assert_eq!(row.3, c.facet_json, "{profile} #{}", row.0);
        }
        if profile == "layout-v1" {
            assert!(
                stored.iter().all(|r| r.1.is_some()),
                "every slide chunk has a page"
            );
            assert!(stored.iter().any(|r| r.2 > Some(1)), "pages past the first");
        } else {
            assert!(stored
                .iter()
                .all(|r| r.3.as_ref().is_some_and(|f| f["facet_type"].is_string())));
        }
    }
    app.cleanup().await
}
