//! `chunk-worker dlq replay` as a process, killed with SIGKILL midway: every
//! message is afterwards either stored or still in the dead-letter queue, and
//! a second replay finishes the job. Needs the real RabbitMQ (127.0.0.1:5672,
//! guest/guest) and Postgres (127.0.0.1:5432, user postgres).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::publisher_confirm::Confirmation;
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel};
use serde_json::json;
use sqlx::{Connection as _, PgConnection, PgPool};
use tokio_util::sync::CancellationToken;
use worker::amqp::topology::Topology;
use worker::commands::dlq::{self, Filters};
use worker::config::Settings;
use worker::startup::Application;

const AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const PG_SERVER: &str = "postgres://postgres@127.0.0.1:5432";
const MESSAGES: usize = 30;
const DEADLINE: Duration = Duration::from_secs(60);

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

async fn poll<T, F, Fut>(what: &str, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
{
    let end = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f().await? {
            return Ok(v);
        }
        if Instant::now() > end {
            bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn dlq_depth(channel: &Channel, topology: &Topology) -> anyhow::Result<u32> {
    let q = channel
        .queue_declare(
            &topology.failed_queue(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(q.message_count())
}

async fn stored_docs(pool: &PgPool) -> anyhow::Result<BTreeSet<String>> {
    let docs: Vec<String> = sqlx::query_scalar("SELECT document_id FROM source_versions")
        .fetch_all(pool)
        .await?;
    Ok(docs.into_iter().collect())
}

fn replay_command(vars: &HashMap<String, String>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chunk-worker"));
    cmd.args(["dlq", "replay", "--error-code", "SOURCE_UNAVAILABLE"])
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("USER", "kill-test")
        .envs(vars)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn cli(vars: &HashMap<String, String>, args: &[&str]) -> anyhow::Result<std::process::Output> {
    Ok(Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(args)
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .envs(vars)
        .stdin(Stdio::null())
        .output()?)
}

struct Fixture {
    db_name: String,
    topology: Topology,
    source_root: PathBuf,
}

impl Fixture {
    async fn cleanup(&self, channel: &Channel) {
        for q in [
            self.topology.requests_queue(),
            self.topology.failed_queue(),
            self.topology.retry_queue(),
        ] {
            let _ = channel
                .queue_delete(&q, QueueDeleteOptions::default())
                .await;
        }
        for x in [
            self.topology.events_exchange(),
            self.topology.dead_letter_exchange(),
        ] {
            let _ = channel
                .exchange_delete(&x, ExchangeDeleteOptions::default())
                .await;
        }
        if let Ok(mut conn) = PgConnection::connect(&format!("{PG_SERVER}/postgres")).await {
            let _ = sqlx::query(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.db_name
            ))
            .execute(&mut conn)
            .await;
            let _ = conn.close().await;
        }
        let _ = std::fs::remove_dir_all(&self.source_root);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_killed_midway_loses_nothing_and_a_second_run_finishes() -> anyhow::Result<()> {
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let fixture = Fixture {
        db_name: format!("cw_dlqp_{suffix}"),
        topology: Topology::new(format!("k{suffix}.")),
        source_root: std::env::temp_dir().join(format!("cw_dlqp_src_{suffix}")),
    };
    std::fs::create_dir_all(&fixture.source_root)?;
    let defaults = Settings::load(&config_dir(), None, Default::default())?;
    let conn = worker::amqp::connect(&defaults.amqp, "dlq kill test").await?;
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    let result = run(&fixture, &channel).await;
    fixture.cleanup(&channel).await;
    let _ = conn.close(200, "test done").await;
    result
}

async fn run(fixture: &Fixture, channel: &Channel) -> anyhow::Result<()> {
    let topology = &fixture.topology;
    let vars: HashMap<String, String> = [
        ("DATABASE__URL", format!("{PG_SERVER}/{}", fixture.db_name)),
        ("AMQP__URL", AMQP_URL.to_owned()),
        ("TOPOLOGY__PREFIX", topology.prefix().to_owned()),
        ("HTTP__ADDR", "127.0.0.1:0".to_owned()),
        ("SOURCE__ROOT", fixture.source_root.display().to_string()),
        ("WORKER__SOURCE_RETRY_MS", "200".to_owned()),
        ("WORKER__RETRY_MIN_DELAY_MS", "50".to_owned()),
        ("OUTBOX__POLL_INTERVAL_MS", "200".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("CHUNK_WORKER__{k}"), v))
    .collect();
    let settings = Settings::load(&config_dir(), None, vars.clone())?;
    topology
        .declare(
            channel,
            settings.amqp.delivery_limit,
            settings.amqp.retry_delay,
        )
        .await?;
    let app = Application::build(settings.clone()).await?;
    let pool = app.pool();
    let ctx = app.context();
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(app.run_until_stopped(shutdown.clone()));
    poll("the worker to be ready", || {
        let ctx = ctx.clone();
        async move { Ok(worker::ops::http::is_ready(&ctx).await.ok()) }
    })
    .await?;

    // Every message points at a file that is not there yet.
    let mut all = BTreeSet::new();
    for i in 0..MESSAGES {
        let doc = format!("doc-{i:02}");
        let path = fixture.source_root.join(format!("{doc}.md"));
        let body = json!({
            "schema": "normalize_markdown.completed/v1",
            "event_id": uuid::Uuid::new_v4().to_string(),
            "tenant_id": "acme-prod",
            "document_id": doc,
            "source_version_id": "v1",
            "source_type": "file",
            "markdown_uri": format!("file://{}", path.display()),
            "metadata": {"title": "Kill test"},
            "correlation_id": format!("corr-{doc}"),
            "occurred_at": "2026-11-20T10:00:01Z"
        });
        let confirm = channel
            .basic_publish(
                &topology.events_exchange(),
                "normalize_markdown.completed",
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                body.to_string().as_bytes(),
                BasicProperties::default()
                    .with_content_type("application/json".into())
                    .with_delivery_mode(2),
            )
            .await?
            .await?;
        if confirm != Confirmation::Ack(None) {
            bail!("publish not confirmed: {confirm:?}");
        }
        all.insert(doc);
    }
    poll("every message dead-lettered", || async {
        Ok((dlq_depth(channel, topology).await? == MESSAGES as u32).then_some(()))
    })
    .await?;

    // The cause is fixed: the files exist now.
    for doc in &all {
        std::fs::write(
            fixture.source_root.join(format!("{doc}.md")),
            format!("# {doc}\n\nThe file arrived late.\n"),
        )
        .context("writing a source file")?;
    }

    // A slow replay, killed with SIGKILL once a few documents are stored.
    let mut child = replay_command(&vars).args(["--rate", "6"]).spawn()?;
    let stored_before_kill = poll("a few replayed documents stored", || async {
        let n = stored_docs(&pool).await?.len();
        Ok((n >= 3).then_some(n))
    })
    .await;
    child.kill().context("SIGKILL to the replay")?;
    let status = child.wait()?;
    let stored_before_kill = stored_before_kill?;
    assert!(
        stored_before_kill < MESSAGES,
        "the replay finished before it could be killed"
    );
    assert!(!status.success(), "killed, not exited: {status:?}");
    let unfinished: i64 =
        sqlx::query_scalar("SELECT count(*) FROM dlq_replays WHERE finished_at IS NULL")
            .fetch_one(&pool)
            .await?;
    assert_eq!(unfinished, 1, "the killed replay left its row unfinished");

    // Once what was republished is processed, every document is stored or
    // still dead-lettered: none is lost.
    poll("every message stored or dead-lettered", || async {
        let stored = stored_docs(&pool).await?;
        let letters = dlq::list(&settings, &Filters::default(), 1000).await?;
        let dead: BTreeSet<String> = letters.into_iter().filter_map(|l| l.document_id).collect();
        let covered: BTreeSet<String> = stored.union(&dead).cloned().collect();
        Ok((covered == all).then_some(()))
    })
    .await?;

    // A second replay finishes the job.
    let output = replay_command(&vars).args(["--rate", "0"]).output()?;
    assert!(
        output.status.success(),
        "second replay: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(summary.contains("failed 0"), "{summary}");
    poll("every document stored", || async {
        Ok((stored_docs(&pool).await? == all).then_some(()))
    })
    .await?;
    poll("an empty dead-letter queue", || async {
        Ok((dlq_depth(channel, topology).await? == 0).then_some(()))
    })
    .await?;
    let versions: i64 = sqlx::query_scalar("SELECT count(*) FROM source_versions")
        .fetch_one(&pool)
        .await?;
    assert_eq!(versions, MESSAGES as i64, "duplicates stored once");

    // The other commands, as an operator runs them.
    let list = cli(&vars, &["dlq", "list", "--json"])?;
    assert!(list.status.success(), "{list:?}");
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout)?;
    assert_eq!(listed, json!([]));
    let table = cli(&vars, &["dlq", "list"])?;
    assert!(String::from_utf8_lossy(&table.stdout).contains("0 message(s)"));
    let missing = cli(&vars, &["dlq", "show", "no-such-message"])?;
    assert_eq!(missing.status.code(), Some(1));
    let usage = cli(&vars, &["dlq", "replay"])?;
    assert_eq!(
        usage.status.code(),
        Some(2),
        "replay needs a filter or --all"
    );

    shutdown.cancel();
    worker.await??;
    pool.close().await;
    Ok(())
}
