//! [`TestApp`]: one in-process worker with its own database, topology
//! prefix and source root; publishing to it, reading its events, and
//! cleaning up after it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use lapin::options::{
    BasicGetOptions, BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions,
    QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::publisher_confirm::Confirmation;
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel, Connection};
use serde_json::Value;
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use worker::amqp::topology::Topology;
use worker::config::Settings;
use worker::context::Context;
use worker::startup::Application;

use crate::messages::Received;
use crate::places::{config_dir, random_suffix};
use crate::polling::{eventually, DEADLINE};
use crate::servers::{amqp_connect, drop_database, AMQP_ADDR, AMQP_URL, PG_ADDR, PG_SERVER};

/// One in-process worker with its own database, prefix and source root.
#[derive(Debug)]
pub struct TestApp {
    /// The test's database.
    pub db_name: String,
    /// A pool on it (not through any proxy).
    pub pool: PgPool,
    /// The topology names.
    pub topology: Topology,
    /// The directory `file://` URIs may point into.
    pub source_root: PathBuf,
    /// The worker's settings.
    pub settings: Settings,
    /// The worker's shared state.
    pub ctx: Arc<Context>,
    /// Where `/healthz` etc. are served.
    pub http_addr: std::net::SocketAddr,
    /// The test's own broker connection.
    pub amqp: Connection,
    /// A confirm-mode channel on it.
    pub channel: Channel,
    /// Queue bound to `<prefix>ingest.events` with `chunking.#`: captures every
    /// event the worker publishes.
    pub events_queue: String,
    shutdown: CancellationToken,
    handle: Option<JoinHandle<anyhow::Result<()>>>,
    pending: Option<Application>,
    cleaned: bool,
}

/// Options of [`TestApp::spawn_with`].
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Extra `CHUNK_WORKER__...` variables (override the harness defaults).
    pub vars: Vec<(String, String)>,
    /// Route the worker's Postgres connections through this address.
    pub pg_addr: Option<String>,
    /// Route the worker's AMQP connections through this address.
    pub amqp_addr: Option<String>,
    /// Build the worker but do not start it; call [`TestApp::start`].
    pub defer_start: bool,
    /// The worker's database role (default `postgres`, a superuser).
    pub pg_user: Option<String>,
    /// A chunking engine to use instead of the one the settings build (a
    /// test's own strategies).
    pub engine: Option<Arc<shared::Engine>>,
    /// A database made (and migrated) beforehand, instead of a new one; it
    /// is dropped by [`TestApp::cleanup`] all the same.
    pub database: Option<String>,
}

impl TestApp {
    /// A worker with the harness defaults.
    pub async fn spawn() -> anyhow::Result<Self> {
        Self::spawn_with(Options::default()).await
    }

