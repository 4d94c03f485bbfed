//! A worker started inside this process, with a stand-in downstream
//! consumer: the shared plumbing of `chunk-worker demo` and `bench`.

use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use lapin::options::{BasicConsumeOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::{Connection, Consumer};
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::startup::Application;

/// How long start-up may take before the worker is declared not ready.
const READY_DEADLINE: Duration = Duration::from_secs(60);

/// A running in-process worker.
#[derive(Debug)]
pub struct InProcessWorker {
    stop: CancellationToken,
    handle: JoinHandle<anyhow::Result<()>>,
    /// The worker's database pool.
    pub pool: PgPool,
}

impl InProcessWorker {
    /// Builds and starts the worker under `settings`, with `default_prefix`
    /// as the topology prefix unless one is configured and an ephemeral
    /// HTTP port (a worker already serving the default port is left alone),
    /// and waits until it is ready. Returns the settings in effect.
    pub async fn start(
        mut settings: Settings,
        default_prefix: &str,
    ) -> anyhow::Result<(Self, Settings)> {
        if settings.topology_prefix.is_empty() {
            settings.topology_prefix = default_prefix.into();
        }
        settings.http_addr.set_port(0);
        let app = Application::build(settings.clone()).await?;
        let pool = app.pool();
        let ctx = app.context();
        let stop = CancellationToken::new();
        let handle = tokio::spawn(app.run_until_stopped(stop.clone()));
        let started = Instant::now();
        while crate::ops::http::is_ready(&ctx).await.is_err() {
            if started.elapsed() > READY_DEADLINE {
                stop.cancel();
                bail!("the worker did not become ready within {READY_DEADLINE:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok((Self { stop, handle, pool }, settings))
    }

    /// Stops the worker gracefully and waits for it.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.stop.cancel();
        self.handle.await.context("joining the worker task")?
    }
}

/// Stands in for the downstream consumer: an exclusive queue bound to
/// `exchange` for `keys`, consumed without acks.
pub async fn event_consumer(
    connection: &Connection,
    exchange: &str,
    keys: &[&str],
    tag: &str,
) -> lapin::Result<Consumer> {
    let channel = connection.create_channel().await?;
    let queue = channel
        .queue_declare(
            "",
            QueueDeclareOptions {
                exclusive: true,
                auto_delete: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await?;
    for key in keys {
        channel
            .queue_bind(
                queue.name().as_str(),
                exchange,
                key,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;
    }
    channel
        .basic_consume(
            queue.name().as_str(),
            tag,
            BasicConsumeOptions {
                no_ack: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
}
