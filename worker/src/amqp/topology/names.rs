//! The topology's names under one prefix, its errors, and the helpers every
//! declaration uses.

use lapin::options::QueueDeclareOptions;
use lapin::types::{AMQPValue, LongString, ShortString};

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
