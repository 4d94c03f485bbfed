//! The broker topology of docs/contract.md#topology, every name behind the configured prefix.
//!
//! ```text
//! <p>ingest.events (topic) --normalize_markdown.completed--> <p>chunking.requests
//!     (quorum, x-delivery-limit, dead-letter exchange <p>ingest.dlx)
//! <p>ingest.dlx (direct) --chunking.failed--> <p>chunking.failed (quorum)
//! <p>chunking.retry (quorum, x-message-ttl, at-least-once dead-lettering)
//!     --expired, via the default exchange--> <p>chunking.requests
//! ```
//!
//! Every queue is a quorum queue, replicated over the cluster's nodes, so
//! the loss of any one node loses nothing and stops nothing. The retry queue
//! needs RabbitMQ 3.10 or later (message TTL on quorum queues); its
//! dead-lettering back to the requests queue is at-least-once
//! (`x-dead-letter-strategy = at-least-once` with `x-overflow =
//! reject-publish`, 3.10 or later with the `stream_queue` feature flag
//! enabled, as every 3.10+ cluster has it unless it was upgraded from 3.8
//! and never enabled it): an expired message leaves the retry queue only
//! once the requests queue confirmed it. The dead-letter target is the
//! default exchange with the requests queue's name, not `ingest.events`, so
//! a retried message reaches the worker's queue and no other subscriber of
//! the upstream routing key a second time.
//!
//! Declaring is idempotent: the same arguments every time. A changed argument
//! (e.g. another delivery limit) makes the broker refuse the declaration,
//! which stops start-up with the broker's message; a retry queue left as a
//! classic queue by an older worker is [`TopologyError::ClassicRetryQueue`],
//! which names the command that replaces it (`chunk-worker topology
//! migrate-retry`, [`crate::commands::topology`]).

use std::time::Duration;

use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{Channel, ExchangeKind};

use shared::contract::{FAILED_ROUTING_KEY, INPUT_ROUTING_KEY};

mod retry;

pub use retry::{classify_retry_refusal, RetryRefusal};

/// How many deliveries past the worker's own limit the quorum queue allows
/// before dropping a message to the dead-letter exchange by itself: the
/// worker normally dead-letters first (with its `x-error-*` headers); this is
/// the backstop for a worker that dies while doing so.
pub const BROKER_DELIVERY_LIMIT_MARGIN: u32 = 2;

/// The command that replaces a classic retry queue by a quorum one.
pub const MIGRATE_RETRY_COMMAND: &str = "chunk-worker topology migrate-retry";

/// Why the topology could not be declared.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The retry queue exists as a classic queue (declared by a worker from
    /// before every queue was a quorum queue): an operator must migrate it.
    #[error(
        "the retry queue {queue} is a classic queue (declared by an older chunk-worker): it must \
         become a quorum queue to survive the loss of a broker node. Stop every worker, run \
         `{MIGRATE_RETRY_COMMAND}` with the same settings (it moves the queue's messages to \
         the requests queue and declares the quorum queue), then start the workers again"
    )]
    ClassicRetryQueue {
        /// The retry queue's name.
        queue: String,
    },
    /// The broker refused an argument of the quorum retry queue: it is
    /// older than RabbitMQ 3.10.
    #[error(
        "the broker refused the quorum retry queue {queue} ({reply}): message TTL and \
         at-least-once dead-lettering on quorum queues need RabbitMQ 3.10 or later"
    )]
    Unsupported {
        /// The retry queue's name.
        queue: String,
        /// The broker's reply text.
        reply: String,
    },
    /// Any other refusal or a lost channel.
    #[error("declaring {what}: {source} (an exchange or queue that exists with other arguments?)")]
    Declare {
        /// The exchange, queue or binding.
        what: String,
        /// The broker's error.
        #[source]
        source: lapin::Error,
    },
}

impl TopologyError {
    /// Whether retrying cannot help: an operator must act (the worker stops
    /// with this error instead of reconnecting).
    pub fn needs_operator(&self) -> bool {
        matches!(
            self,
            Self::ClassicRetryQueue { .. } | Self::Unsupported { .. }
        )
    }
}

