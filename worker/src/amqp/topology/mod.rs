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

use lapin::options::{ExchangeDeclareOptions, QueueBindOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, ExchangeKind};

use shared::contract::{FAILED_ROUTING_KEY, INPUT_ROUTING_KEY};

mod names;
mod retry;

pub(crate) use names::{declare_error, durable_queue, long_str, short};
pub use names::{Topology, TopologyError, BROKER_DELIVERY_LIMIT_MARGIN, MIGRATE_RETRY_COMMAND};
pub use retry::{classify_retry_refusal, RetryRefusal};

impl Topology {
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
