//! End-to-end test harness: [`TestApp::spawn`] starts a worker in-process
//! against the real RabbitMQ and Postgres, with its own database
//! (`cw_test_<random>`) and its own topology prefix (`t<random>.`), so tests
//! running in parallel never see each other's messages or rows. Helpers
//! publish raw bytes the way upstream does and poll with deadlines (no
//! sleeps for synchronisation). [`proxy::Proxy`] cuts and restores TCP
//! connections to simulate outages without touching the shared servers.

pub mod cookbook;
pub mod otlp;
pub mod proxy;
pub mod tls;

mod app;
mod messages;
mod servers;

pub use app::{Options, Sibling, TestApp};
pub use messages::{headers, message, meta_of, sample_markdown, Received};
pub use servers::{
    amqp_connect, create_database, drop_database, AMQP_ADDR, AMQP_URL, PG_ADDR, PG_SERVER,
};

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::bail;

/// Default deadline of the polling helpers.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A fresh name suffix.
pub fn random_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()
}

/// The workspace's `config/` directory.
pub fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

/// Polls `f` until it returns `Some`, or fails after `deadline`.
pub async fn eventually<T, F, Fut>(what: &str, deadline: Duration, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let end = Instant::now() + deadline;
    let mut last_error = None;
    loop {
        match f().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last_error = Some(e),
        }
        if Instant::now() >= end {
            match last_error {
                Some(e) => {
                    bail!("timed out after {deadline:?} waiting for {what}; last error: {e:#}")
                }
                None => bail!("timed out after {deadline:?} waiting for {what}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
