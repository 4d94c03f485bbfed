//! The workers a bench run measures: one in-process worker (the default), or
//! N `chunk-worker run` child processes on the same queue and database
//! (`--processes N`, issue 18's scale-out measurement), sharing the
//! configured `worker.concurrency`, `amqp.prefetch` and
//! `database.write_slots` between them.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use lapin::options::QueueDeclareOptions;
use lapin::types::FieldTable;
use secrecy::ExposeSecret;
use tokio::process::{Child, Command};

use crate::amqp::topology::Topology;
use crate::commands::inprocess::InProcessWorker;
use crate::config::Settings;

/// How long child processes may take to start consuming.
const READY_DEADLINE: Duration = Duration::from_secs(60);
/// How long a child may take to stop after SIGTERM before it is killed.
const STOP_DEADLINE: Duration = Duration::from_secs(30);

/// Running workers.
#[derive(Debug)]
pub enum Workers {
    /// The worker inside this process.
    InProcess(InProcessWorker),
    /// `chunk-worker run` children.
    Processes(Vec<Child>),
}

/// Each of `processes` workers' concurrency and prefetch when they share
/// `concurrency` and `prefetch` (at least 1 each).
pub fn share(total: usize, processes: usize) -> usize {
    (total / processes.max(1)).max(1)
}

impl Workers {
    /// Starts the workers and returns once they consume: in-process when
    /// `processes` is 0, else that many children of this executable.
    pub async fn start(settings: &Settings, processes: usize) -> anyhow::Result<Self> {
        if processes == 0 {
            let (worker, _) = InProcessWorker::start(settings.clone(), "bench.").await?;
            return Ok(Self::InProcess(worker));
        }
        let exe = std::env::current_exe().context("locating the chunk-worker executable")?;
        let url = database_url(settings)?;
        let concurrency = share(settings.worker.concurrency, processes);
        let prefetch = share(usize::from(settings.amqp.prefetch), processes).max(concurrency);
        // The database's write concurrency is shared too: N processes with
        // the configured slots each would run N times the write statements
        // at once, which costs Postgres CPU a document (docs/benchmarks-log.md,
        // 2026-12-04), so 1 and N processes are compared at the same total.
        let write_slots = share(settings.database.write_slots, processes);
        let mut children = Vec::with_capacity(processes);
        for i in 0..processes {
            let child = Command::new(&exe)
                .arg("run")
                // The children read the same config files and variables as
                // this process; these override what differs.
                .env("CHUNK_WORKER__TOPOLOGY__PREFIX", &settings.topology_prefix)
                .env("CHUNK_WORKER__DATABASE__URL", &url)
                .env("CHUNK_WORKER__DATABASE__URL_FILE", "")
                .env("CHUNK_WORKER__HTTP__ADDR", "127.0.0.1:0")
                .env("CHUNK_WORKER__WORKER__CONCURRENCY", concurrency.to_string())
                .env("CHUNK_WORKER__AMQP__PREFETCH", prefetch.to_string())
                .env(
                    "CHUNK_WORKER__DATABASE__WRITE_SLOTS",
                    write_slots.to_string(),
                )
                .env("CHUNK_WORKER__API__ENABLED", "false")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .with_context(|| format!("starting worker process {i}"))?;
            children.push(child);
        }
        let mut workers = Self::Processes(children);
        if let Err(e) = workers.wait_consuming(settings, processes).await {
            workers.stop().await.ok();
            return Err(e);
        }
        Ok(workers)
    }

    /// Waits until the requests queue has `n` consumers (each child declares
    /// the topology and consumes once its database and broker are ready).
    async fn wait_consuming(&mut self, settings: &Settings, n: usize) -> anyhow::Result<()> {
        let Self::Processes(children) = self else {
            return Ok(());
        };
        let connection = crate::amqp::connect(&settings.amqp, "chunk-worker bench probe").await?;
        let mut channel = connection.create_channel().await?;
        let queue = Topology::new(settings.topology_prefix.clone()).requests_queue();
        let started = Instant::now();
        loop {
            for (i, child) in children.iter_mut().enumerate() {
                if let Some(status) = child.try_wait()? {
                    bail!("worker process {i} exited during start-up ({status})");
                }
            }
            let passive = QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            };
            // The queue may not exist yet: a passive declare of a missing
            // queue closes the channel, so the next probe opens another.
            match channel
                .queue_declare(&queue, passive, FieldTable::default())
                .await
            {
                Ok(q) if q.consumer_count() as usize >= n => break,
                Ok(_) => {}
                Err(_) => channel = connection.create_channel().await?,
            }
            if started.elapsed() > READY_DEADLINE {
                bail!("{n} worker processes did not all consume within {READY_DEADLINE:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        connection.close(200, "probe done").await.ok();
        Ok(())
    }

    /// Stops the workers gracefully (SIGTERM for children, killed after
    /// [`STOP_DEADLINE`]).
    pub async fn stop(self) -> anyhow::Result<()> {
        match self {
            Self::InProcess(worker) => worker.stop().await,
            Self::Processes(mut children) => {
                for child in &children {
                    if let Some(pid) = child.id() {
                        // No signal crate in the tree: kill(1) sends it.
                        std::process::Command::new("kill")
                            .args(["-TERM", &pid.to_string()])
                            .status()
                            .ok();
                    }
                }
                for child in &mut children {
                    match tokio::time::timeout(STOP_DEADLINE, child.wait()).await {
                        Ok(status) => {
                            status?;
                        }
                        Err(_) => child.kill().await?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// The configured database URL with the bench database's name in its path
/// (credentials and TLS parameters kept), for the children's environment.
fn database_url(settings: &Settings) -> anyhow::Result<String> {
    let mut url = url::Url::parse(settings.database.url.expose_secret())
        .context("database.url is not a URL the children can be given")?;
    let name = settings
        .database
        .options
        .get_database()
        .context("the bench database has no name")?;
    url.set_path(&format!("/{name}"));
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn concurrency_is_shared_between_processes_and_never_zero() {
        assert_eq!(share(4, 1), 4);
        assert_eq!(share(4, 2), 2);
        assert_eq!(share(4, 3), 1);
        assert_eq!(share(1, 2), 1);
    }
}
