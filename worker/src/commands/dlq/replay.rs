//! Replaying dead letters: publish with confirm, then ack; each run is
//! recorded in `dlq_replays`.

use std::time::Duration;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lapin::options::BasicAckOptions;
use lapin::types::FieldTable;
use lapin::BasicProperties;
use serde::Serialize;
use shared::contract::INPUT_ROUTING_KEY;
use uuid::Uuid;

use super::scan::{connect, Scan};
use crate::amqp::headers;
use crate::amqp::publisher::Publisher;
use crate::amqp::topology::Topology;
use crate::cli::dlq::Filters;
use crate::config::Settings;
use crate::store::dlq_replays;

/// Headers that describe a failure or the broker's bookkeeping: removed from
/// a replayed message so it starts fresh (`x-first-failed-at` is kept).
const DROPPED_HEADERS: &[&str] = &[
    headers::ERROR_CODE,
    headers::ERROR_DETAIL,
    headers::ATTEMPTS,
    headers::FAILED_AT,
    headers::DEATH,
    "x-first-death-exchange",
    "x-first-death-queue",
    "x-first-death-reason",
    "x-last-death-exchange",
    "x-last-death-queue",
    "x-last-death-reason",
    "x-delivery-count",
    headers::REPLAYED_AT,
    headers::REPLAY_ID,
];

/// What a replay did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplaySummary {
    /// The dlq_replays row (none for a dry run).
    pub replay_id: Option<Uuid>,
    /// Messages looked at.
    pub scanned: u64,
    /// Messages matching the filters (within the limit).
    pub matched: u64,
    /// Republished, confirmed and removed from the dead-letter queue.
    pub replayed: u64,
    /// Not matching: left in the queue.
    pub skipped: u64,
    /// Matching but not republished: left in the queue.
    pub failed: u64,
    /// The matching messages (ids), in order.
    pub ids: Vec<String>,
}

/// Options of a replay, as the library takes them.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Which messages.
    pub filters: Filters,
    /// Change nothing.
    pub dry_run: bool,
    /// Replay at most this many.
    pub limit: Option<usize>,
    /// Messages per second; 0 or less: unlimited.
    pub rate: f64,
    /// Who replays.
    pub operator: String,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// Replays the matching dead-lettered messages (see the module docs).
pub async fn replay(settings: &Settings, opts: &ReplayOptions) -> anyhow::Result<ReplaySummary> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let pool = if opts.dry_run {
        None
    } else {
        Some(crate::store::pool(&settings.database))
    };
    let mut summary = ReplaySummary::default();
    let replay_id = Uuid::new_v4();
    if let Some(pool) = &pool {
        let filters = serde_json::json!({
            "filters": opts.filters,
            "limit": opts.limit,
            "rate": opts.rate,
        });
        dlq_replays::start(pool, replay_id, &opts.operator, &filters)
            .await
            .context("recording the replay in dlq_replays (database.url; has `chunk-worker migrate` run?)")?;
        summary.replay_id = Some(replay_id);
    }
    let publisher = Publisher::open(&conn)
        .await
        .context("opening the publisher channel")?;
    let mut scan = Scan::start(&conn, &topology).await?;
    scan.replay_id = Some(replay_id.to_string());
    let bar = progress_bar(opts.progress, u64::from(scan.ready));
    let mut ticker = (opts.rate > 0.0 && opts.rate.is_finite()).then(|| {
        let mut t = tokio::time::interval(Duration::from_secs_f64(1.0 / opts.rate.max(0.001)));
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    let replayed_at = crate::clock::now_rfc3339();

    let result = async {
        loop {
            if opts.limit.is_some_and(|l| summary.matched >= l as u64) {
                break;
            }
            let Some((letter, delivery)) = scan.next().await? else {
                break;
            };
            summary.scanned += 1;
            bar.inc(1);
            if !letter.matches(&opts.filters) {
                summary.skipped += 1;
                scan.hold(delivery);
                continue;
            }
            summary.matched += 1;
            summary.ids.push(letter.id.clone());
            if opts.dry_run {
                scan.hold(delivery);
                continue;
            }
            if let Some(t) = ticker.as_mut() {
                t.tick().await;
            }
            let props = replay_properties(&delivery.properties, replay_id, &replayed_at);
            match publisher
                .publish(
                    &topology.events_exchange(),
                    INPUT_ROUTING_KEY,
                    &delivery.data,
                    props,
                )
                .await
            {
                Ok(()) => {
                    match delivery.ack(BasicAckOptions::default()).await {
                        Ok(true) => summary.replayed += 1,
                        Ok(false) => {
                            tracing::warn!(id = %letter.id, "the dead-letter copy could not be acked (channel closed); it stays as a duplicate");
                            summary.failed += 1;
                        }
                        Err(e) => {
                            // Republished but still dead-lettered: a harmless
                            // duplicate the next replay sends again.
                            tracing::warn!(id = %letter.id, error = %e, "ack of the dead-letter copy failed");
                            summary.failed += 1;
                        }
                    }
                }
                Err(e) => {
                    bar.suspend(|| eprintln!("replay of {} failed: {e}", letter.id));
                    summary.failed += 1;
                    scan.hold(delivery);
                }
            }
            if let Some(pool) = &pool {
                if summary.matched % 10 == 0 {
                    record_counts(pool, replay_id, &summary, false).await;
                }
            }
        }
        anyhow::Ok(())
    }
    .await;
    bar.finish_and_clear();
    scan.finish().await;
    let _ = conn.close(200, "dlq replay done").await;
    if let Some(pool) = &pool {
        record_counts(pool, replay_id, &summary, true).await;
        pool.close().await;
    }
    result.map(|()| summary)
}

async fn record_counts(pool: &sqlx::PgPool, id: Uuid, s: &ReplaySummary, finished: bool) {
    let counts = dlq_replays::ReplayCounts {
        matched: s.matched,
        replayed: s.replayed,
        skipped: s.skipped,
        failed: s.failed,
    };
    if let Err(e) = dlq_replays::record(pool, id, counts, finished).await {
        tracing::warn!(error = %e, "could not update the dlq_replays row");
    }
}

/// The original properties with the failure headers removed and the replay
/// headers added.
pub fn replay_properties(
    original: &BasicProperties,
    replay_id: Uuid,
    replayed_at: &str,
) -> BasicProperties {
    let mut table = FieldTable::default();
    if let Some(h) = original.headers() {
        for (k, v) in h.inner() {
            if !DROPPED_HEADERS.contains(&k.as_str()) {
                table.insert(k.clone(), v.clone());
            }
        }
    }
    headers::set_str(&mut table, headers::REPLAYED_AT, replayed_at);
    headers::set_str(&mut table, headers::REPLAY_ID, &replay_id.to_string());
    original.clone().with_headers(table).with_delivery_mode(2)
}

fn progress_bar(show: bool, len: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} messages {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

// ---------------------------------------------------------------------------
// The command line.
