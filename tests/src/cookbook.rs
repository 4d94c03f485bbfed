//! The SQL cookbook of docs/sql.md and a database filled to answer it, shared by
//! the cookbook test and the tenant-isolation (row-level security) test.

use std::path::Path;

use serde_json::json;
use worker::commands::dlq::{self, Filters, ReplayOptions};

use crate::app::TestApp;
use crate::messages::{message, sample_markdown};
use crate::polling::{eventually, DEADLINE};

type R = anyhow::Result<()>;

/// `(question, sql)` of every ```sql block under `## SQL cookbook`.
pub fn cookbook() -> anyhow::Result<Vec<(String, String)>> {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/sql.md"))?;
    let mut out = Vec::new();
    let mut in_section = false;
    let mut in_sql = false;
    let mut question = String::new();
    let mut sql = String::new();
    for line in guide.lines() {
        if line.starts_with("## ") {
            in_section = line.trim() == "## SQL cookbook";
            continue;
        }
        if !in_section {
            continue;
        }
        if in_sql {
            if line.trim_start().starts_with("```") {
                in_sql = false;
                out.push((question.clone(), sql.trim().to_owned()));
                sql.clear();
            } else {
                sql.push_str(line);
                sql.push('\n');
            }
        } else if line.trim() == "```sql" {
            in_sql = true;
        } else if !line.trim().is_empty() {
            question = line.trim().to_owned();
        }
    }
    Ok(out)
}

fn with_uri(mut msg: serde_json::Value, uri: &str) -> serde_json::Value {
    if let Some(obj) = msg.as_object_mut() {
        obj.remove("markdown");
        obj.insert("markdown_uri".into(), json!(uri));
        obj.insert("source_type".into(), json!("file"));
    }
    msg
}

/// Fills the database through the worker: two tenants, a document with two
/// versions, failures of two kinds, one fixed and replayed.
pub async fn fill(app: &TestApp) -> R {
    app.publish_json(&message(
        "acme-prod",
        "runbook-1",
        "v1",
        &sample_markdown(1),
    ))
    .await?;
    app.wait_stored("runbook-1", "v1").await?;
    let mut v2 = message(
        "acme-prod",
        "runbook-1",
        "v2",
        &format!(
            "{}\n## Rollback\n\nRun `rollback --now`.\n",
            sample_markdown(1)
        ),
    );
    v2["occurred_at"] = json!("2026-11-20T11:00:00Z");
    app.publish_json(&v2).await?;
    app.wait_stored("runbook-1", "v2").await?;
    app.publish_json(&message(
        "acme-prod",
        "runbook-2",
        "v1",
        &sample_markdown(2),
    ))
    .await?;
    app.publish_json(&message("beta-corp", "other-1", "v1", &sample_markdown(3)))
        .await?;
    // A multi-granularity document (issue 10): its long sections give
    // windows that stay inside them.
    let mut handbook = message(
        "acme-prod",
        "handbook-1",
        "v1",
        &format!(
            "{}\n## Handover\n\n{}\n",
            sample_markdown(4),
            "Write the handover note before the shift ends and list the open incidents. "
                .repeat(12)
        ),
    );
    handbook["profile"] = json!("hierarchy-v1");
    app.publish_json(&handbook).await?;
    app.wait_stored("handbook-1", "v1").await?;
    app.wait_stored("runbook-2", "v1").await?;
    app.wait_stored("other-1", "v1").await?;

    app.publish_raw(b"not json at all").await?;
    let missing = format!("file://{}/missing.md", app.source_root.display());
    app.publish_json(&with_uri(
        message("acme-prod", "d-missing", "v1", ""),
        &missing,
    ))
    .await?;
    let late = format!("file://{}/late.md", app.source_root.display());
    app.publish_json(&with_uri(message("acme-prod", "d-late", "v1", ""), &late))
        .await?;
    eventually("three failures recorded", DEADLINE, || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM chunking_failures")
            .fetch_one(&app.pool)
            .await?;
        Ok((n == 3).then_some(()))
    })
    .await?;
    eventually("three dead letters", DEADLINE, || async {
        let n = dlq::list(&app.settings, &Filters::default(), 100)
            .await?
            .len();
        Ok((n == 3).then_some(()))
    })
    .await?;
    app.write_source("late.md", b"# Late\n\nArrived after all; setup done.\n")?;
    let replay = dlq::replay(
        &app.settings,
        &ReplayOptions {
            filters: Filters {
                document: Some("d-late".into()),
                ..Filters::default()
            },
            rate: 0.0,
            operator: "analyst-test".into(),
            ..ReplayOptions::default()
        },
    )
    .await?;
    assert_eq!(replay.replayed, 1);
    app.wait_stored("d-late", "v1").await?;
    Ok(())
}
