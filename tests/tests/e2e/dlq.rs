//! `chunk-worker dlq list|show|replay` against the real broker and database:
//! failures of several kinds are listed and filtered, `show` finds one by id,
//! a dry run changes nothing, and a replay of a fixed cause stores the
//! document while a still-broken message comes back to the dead-letter queue.

use std::collections::BTreeSet;

use lapin::options::QueueDeclareOptions;
use lapin::types::{AMQPValue, FieldTable};
use lapin::BasicProperties;
use serde_json::{json, Value};
use tests::{eventually, message, TestApp, DEADLINE};
use worker::commands::dlq::{self, Filters, ReplayOptions};

type R = anyhow::Result<()>;

/// Upstream's trace context on the d-nofile message.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn with_uri(mut msg: Value, uri: &str) -> Value {
    if let Some(obj) = msg.as_object_mut() {
        obj.remove("markdown");
        obj.insert("markdown_uri".into(), json!(uri));
        obj.insert("source_type".into(), json!("file"));
    }
    msg
}

fn missing_file(app: &TestApp, name: &str) -> String {
    format!("file://{}/{name}", app.source_root.display())
}

/// Ready messages in the dead-letter queue.
async fn dlq_depth(app: &TestApp) -> anyhow::Result<u32> {
    let q = app
        .channel
        .queue_declare(
            &app.topology.failed_queue(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(q.message_count())
}

async fn wait_depth(app: &TestApp, n: u32) -> R {
    eventually(&format!("{n} dead-lettered messages"), DEADLINE, || async {
        Ok((dlq_depth(app).await? == n).then_some(()))
    })
    .await
}

fn filters(code: Option<&str>, tenant: Option<&str>, document: Option<&str>) -> Filters {
    Filters {
        error_code: code.map(str::to_owned),
        tenant: tenant.map(str::to_owned),
        document: document.map(str::to_owned),
    }
}

/// Dead-letters five messages of four kinds; returns the event id of the
/// UNKNOWN_PROFILE one.
async fn fail_five(app: &TestApp) -> anyhow::Result<String> {
    app.publish_raw(b"this is not json {").await?;
    let mut profile = message("acme-prod", "d-profile", "v1", "# Hi\n\nText.\n");
    profile["profile"] = json!("no-such-profile");
    app.publish_json(&profile).await?;
    let nofile = with_uri(
        message("acme-prod", "d-nofile", "v1", ""),
        &missing_file(app, "later.md"),
    );
    let traced = BasicProperties::default()
        .with_message_id(nofile["event_id"].as_str().unwrap_or_default().into())
        .with_headers(tests::headers(&[(
            "traceparent",
            AMQPValue::LongString(TRACEPARENT.into()),
        )]));
    app.publish_with(nofile.to_string().as_bytes(), traced)
        .await?;
    let nofile2 = with_uri(
        message("beta-corp", "d-nofile2", "v1", ""),
        &missing_file(app, "never.md"),
    );
    app.publish_json(&nofile2).await?;
    let mut raw = message("acme-prod", "d-utf8", "v1", "# Hello\n\nWorld.\n")
        .to_string()
        .into_bytes();
    if let Some(at) = raw.windows(6).position(|w| w == b"World.") {
        raw[at + 1] = 0xff;
    }
    app.publish_raw(&raw).await?;
    wait_depth(app, 5).await?;
    Ok(profile["event_id"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_listed_filtered_and_shown_and_a_dry_run_changes_nothing() -> R {
    let app = TestApp::spawn().await?;
    let profile_id = fail_five(&app).await?;

    let all = dlq::list(&app.settings, &Filters::default(), 100).await?;
    assert_eq!(all.len(), 5);
    let codes: BTreeSet<_> = all.iter().filter_map(|l| l.error_code.clone()).collect();
    assert_eq!(
        codes.into_iter().collect::<Vec<_>>(),
        [
            "INVALID_MESSAGE",
            "INVALID_UTF8",
            "SOURCE_UNAVAILABLE",
            "UNKNOWN_PROFILE"
        ]
    );
    for l in &all {
        assert!(l.attempts.is_some(), "{l:?}");
        assert!(
            l.first_failed_at.is_some() && l.failed_at.is_some(),
            "{l:?}"
        );
        assert!(!l.error_detail.clone().unwrap_or_default().is_empty());
    }
    // Listing removed nothing.
    wait_depth(&app, 5).await?;

    let unavailable = dlq::list(
        &app.settings,
        &filters(Some("SOURCE_UNAVAILABLE"), None, None),
        100,
    )
    .await?;
    let docs: BTreeSet<_> = unavailable
        .iter()
        .filter_map(|l| l.document_id.clone())
        .collect();
    assert_eq!(
        docs.into_iter().collect::<Vec<_>>(),
        ["d-nofile", "d-nofile2"]
    );

    let beta = dlq::list(
        &app.settings,
        &filters(Some("SOURCE_UNAVAILABLE"), Some("beta-corp"), None),
        100,
    )
    .await?;
    assert_eq!(beta.len(), 1);
    assert_eq!(beta[0].document_id.as_deref(), Some("d-nofile2"));
    assert_eq!(beta[0].source_version_id.as_deref(), Some("v1"));

    let by_doc = dlq::list(&app.settings, &filters(None, None, Some("d-profile")), 100).await?;
    assert_eq!(by_doc.len(), 1);
    assert_eq!(by_doc[0].error_code.as_deref(), Some("UNKNOWN_PROFILE"));
    assert_eq!(by_doc[0].id, profile_id);

    let none = dlq::list(&app.settings, &filters(None, Some("gamma-inc"), None), 100).await?;
    assert!(none.is_empty());
    let limited = dlq::list(&app.settings, &Filters::default(), 2).await?;
    assert_eq!(limited.len(), 2);

    let mut table = Vec::new();
    dlq::write_table(&mut table, &all)?;
    let table = String::from_utf8(table)?;
    assert!(table.contains("UNKNOWN_PROFILE") && table.contains("5 message(s)"));

    let shown = dlq::show(&app.settings, &profile_id).await?;
    let shown = shown.ok_or_else(|| anyhow::anyhow!("show found nothing"))?;
    let body: Value = serde_json::from_slice(&shown.body)?;
    assert_eq!(body["document_id"], "d-profile");
    assert_eq!(shown.headers["x-error-code"], "UNKNOWN_PROFILE");
    let mut text = Vec::new();
    dlq::write_letter(&mut text, &shown, false)?;
    let text = String::from_utf8(text)?;
    assert!(text.contains("x-error-detail") && text.contains("no-such-profile"));
    assert!(dlq::show(&app.settings, "no-such-id").await?.is_none());

    // A dry run reports the matches and changes nothing.
    let dry = dlq::replay(
        &app.settings,
        &ReplayOptions {
            filters: filters(Some("SOURCE_UNAVAILABLE"), None, None),
            dry_run: true,
            rate: 0.0,
            operator: "tester".into(),
            ..ReplayOptions::default()
        },
    )
    .await?;
    assert_eq!((dry.matched, dry.replayed, dry.skipped), (2, 0, 3));
    wait_depth(&app, 5).await?;
    assert_eq!(
        dlq::list(&app.settings, &Filters::default(), 100)
            .await?
            .len(),
        5
    );
    let replays: i64 = sqlx::query_scalar("SELECT count(*) FROM dlq_replays")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(replays, 0, "a dry run records nothing");
    assert_eq!(app.version_count("d-nofile").await?, 0);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_a_fixed_cause_stores_the_document_and_a_broken_one_comes_back() -> R {
    let app = TestApp::spawn().await?;
    fail_five(&app).await?;
    let first_failed: Option<String> =
        dlq::list(&app.settings, &filters(None, None, Some("d-nofile2")), 1)
            .await?
            .first()
            .and_then(|l| l.first_failed_at.clone());

    // The file d-nofile pointed at now exists.
    app.write_source("later.md", b"# Later\n\nThe file arrived after all.\n")?;
    let summary = dlq::replay(
        &app.settings,
        &ReplayOptions {
            filters: filters(Some("SOURCE_UNAVAILABLE"), Some("acme-prod"), None),
            rate: 100.0,
            operator: "tester".into(),
            ..ReplayOptions::default()
        },
    )
    .await?;
    assert_eq!(
        (summary.matched, summary.replayed, summary.failed),
        (1, 1, 0)
    );
    app.wait_stored("d-nofile", "v1").await?;
    // The replayed message kept upstream's trace: the completed event
    // continues it (same trace id).
    let completed = loop {
        let ev = app.next_event().await?;
        if ev.routing_key == "chunking.completed" {
            break ev;
        }
    };
    assert_eq!(completed.json()?["document_id"], "d-nofile");
    let tp = completed.header("traceparent").unwrap_or_default();
    assert_eq!(tp.get(..36), TRACEPARENT.get(..36), "same trace id: {tp}");
    let row: (String, Option<time::OffsetDateTime>, i32, i32, Value) =
        sqlx::query_as("SELECT operator, finished_at, matched, replayed, filters FROM dlq_replays")
            .fetch_one(&app.pool)
            .await?;
    assert_eq!(row.0, "tester");
    assert!(row.1.is_some());
    assert_eq!((row.2, row.3), (1, 1));
    assert_eq!(row.4["filters"]["error_code"], "SOURCE_UNAVAILABLE");
    wait_depth(&app, 4).await?;

    // Still broken: replayed, fails again, back in the dead-letter queue
    // with its first failure time kept.
    let again = dlq::replay(
        &app.settings,
        &ReplayOptions {
            filters: filters(None, Some("beta-corp"), None),
            rate: 0.0,
            operator: "tester".into(),
            ..ReplayOptions::default()
        },
    )
    .await?;
    assert_eq!(again.replayed, 1);
    let back = eventually(
        "d-nofile2 back in the dead-letter queue",
        DEADLINE,
        || async {
            let found =
                dlq::list(&app.settings, &filters(None, None, Some("d-nofile2")), 1).await?;
            Ok(found.into_iter().next())
        },
    )
    .await?;
    assert_eq!(back.error_code.as_deref(), Some("SOURCE_UNAVAILABLE"));
    assert_eq!(back.first_failed_at, first_failed);
    assert_eq!(app.version_count("d-nofile2").await?, 0);
    wait_depth(&app, 4).await?;
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_mail_addresses_and_tokens_are_scrubbed_from_error_details() -> R {
    let app = TestApp::spawn().await?;
    // A JWT whose signature part is short, inside a file name.
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqYW5lIn0.sig";
    let msg = with_uri(
        message("acme-prod", "d-pii", "v1", ""),
        &missing_file(&app, &format!("jane.doe@example.com+{jwt}.md")),
    );
    app.publish_json(&msg).await?;
    let dl = app.next_dead_letter().await?;
    let header = dl.header("x-error-detail").unwrap_or_default();
    let row: String = sqlx::query_scalar(
        "SELECT error_detail FROM chunking_failures WHERE document_id = 'd-pii'",
    )
    .fetch_one(&app.pool)
    .await?;
    let event = eventually("the chunking.failed event", tests::DEADLINE, || async {
        let e = app.next_event().await?;
        Ok((e.routing_key == "chunking.failed").then_some(e))
    })
    .await?;
    let event_detail = event.json()?["error_detail"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for detail in [&header, &row, &event_detail] {
        assert!(!detail.contains("jane.doe@"), "{detail}");
        assert!(detail.contains("<email>"), "{detail}");
        assert!(!detail.contains("eyJzdWIi"), "{detail}");
        assert!(detail.contains("<jwt>"), "{detail}");
    }
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_copies_are_each_listed_and_replayed() -> R {
    let app = TestApp::spawn().await?;
    app.publish_raw(b"same broken bytes").await?;
    app.publish_raw(b"same broken bytes").await?;
    wait_depth(&app, 2).await?;
    let listed = dlq::list(&app.settings, &Filters::default(), 100).await?;
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].id, listed[1].id, "ids come from the body hash");
    assert!(listed[0].id.starts_with("sha256:"));
    // Replayed, both fail again and come back; the run does not loop on them.
    let summary = dlq::replay(
        &app.settings,
        &ReplayOptions {
            filters: filters(Some("INVALID_MESSAGE"), None, None),
            rate: 0.0,
            operator: "tester".into(),
            ..ReplayOptions::default()
        },
    )
    .await?;
    assert_eq!((summary.matched, summary.replayed), (2, 2), "{summary:?}");
    wait_depth(&app, 2).await?;
    app.cleanup().await
}
