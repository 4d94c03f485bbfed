//! What every task of a running worker shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shared::Engine;
use sqlx::PgPool;

use crate::amqp::topology::Topology;
use crate::config::Settings;
use crate::ops::metrics::Metrics;

/// Shared state of a running worker.
#[derive(Debug)]
pub struct Context {
    /// Validated settings.
    pub settings: Settings,
    /// Exchange and queue names.
    pub topology: Topology,
    /// The database pool.
    pub pool: PgPool,
    /// The chunking engine (immutable, shared by the blocking tasks): the
    /// one built with the settings.
    pub engine: Arc<Engine>,
    /// Readiness facts.
    pub health: Arc<Health>,
    /// Counters served on `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Wakes the outbox relay after a commit that enqueued an event.
    pub outbox: crate::outbox::committed::Committed,
}

/// Readiness facts maintained by the consumer; the database is probed live.
#[derive(Debug, Default)]
pub struct Health {
    broker: AtomicBool,
    consuming: AtomicBool,
}

impl Health {
    /// Records whether the consumer's broker connection is up.
    pub fn set_broker(&self, up: bool) {
        self.broker.store(up, Ordering::SeqCst);
    }

    /// Records whether the consumer is consuming.
    pub fn set_consuming(&self, on: bool) {
        self.consuming.store(on, Ordering::SeqCst);
    }

    /// Whether the broker connection is up.
    pub fn broker(&self) -> bool {
        self.broker.load(Ordering::SeqCst)
    }

    /// Whether consumption has started (and not stopped).
    pub fn consuming(&self) -> bool {
        self.consuming.load(Ordering::SeqCst)
    }
}
