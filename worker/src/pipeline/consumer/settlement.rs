//! What one delivery's handling and its settlement share: what is known
//! about the delivery ([`MessageInfo`]), how it ends ([`Settlement`]), the
//! session's publisher, channel and acks ([`SessionIo`]), and the header the
//! broker counts redeliveries in.

use lapin::Channel;

use crate::amqp::publisher::Publisher;
use crate::ops::metrics::StrategyLabels;
use crate::pipeline::handler::{Failure, MessageIds, Outcome, Precheck};

use super::acks::Acker;

/// What every delivery of one consume session is settled with.
#[derive(Clone)]
pub(super) struct SessionIo {
    /// Confirmed publishing (dead-letter exchange, retry queue).
    pub(super) publisher: Publisher,
    /// The consume channel.
    pub(super) channel: Channel,
    /// The channel's acks, coalesced.
    pub(super) acker: Acker,
}

/// Header the broker sets on redeliveries from quorum queues.
pub(super) const DELIVERY_COUNT_HEADER: &str = "x-delivery-count";

/// What is known about a delivery before it is handled.
pub(super) struct MessageInfo {
    /// Ids read leniently from the body.
    pub(super) ids: MessageIds,
    /// Deliveries so far, this one included.
    pub(super) attempts: u32,
    /// Headers for the events it causes (the continued trace context).
    pub(super) event_headers: serde_json::Value,
    /// Whether the handler checks for its stored version first.
    pub(super) precheck: Precheck,
    /// The profile the settings choose for it (for the audit line).
    pub(super) profile: String,
    /// The strategy and granularity of that profile (metric labels).
    pub(super) strategy: StrategyLabels,
}

/// How a delivery ends.
pub(super) enum Settlement {
    Done(Outcome),
    Failed(Failure),
    /// Shutdown while waiting on a transient fault.
    Park,
    /// The channel died: the broker will redeliver.
    Abandon,
}

impl Settlement {
    /// The `outcome` field of the summary log line.
    pub(super) fn label(&self) -> &'static str {
        match self {
            Settlement::Done(Outcome::Stored { .. }) => "stored",
            Settlement::Done(Outcome::Duplicate) => "duplicate",
            Settlement::Failed(_) => "failed",
            Settlement::Park => "parked",
            Settlement::Abandon => "abandoned",
        }
    }
}