pub(crate) fn declare_error(what: impl Into<String>) -> impl FnOnce(lapin::Error) -> TopologyError {
    let what = what.into();
    move |source| TopologyError::Declare { what, source }
}

/// Exchange and queue names under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    prefix: String,
}

impl Topology {
    /// Names under `prefix` (may be empty).
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
        }
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `<prefix><logical>`.
    pub fn name(&self, logical: &str) -> String {
        format!("{}{logical}", self.prefix)
    }

    /// The topic exchange upstream publishes to and events go out on.
    pub fn events_exchange(&self) -> String {
        self.name("ingest.events")
    }

    /// The dead-letter exchange.
    pub fn dead_letter_exchange(&self) -> String {
        self.name("ingest.dlx")
    }

    /// The queue the worker consumes.
    pub fn requests_queue(&self) -> String {
        self.name("chunking.requests")
    }

    /// The dead-letter queue.
    pub fn failed_queue(&self) -> String {
        self.name("chunking.failed")
    }

    /// The delay queue messages are parked in.
    pub fn retry_queue(&self) -> String {
        self.name("chunking.retry")
    }

    /// Declares exchanges, queues and bindings.
    pub async fn declare(
        &self,
        channel: &Channel,
        delivery_limit: u32,
        retry_delay: Duration,
    ) -> Result<(), TopologyError> {
        self.declare_core(channel, delivery_limit).await?;
        self.declare_retry(channel, retry_delay).await
    }

    /// Declares everything but the retry queue: both exchanges, the
    /// requests and dead-letter queues and their bindings.
    pub async fn declare_core(
        &self,
        channel: &Channel,
        delivery_limit: u32,
    ) -> Result<(), TopologyError> {
        let durable_exchange = ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        };
        for (name, kind) in [
            (self.events_exchange(), ExchangeKind::Topic),
            (self.dead_letter_exchange(), ExchangeKind::Direct),
        ] {
            channel
                .exchange_declare(&name, kind, durable_exchange, FieldTable::default())
                .await
                .map_err(declare_error(format!("the exchange {name}")))?;
        }

        let mut requests = FieldTable::default();
        requests.insert(short("x-queue-type"), long_str("quorum"));
        requests.insert(
            short("x-delivery-limit"),
            AMQPValue::LongLongInt(i64::from(
                delivery_limit.saturating_add(BROKER_DELIVERY_LIMIT_MARGIN),
            )),
        );
        requests.insert(
            short("x-dead-letter-exchange"),
            long_str(&self.dead_letter_exchange()),
        );
        requests.insert(
            short("x-dead-letter-routing-key"),
            long_str(FAILED_ROUTING_KEY),
        );
        let queue = self.requests_queue();
        channel
            .queue_declare(&queue, durable_queue(), requests)
            .await
            .map_err(declare_error(format!("the queue {queue}")))?;
        channel
            .queue_bind(
                &queue,
                &self.events_exchange(),
                INPUT_ROUTING_KEY,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(declare_error(format!("the binding of {queue}")))?;

        let mut failed = FieldTable::default();
        failed.insert(short("x-queue-type"), long_str("quorum"));
        let queue = self.failed_queue();
        channel
            .queue_declare(&queue, durable_queue(), failed)
            .await
            .map_err(declare_error(format!("the queue {queue}")))?;
        channel
            .queue_bind(
                &queue,
                &self.dead_letter_exchange(),
                FAILED_ROUTING_KEY,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(declare_error(format!("the binding of {queue}")))?;
        Ok(())
    }
}

pub(crate) fn durable_queue() -> QueueDeclareOptions {
    QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    }
}

pub(crate) fn short(s: &str) -> ShortString {
    ShortString::from(s.to_owned())
}

pub(crate) fn long_str(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_is_prepended_to_every_name() {
        let t = Topology::new("p.");
        assert_eq!(t.events_exchange(), "p.ingest.events");
        assert_eq!(t.dead_letter_exchange(), "p.ingest.dlx");
        assert_eq!(t.requests_queue(), "p.chunking.requests");
        assert_eq!(t.failed_queue(), "p.chunking.failed");
        assert_eq!(t.retry_queue(), "p.chunking.retry");
        assert_eq!(Topology::new("").events_exchange(), "ingest.events");
    }
}
