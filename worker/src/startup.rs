//! Building and running the worker: [`Application::build`] prepares the
//! database (create, migrate), the engine and the HTTP listener;
//! [`Application::run_until_stopped`] consumes until the shutdown token is
//! cancelled, then stops in order: stop consuming and settle in-flight
//! messages, flush the outbox, stop the HTTP endpoint.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use backon::{ExponentialBuilder, Retryable};
use sqlx::PgPool;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::amqp::topology::Topology;
use crate::config::Settings;
use crate::context::{Context, Health};
use crate::ops::metrics::Metrics;
use crate::store;

/// How long start-up waits for the database to appear (containers start in
/// any order).
const STARTUP_DB_WAIT: Duration = Duration::from_secs(60);

/// A worker ready to run.
#[derive(Debug)]
pub struct Application {
    ctx: Arc<Context>,
    listener: TcpListener,
    http_addr: SocketAddr,
    api: Option<Arc<crate::api::ApiState>>,
}

impl Application {
    /// Creates the database if needed, runs migrations, builds the engine and
    /// binds the HTTP endpoint (port 0 picks a free port).
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        prepare_database(&settings).await?;
        let pool = store::pool(&settings.database);
        let engine = Arc::clone(&settings.chunking.engine);
        let listener = TcpListener::bind(settings.http_addr)
            .await
            .with_context(|| format!("binding http.addr {}", settings.http_addr))?;
        let http_addr = listener
            .local_addr()
            .context("reading the bound http address")?;
        let metrics = Arc::new(Metrics::new(settings.telemetry.max_tenant_labels));
        metrics.prime(&engine);
        let health = Arc::new(Health::with_gauges(&metrics));
        let breakers = crate::api::breakers(&metrics);
        let api = crate::api::ApiState::new(&settings, Arc::clone(&metrics), Arc::clone(&breakers))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let first_versions = crate::store::versions::FirstVersions::new(
            settings.database.write_slots,
            settings.database.write_batch,
        );
        let ctx = Arc::new(Context {
            topology: Topology::new(settings.topology_prefix.clone()),
            first_versions,
            prechecks: crate::store::versions::Prechecks::new(),
            memory: crate::pipeline::memory::MemoryBudget::new(settings.worker.memory_budget),
            settings,
            pool,
            engine,
            health,
            metrics,
            outbox: crate::outbox::Committed::default(),
            breakers,
        });
        Ok(Self {
            ctx,
            listener,
            http_addr,
            api,
        })
    }

    /// The address `/healthz`, `/readyz` and `/metrics` are served on.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The database pool.
    pub fn pool(&self) -> PgPool {
        self.ctx.pool.clone()
    }

    /// The shared state (tests poll readiness through it).
    pub fn context(&self) -> Arc<Context> {
        self.ctx.clone()
    }

    /// Runs until `shutdown` is cancelled; returns after a graceful stop, or
    /// with the consumer's error when the broker's topology needs an
    /// operator (relay and HTTP stopped first).
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let ctx = self.ctx;
        let http_stop = CancellationToken::new();
        let relay_stop = CancellationToken::new();
        let http = tokio::spawn(crate::ops::http::serve(
            self.listener,
            ctx.clone(),
            crate::api::routes(self.api),
            http_stop.clone(),
        ));
        let relay = tokio::spawn(crate::outbox::run(ctx.clone(), relay_stop.clone()));

        let consumed = crate::pipeline::consumer::run(ctx.clone(), shutdown).await;

        // In-flight messages are settled: their events are in the outbox.
        relay_stop.cancel();
        if let Err(e) = relay.await {
            tracing::error!(error = %e, "outbox relay task failed");
        }
        http_stop.cancel();
        if let Err(e) = http.await {
            tracing::error!(error = %e, "http task failed");
        }
        ctx.pool.close().await;
        consumed?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// Creates the database (when allowed), runs the pending migrations (none:
/// nothing is run, so a worker whose role may not change the schema starts
/// on a migrated database), and makes sure the worker's role goes through
/// the service policy of row-level security; waits for the server with
/// backoff.
pub async fn prepare_database(settings: &Settings) -> anyhow::Result<()> {
    let db = &settings.database;
    let backoff = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(200))
        .with_max_delay(Duration::from_secs(5))
        .with_total_delay(Some(STARTUP_DB_WAIT))
        .without_max_times();
    if db.create_if_missing {
        (|| store::ensure_database(db))
            .retry(backoff)
            .when(store::is_transient)
            .notify(|e, d| tracing::warn!(error = %e, retry_in_ms = d.as_millis() as u64, "database not reachable yet"))
            .await
            .context("creating the database (database.url)")?;
    }
    let pool = store::pool(db);
    let prepared = async {
        let pending = (|| async { store::migrations::pending(&pool).await })
            .retry(backoff)
            .when(store::is_transient)
            .await
            .with_context(|| {
                format!(
                    "reading the applied migrations as {} (a worker running as its own role needs `chunk-worker migrate` run by the owner with database.service_role naming it)",
                    db.describe()
                )
            })?;
        if !pending.is_empty() {
            (|| async { store::migrations::run(&pool).await })
                .retry(backoff)
                .when(|e| matches!(e, sqlx::migrate::MigrateError::Execute(inner) if store::is_transient(inner)))
                .await
                .with_context(|| {
                    format!(
                        "running {} pending database migration(s) as {} (a role without the right to change the schema: run `chunk-worker migrate` as the owner first)",
                        pending.len(),
                        db.describe()
                    )
                })?;
        }
        store::migrations::ensure_service_role(&pool, db.service_role.as_deref()).await?;
        anyhow::Ok(())
    }
    .await;
    pool.close().await;
    prepared
}

/// `chunk-worker migrate`: create the database if needed and migrate.
pub async fn migrate(settings: Settings) -> anyhow::Result<()> {
    prepare_database(&settings).await?;
    tracing::info!("migrations applied");
    Ok(())
}

/// `chunk-worker run`: the worker, until SIGTERM or SIGINT.
pub async fn run(settings: Settings) -> anyhow::Result<()> {
    // Signals are handled from the start: a SIGTERM while start-up waits for
    // the database is a clean stop too.
    let shutdown = CancellationToken::new();
    tokio::spawn(signal_shutdown(shutdown.clone()));
    let app = tokio::select! {
        app = Application::build(settings) => app?,
        () = shutdown.cancelled() => {
            tracing::info!("stopped during start-up");
            return Ok(());
        }
    };
    tracing::info!(http_addr = %app.http_addr(), "chunk-worker starting");
    app.run_until_stopped(shutdown).await
}

/// Resolves on the first SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let token = CancellationToken::new();
    signal_shutdown(token.clone()).await;
}

/// Cancels `token` on the first SIGTERM or SIGINT.
async fn signal_shutdown(token: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                    _ = int.recv() => tracing::info!("SIGINT: shutting down"),
                }
            }
            _ => {
                tracing::error!("cannot install signal handlers; falling back to ctrl-c");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    token.cancel();
}
