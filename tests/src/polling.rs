//! Waiting for something with a deadline, without sleeps for
//! synchronisation.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::bail;

/// Default deadline of the polling helpers.
pub const DEADLINE: Duration = Duration::from_secs(60);

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
