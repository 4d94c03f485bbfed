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
    /// Writes new documents' first versions, several to a statement under
    /// load.
    pub first_versions: crate::store::versions::FirstVersions,
    /// Checks for stored versions before chunking, several to a query
    /// under load.
    pub prechecks: crate::store::versions::Prechecks,
    /// What the messages in flight may hold together.
    pub memory: crate::pipeline::memory::MemoryBudget,
    /// Wakes the outbox relay after a commit that enqueued an event.
    pub outbox: crate::outbox::committed::Committed,
    /// Circuit breakers per strategy, shared by the consumer and the API.
    pub breakers: Arc<crate::breaker::Breakers>,
}

/// Readiness facts maintained by the consumer; the database is probed live.
///
/// The broker and database links also drive the `chunking_broker_connected`
/// and `chunking_database_connected` gauges and the log: a loss is one WARN
/// line saying what the worker does about it, a recovery one INFO line;
/// retries in between log at DEBUG. Routine maintenance (a broker restart)
/// never logs at ERROR.
#[derive(Debug, Default)]
pub struct Health {
    broker: Link,
    database: Link,
    consuming: AtomicBool,
}

/// One connection's state: up or down, whether it was ever up, its gauge.
#[derive(Debug, Default)]
struct Link {
    up: AtomicBool,
    seen: AtomicBool,
    gauge: prometheus_client::metrics::gauge::Gauge,
}

/// What a state report changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Up for the first time.
    Connected,
    /// Was up, now down.
    Lost,
    /// Was down after being up, now up again.
    Back,
    /// Nothing.
    Same,
}

/// What a link logs when it changes.
#[derive(Debug)]
struct Notices {
    connected: &'static str,
    lost: &'static str,
    back: &'static str,
}

const BROKER: Notices = Notices {
    connected: "connected to the broker",
    lost: "lost the broker connection: unacknowledged messages go back to the queue, \
           reconnecting with backoff (retries log at DEBUG)",
    back: "the broker connection is back; consuming again",
};

const DATABASE: Notices = Notices {
    connected: "connected to the database",
    lost: "cannot reach the database: messages are held unacknowledged and retried, \
           events stay in the outbox (retries log at DEBUG)",
    back: "the database answers again; storing and relaying resumed",
};

impl Link {
    /// Sets the state and logs a change: INFO when up, WARN when lost.
    fn report(&self, up: bool, notices: &Notices) -> Change {
        let change = self.set(up);
        match change {
            Change::Connected => tracing::info!("{}", notices.connected),
            Change::Lost => tracing::warn!("{}", notices.lost),
            Change::Back => tracing::info!("{}", notices.back),
            Change::Same => {}
        }
        change
    }

    fn set(&self, up: bool) -> Change {
        self.gauge.set(i64::from(up));
        let was = self.up.swap(up, Ordering::SeqCst);
        match (was, up) {
            (false, true) if !self.seen.swap(true, Ordering::SeqCst) => Change::Connected,
            (false, true) => Change::Back,
            (true, false) => Change::Lost,
            _ => Change::Same,
        }
    }
}

impl Health {
    /// Health whose links drive `metrics`' connectivity gauges.
    pub fn with_gauges(metrics: &crate::ops::metrics::Metrics) -> Self {
        let link = |gauge: &prometheus_client::metrics::gauge::Gauge| Link {
            gauge: gauge.clone(),
            ..Link::default()
        };
        Self {
            broker: link(&metrics.broker_connected),
            database: link(&metrics.database_connected),
            consuming: AtomicBool::new(false),
        }
    }

    /// Records whether the consumer's broker connection is up; logs a loss
    /// (WARN) and a recovery (INFO) once each.
    pub fn set_broker(&self, up: bool) -> Change {
        self.broker.report(up, &BROKER)
    }

    /// Records whether the database answered; logs a loss (WARN) and a
    /// recovery (INFO) once each.
    pub fn set_database(&self, up: bool) -> Change {
        self.database.report(up, &DATABASE)
    }

    /// Whether the broker connection was ever up in this process.
    pub fn broker_ever_up(&self) -> bool {
        self.broker.seen.load(Ordering::SeqCst)
    }

    /// Whether the database answered last time it was asked.
    pub fn database(&self) -> bool {
        self.database.up.load(Ordering::SeqCst)
    }

    /// Records whether the consumer is consuming.
    pub fn set_consuming(&self, on: bool) {
        self.consuming.store(on, Ordering::SeqCst);
    }

    /// Whether the broker connection is up.
    pub fn broker(&self) -> bool {
        self.broker.up.load(Ordering::SeqCst)
    }

    /// Whether consumption has started (and not stopped).
    pub fn consuming(&self) -> bool {
        self.consuming.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::metrics::Metrics;

    #[test]
    fn a_loss_and_a_recovery_are_reported_once_and_drive_the_gauges() {
        let metrics = Metrics::new(10);
        let h = Health::with_gauges(&metrics);
        let gauge = |name: &str| {
            let text = metrics.render();
            text.lines()
                .find(|l| l.starts_with(name))
                .map(|l| l.to_owned())
                .unwrap_or_default()
        };
        assert_eq!(h.set_broker(false), Change::Same);
        assert_eq!(h.set_broker(true), Change::Connected);
        assert_eq!(
            gauge("chunking_broker_connected"),
            "chunking_broker_connected 1"
        );
        assert_eq!(h.set_broker(true), Change::Same);
        assert_eq!(h.set_broker(false), Change::Lost);
        assert_eq!(h.set_broker(false), Change::Same);
        assert_eq!(
            gauge("chunking_broker_connected"),
            "chunking_broker_connected 0"
        );
        assert_eq!(h.set_broker(true), Change::Back);
        assert_eq!(h.set_database(true), Change::Connected);
        assert_eq!(h.set_database(false), Change::Lost);
        assert_eq!(
            gauge("chunking_database_connected"),
            "chunking_database_connected 0"
        );
        assert!(!h.database());
        assert_eq!(h.set_database(true), Change::Back);
        assert_eq!(
            gauge("chunking_database_connected"),
            "chunking_database_connected 1"
        );
    }
}
