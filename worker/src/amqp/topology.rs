//! The broker topology of SPEC 2.4, every name behind the configured prefix.
//!
//! ```text
//! <p>ingest.events (topic) --normalize_markdown.completed--> <p>chunking.requests
//!     (quorum, x-delivery-limit, dead-letter exchange <p>ingest.dlx)
//! <p>ingest.dlx (direct) --chunking.failed--> <p>chunking.failed (quorum)
//! <p>chunking.retry (classic, x-message-ttl) --expired, via the default
//!     exchange--> <p>chunking.requests
//! ```
//!
//! Declaring is idempotent: the same arguments every time. A changed argument
//! (e.g. another delivery limit) makes the broker refuse the declaration,
//! which stops start-up with the broker's message.

use std::time::Duration;

use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{Channel, ExchangeKind};

use shared::contract::{FAILED_ROUTING_KEY, INPUT_ROUTING_KEY};

/// How many deliveries past the worker's own limit the quorum queue allows
/// before dropping a message to the dead-letter exchange by itself: the
/// worker normally dead-letters first (with its `x-error-*` headers); this is
/// the backstop for a worker that dies while doing so.
pub const BROKER_DELIVERY_LIMIT_MARGIN: u32 = 2;

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
    ) -> lapin::Result<()> {
        let durable_exchange = ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        };
        let durable_queue = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        channel
            .exchange_declare(
                &self.events_exchange(),
                ExchangeKind::Topic,
                durable_exchange,
                FieldTable::default(),
            )
            .await?;
        channel
            .exchange_declare(
                &self.dead_letter_exchange(),
                ExchangeKind::Direct,
                durable_exchange,
                FieldTable::default(),
            )
            .await?;

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
        channel
            .queue_declare(&self.requests_queue(), durable_queue, requests)
            .await?;
        channel
            .queue_bind(
                &self.requests_queue(),
                &self.events_exchange(),
                INPUT_ROUTING_KEY,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;

        let mut failed = FieldTable::default();
        failed.insert(short("x-queue-type"), long_str("quorum"));
        channel
            .queue_declare(&self.failed_queue(), durable_queue, failed)
            .await?;
        channel
            .queue_bind(
                &self.failed_queue(),
                &self.dead_letter_exchange(),
                FAILED_ROUTING_KEY,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;

        // Classic rather than quorum: it only holds copies for a few seconds,
        // and classic queues expire per-queue TTL messages in order.
        let mut retry = FieldTable::default();
        retry.insert(short("x-queue-type"), long_str("classic"));
        retry.insert(
            short("x-message-ttl"),
            AMQPValue::LongLongInt(i64::try_from(retry_delay.as_millis()).unwrap_or(i64::MAX)),
        );
        retry.insert(short("x-dead-letter-exchange"), long_str(""));
        retry.insert(
            short("x-dead-letter-routing-key"),
            long_str(&self.requests_queue()),
        );
        channel
            .queue_declare(&self.retry_queue(), durable_queue, retry)
            .await?;
        Ok(())
    }
}

fn short(s: &str) -> ShortString {
    ShortString::from(s.to_owned())
}

fn long_str(s: &str) -> AMQPValue {
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