    /// A worker with `options`.
    pub async fn spawn_with(options: Options) -> anyhow::Result<Self> {
        let suffix = random_suffix();
        let db_name = options
            .database
            .clone()
            .unwrap_or_else(|| format!("cw_test_{suffix}"));
        let prefix = format!("t{suffix}.");
        let source_root = std::env::temp_dir().join(format!("cw_src_{suffix}"));
        std::fs::create_dir_all(&source_root)?;
        let pg_addr = options
            .pg_addr
            .clone()
            .unwrap_or_else(|| PG_ADDR.to_owned());
        let amqp_addr = options
            .amqp_addr
            .clone()
            .unwrap_or_else(|| AMQP_ADDR.to_owned());
        let mut vars: HashMap<String, String> = [
            (
                "DATABASE__URL",
                format!(
                    "postgres://{}@{pg_addr}/{db_name}",
                    options.pg_user.as_deref().unwrap_or("postgres")
                ),
            ),
            ("DATABASE__ACQUIRE_TIMEOUT_MS", "2000".to_owned()),
            ("AMQP__URL", format!("amqp://guest:guest@{amqp_addr}/%2f")),
            ("AMQP__RETRY_DELAY_MS", "1000".to_owned()),
            ("TOPOLOGY__PREFIX", prefix.clone()),
            ("HTTP__ADDR", "127.0.0.1:0".to_owned()),
            ("SOURCE__ROOT", source_root.display().to_string()),
            ("WORKER__RETRY_MIN_DELAY_MS", "50".to_owned()),
            ("WORKER__RETRY_MAX_DELAY_MS", "500".to_owned()),
            ("WORKER__SOURCE_RETRY_MS", "300".to_owned()),
            ("OUTBOX__POLL_INTERVAL_MS", "200".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (format!("CHUNK_WORKER__{k}"), v))
        .collect();
        for (k, v) in options.vars {
            vars.insert(format!("CHUNK_WORKER__{k}"), v);
        }
        let mut settings = Settings::load(&config_dir(), None, vars)?;
        if let Some(engine) = options.engine.clone() {
            settings.chunking.engine = engine;
        }
        let topology = Topology::new(prefix.clone());

        // Declare the topology and the event capture queue before the worker
        // starts, so no event can be published before it is bound.
        let amqp = amqp_connect(AMQP_URL).await?;
        let channel = amqp.create_channel().await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        topology
            .declare(
                &channel,
                settings.amqp.delivery_limit,
                settings.amqp.retry_delay,
            )
            .await?;
        let events_queue = topology.name("test.events");
        channel
            .queue_declare(
                &events_queue,
                QueueDeclareOptions {
                    exclusive: true,
                    auto_delete: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        channel
            .queue_bind(
                &events_queue,
                &topology.events_exchange(),
                "chunking.#",
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;

        let app = Application::build(settings.clone())
            .await
            .context("building the worker")?;
        let ctx = app.context();
        let http_addr = app.http_addr();
        let shutdown = CancellationToken::new();
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect(&format!("{PG_SERVER}/{db_name}"))
            .await?;
        let mut test = Self {
            db_name,
            pool,
            topology,
            source_root,
            settings,
            ctx,
            http_addr,
            amqp,
            channel,
            events_queue,
            shutdown,
            handle: None,
            pending: Some(app),
            cleaned: false,
        };
        if !options.defer_start {
            test.start().await?;
        }
        Ok(test)
    }

    /// Starts the worker built by [`TestApp::spawn_with`] and waits until it
    /// is ready.
    pub async fn start(&mut self) -> anyhow::Result<()> {
        if let Some(app) = self.pending.take() {
            self.handle = Some(tokio::spawn(app.run_until_stopped(self.shutdown.clone())));
        }
        self.wait_ready().await
    }

    /// Starts a second worker on the same database, topology and source
    /// root (a competing consumer, as a second replica would be).
    pub async fn spawn_sibling(&self) -> anyhow::Result<Sibling> {
        let mut settings = self.settings.clone();
        settings.http_addr = "127.0.0.1:0".parse()?;
        let app = Application::build(settings).await?;
        let ctx = app.context();
        let shutdown = CancellationToken::new();
        let handle = tokio::spawn(app.run_until_stopped(shutdown.clone()));
        eventually("the sibling to be ready", DEADLINE, || {
            let ctx = ctx.clone();
            async move { Ok(worker::ops::http::is_ready(&ctx).await.ok()) }
        })
        .await?;
        Ok(Sibling {
            ctx,
            shutdown,
            handle,
        })
    }

    /// Waits until `/readyz` would answer 200.
    pub async fn wait_ready(&self) -> anyhow::Result<()> {
        let ctx = self.ctx.clone();
        eventually("the worker to be ready", DEADLINE, || {
            let ctx = ctx.clone();
            async move { Ok(worker::ops::http::is_ready(&ctx).await.ok()) }
        })
        .await
    }

    /// Publishes raw bytes to `<prefix>ingest.events` as upstream does.
    pub async fn publish_raw(&self, body: &[u8]) -> anyhow::Result<()> {
        self.publish_with(body, BasicProperties::default()).await
    }

    /// Publishes raw bytes with extra properties.
    pub async fn publish_with(&self, body: &[u8], props: BasicProperties) -> anyhow::Result<()> {
        let props = props
            .with_content_type("application/json".into())
            .with_delivery_mode(2);
        let confirm = self
            .channel
            .basic_publish(
                &self.topology.events_exchange(),
                "normalize_markdown.completed",
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                body,
                props,
            )
            .await?
            .await?;
        if confirm != Confirmation::Ack(None) {
            bail!("publish not confirmed: {confirm:?}");
        }
        Ok(())
    }

    /// Publishes a JSON message.
    pub async fn publish_json(&self, msg: &Value) -> anyhow::Result<()> {
        let props = match msg.get("event_id").and_then(Value::as_str) {
            Some(id) => BasicProperties::default().with_message_id(id.into()),
            None => BasicProperties::default(),
        };
        self.publish_with(msg.to_string().as_bytes(), props).await
    }

    /// Takes one message from `queue`, if any.
    pub async fn get(&self, queue: &str) -> anyhow::Result<Option<Received>> {
        let got = self
            .channel
            .basic_get(queue, BasicGetOptions { no_ack: true })
            .await?;
        Ok(got.map(|m| Received {
            routing_key: m.delivery.routing_key.as_str().to_owned(),
            body: m.delivery.data,
            properties: m.delivery.properties,
        }))
    }

    /// Waits for the next message on `queue`.
    pub async fn next(&self, queue: &str, deadline: Duration) -> anyhow::Result<Received> {
        eventually(&format!("a message on {queue}"), deadline, || {
            self.get(queue)
        })
        .await
    }

    /// Waits for the next event (`chunking.completed` / `chunking.failed`).
    pub async fn next_event(&self) -> anyhow::Result<Received> {
        self.next(&self.events_queue, DEADLINE).await
    }

    /// Collects events until `n` have arrived.
    pub async fn events(&self, n: usize) -> anyhow::Result<Vec<Received>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            out.push(self.next_event().await?);
        }
        Ok(out)
    }

    /// Waits until no outbox row is pending: the relay marks a row published
    /// after the broker's confirm, up to 100 ms after its event went out.
    pub async fn outbox_marked(&self) -> anyhow::Result<()> {
        eventually("every outbox row to be marked published", DEADLINE, || {
            let pool = self.pool.clone();
            async move {
                let pending: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM outbox WHERE published_at IS NULL")
                        .fetch_one(&pool)
                        .await?;
                Ok((pending == 0).then_some(()))
            }
        })
        .await
    }

    /// Waits for the next dead-lettered message.
    pub async fn next_dead_letter(&self) -> anyhow::Result<Received> {
        self.next(&self.topology.failed_queue(), DEADLINE).await
    }

    /// Number of `source_versions` rows of a document.
    pub async fn version_count(&self, document: &str) -> anyhow::Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT count(*) FROM source_versions WHERE document_id = $1")
                .bind(document)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    /// The current version of a document.
    pub async fn current_version(&self, document: &str) -> anyhow::Result<Option<String>> {
        Ok(sqlx::query_scalar(
            "SELECT current_source_version_id FROM documents WHERE document_id = $1",
        )
        .bind(document)
        .fetch_optional(&self.pool)
        .await?
        .flatten())
    }

    /// Waits until the version is stored.
    pub async fn wait_stored(&self, document: &str, version: &str) -> anyhow::Result<()> {
        let pool = self.pool.clone();
        eventually(&format!("{document}@{version} to be stored"), DEADLINE, || {
            let pool = pool.clone();
            async move {
                let found: Option<i32> = sqlx::query_scalar(
                    "SELECT 1 FROM source_versions WHERE document_id = $1 AND source_version_id = $2",
                )
                .bind(document)
                .bind(version)
                .fetch_optional(&pool)
                .await?;
                Ok(found.map(|_| ()))
            }
        })
        .await
    }

    /// Writes a file under the source root and returns its `file://` URI.
    pub fn write_source(&self, name: &str, bytes: &[u8]) -> anyhow::Result<String> {
        let path = self.source_root.join(name);
        std::fs::write(&path, bytes)?;
        Ok(format!("file://{}", path.display()))
    }

    /// Stops the worker (as SIGTERM would) and returns its result.
    pub async fn stop_worker(&mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        match self.handle.take() {
            Some(h) => h.await.context("worker task panicked")?,
            None => Ok(()),
        }
    }

    /// Stops the worker and removes the database, queues, exchanges and
    /// source directory (best effort).
    pub async fn cleanup(mut self) -> anyhow::Result<()> {
        self.cleaned = true;
        let stopped = self.stop_worker().await;
        for q in [
            self.topology.requests_queue(),
            self.topology.failed_queue(),
            self.topology.retry_queue(),
            self.events_queue.clone(),
        ] {
            let _ = self
                .channel
                .queue_delete(&q, QueueDeleteOptions::default())
                .await;
        }
        for x in [
            self.topology.events_exchange(),
            self.topology.dead_letter_exchange(),
        ] {
            let _ = self
                .channel
                .exchange_delete(&x, ExchangeDeleteOptions::default())
                .await;
        }
        let _ = self.amqp.close(200, "test done").await;
        self.pool.close().await;
        drop_database(&self.db_name).await;
        let _ = std::fs::remove_dir_all(&self.source_root);
        stopped
    }
}

/// A second worker started by [`TestApp::spawn_sibling`].
#[derive(Debug)]
pub struct Sibling {
    /// Its shared state.
    pub ctx: Arc<Context>,
    shutdown: CancellationToken,
    handle: JoinHandle<anyhow::Result<()>>,
}

impl Sibling {
    /// Stops it gracefully.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.handle.await.context("sibling task panicked")?
    }
}

impl Drop for TestApp {
    /// A test that failed before [`TestApp::cleanup`] still removes its
    /// database and queues from the shared servers (on a thread of its own:
    /// this may run inside the test's runtime while it unwinds).
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        self.shutdown.cancel();
        let db = self.db_name.clone();
        let topology = self.topology.clone();
        let root = self.source_root.clone();
        let cleanup = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                if let Ok(conn) = amqp_connect(AMQP_URL).await {
                    if let Ok(ch) = conn.create_channel().await {
                        for q in [
                            topology.requests_queue(),
                            topology.failed_queue(),
                            topology.retry_queue(),
                        ] {
                            let _ = ch.queue_delete(&q, QueueDeleteOptions::default()).await;
                        }
                        for x in [topology.events_exchange(), topology.dead_letter_exchange()] {
                            let _ = ch
                                .exchange_delete(&x, ExchangeDeleteOptions::default())
                                .await;
                        }
                    }
                    let _ = conn.close(200, "test cleanup").await;
                }
                drop_database(&db).await;
            });
            let _ = std::fs::remove_dir_all(&root);
        });
        let _ = cleanup.join();
    }
}
