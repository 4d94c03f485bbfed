//! Reading the dead-letter queue without removing its messages: hold, then
//! hand back (see the module documentation of `dlq`).

use std::time::Duration;

use anyhow::Context as _;
use futures_util::StreamExt;
use lapin::message::Delivery;
use lapin::options::{BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::{Channel, Connection};
use uuid::Uuid;

use super::letter::DeadLetter;
use crate::amqp::headers;
use crate::amqp::topology::Topology;
use crate::cli::dlq::Filters;
use crate::config::Settings;

/// How long a scan waits for its first delivery before concluding the queue
/// is empty.
const SCAN_FIRST: Duration = Duration::from_millis(1500);

/// How long a scan waits for the next delivery before concluding the queue
/// has no more ready messages. The ready count of a quorum queue lags behind
/// messages just handed back (e.g. by the previous command), so the scan
/// reads until the queue goes quiet rather than trusting the count.
const SCAN_IDLE: Duration = Duration::from_millis(500);

/// Most messages held unacked at once by one scan (the prefetch).
const MAX_PREFETCH: u16 = 10_000;

/// A broker connection for the `dlq` commands.
pub(super) async fn connect(settings: &Settings) -> anyhow::Result<Connection> {
    crate::amqp::connect(&settings.amqp, "chunk-worker dlq")
        .await
        .context("connecting to the broker (amqp.urls)")
}

/// Ready messages in the dead-letter queue (passive declare: never creates it).
async fn ready_count(channel: &Channel, topology: &Topology) -> anyhow::Result<u32> {
    let q = channel
        .queue_declare(
            &topology.failed_queue(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .with_context(|| {
            format!(
                "the dead-letter queue {} does not exist (has the worker run with this topology.prefix?)",
                topology.failed_queue()
            )
        })?;
    Ok(q.message_count())
}

/// A scan of the dead-letter queue: deliveries held unacked until
/// [`Scan::finish`] returns them to the queue.
pub(super) struct Scan {
    pub(super) channel: Channel,
    pub(super) consumer: lapin::Consumer,
    /// Ready messages when the scan started (a hint: it lags).
    pub(super) ready: u32,
    /// Deliveries so far.
    pub(super) delivered: u64,
    /// `x-replay-id` of the replay doing the scan, if any.
    pub(super) replay_id: Option<String>,
    pub(super) held: Vec<Delivery>,
}

impl Scan {
    pub(super) async fn start(conn: &Connection, topology: &Topology) -> anyhow::Result<Self> {
        let channel = conn.create_channel().await.context("opening a channel")?;
        let ready = ready_count(&channel, topology).await?;
        channel
            .basic_qos(MAX_PREFETCH, BasicQosOptions::default())
            .await
            .context("setting the prefetch")?;
        let tag = format!("chunk-worker-dlq-{}", Uuid::new_v4().simple());
        let consumer = channel
            .basic_consume(
                &topology.failed_queue(),
                &tag,
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .context("consuming the dead-letter queue")?;
        Ok(Self {
            channel,
            consumer,
            ready,
            delivered: 0,
            replay_id: None,
            held: Vec::new(),
        })
    }

    /// The next message this scan did not republish itself, or `None` when
    /// the scan is done.
    pub(super) async fn next(&mut self) -> anyhow::Result<Option<(DeadLetter, Delivery)>> {
        loop {
            let wait = if self.delivered == 0 {
                SCAN_FIRST
            } else {
                SCAN_IDLE
            };
            let delivery = match tokio::time::timeout(wait, self.consumer.next()).await {
                Err(_) | Ok(None) => return Ok(None),
                Ok(Some(Err(e))) => {
                    return Err(anyhow::Error::new(e).context("reading the dead-letter queue"))
                }
                Ok(Some(Ok(d))) => d,
            };
            self.delivered += 1;
            let letter = DeadLetter::from_parts(&delivery.data, &delivery.properties);
            let ours = self.replay_id.is_some()
                && letter
                    .headers
                    .get(headers::REPLAY_ID)
                    .and_then(serde_json::Value::as_str)
                    == self.replay_id.as_deref();
            if !ours {
                return Ok(Some((letter, delivery)));
            }
            // Replayed by this run and dead-lettered again: leave it for the
            // next run.
            self.held.push(delivery);
        }
    }

    /// Keeps `delivery` in the queue.
    pub(super) fn hold(&mut self, delivery: Delivery) {
        self.held.push(delivery);
    }

    /// Hands every held delivery back to the queue.
    pub(super) async fn finish(self) {
        let held = self.held.len();
        // Closing the channel returns its unacked deliveries to the queue.
        if let Err(e) = self.channel.close(200, "dlq scan done").await {
            tracing::warn!(error = %e, held, "closing the scan channel failed; the broker returns the messages when the connection closes");
        }
    }
}

/// The dead-lettered messages matching `filters`, at most `limit`, in queue
/// order. Nothing is removed from the queue.
pub async fn list(
    settings: &Settings,
    filters: &Filters,
    limit: usize,
) -> anyhow::Result<Vec<DeadLetter>> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let mut scan = Scan::start(&conn, &topology).await?;
    let mut out = Vec::new();
    let result = async {
        while out.len() < limit {
            let Some((letter, delivery)) = scan.next().await? else {
                break;
            };
            scan.hold(delivery);
            if letter.matches(filters) {
                out.push(letter);
            }
        }
        anyhow::Ok(())
    }
    .await;
    scan.finish().await;
    let _ = conn.close(200, "dlq list done").await;
    result.map(|()| out)
}

/// The dead-lettered message named `id` (see [`DeadLetter::is_named`]).
pub async fn show(settings: &Settings, id: &str) -> anyhow::Result<Option<DeadLetter>> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = connect(settings).await?;
    let mut scan = Scan::start(&conn, &topology).await?;
    let result = async {
        while let Some((letter, delivery)) = scan.next().await? {
            scan.hold(delivery);
            if letter.is_named(id) {
                return anyhow::Ok(Some(letter));
            }
        }
        Ok(None)
    }
    .await;
    scan.finish().await;
    let _ = conn.close(200, "dlq show done").await;
    result
}
