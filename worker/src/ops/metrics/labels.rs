//! The label sets of the worker's metrics, the histograms' buckets, and the
//! bounded tenant label.

use std::collections::HashSet;
use std::sync::Mutex;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::histogram::Histogram;

/// Buckets of the per-message and per-stage durations, in seconds.
pub(super) const DURATION_BUCKETS: [f64; 14] = [
    0.0025, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0,
];

/// Buckets of chunk sizes, in tokens (the profiles' budgets are 350-900).
pub(super) const TOKEN_BUCKETS: [f64; 10] = [
    16.0, 32.0, 64.0, 128.0, 256.0, 384.0, 512.0, 650.0, 900.0, 1200.0,
];

/// Label of a message that names no valid tenant.
pub(super) const UNKNOWN: &str = "unknown";
/// Label of the tenants beyond `telemetry.max_tenant_labels`.
pub(super) const OTHER_TENANT: &str = "other";

/// How a message ended, for `chunking_operations_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationOutcome {
    /// A new version was stored.
    Stored,
    /// The version was already stored.
    Duplicate,
    /// Dead-lettered.
    Failed,
    /// Parked in the retry queue at shutdown.
    Parked,
}

impl OperationOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stored => "stored",
            Self::Duplicate => "duplicate",
            Self::Failed => "failed",
            Self::Parked => "parked",
        }
    }

    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// The chunking strategy and granularity a message asked for (through its
/// profile): `unknown` when it names no valid profile.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StrategyLabels {
    /// Registered strategy (`structural`).
    pub strategy: String,
    /// The Chunking System specification granularity (`section`).
    pub granularity: String,
}

impl StrategyLabels {
    /// The labels of `profile`.
    pub fn of(profile: &shared::Profile) -> Self {
        Self {
            strategy: profile.strategy.clone(),
            granularity: profile.granularity.as_str().to_owned(),
        }
    }

    /// The labels of the profile `name` (the default profile when `None`).
    pub fn for_profile(engine: &shared::Engine, name: Option<&str>) -> Self {
        match engine.profile(name) {
            Ok(p) => Self::of(p),
            Err(_) => Self {
                strategy: UNKNOWN.to_owned(),
                granularity: UNKNOWN.to_owned(),
            },
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct OperationLabels {
    pub(super) tenant_id: String,
    pub(super) strategy: String,
    pub(super) granularity: String,
    pub(super) outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ErrorLabels {
    pub(super) tenant_id: String,
    pub(super) error_type: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ChunkLabels {
    pub(super) tenant_id: String,
    pub(super) strategy: String,
    pub(super) granularity: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct StageLabels {
    pub(super) stage: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct QueueLabels {
    pub(super) queue: &'static str,
}

/// A stage of storing a version, for `chunking_stage_duration_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The chunking engine (normalize, parse, pack, validate, links).
    Chunk,
    /// The store transaction.
    Store,
}

/// A queue whose depth is exported, for `chunking_queue_messages{queue}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// The input queue.
    Requests,
    /// The delayed-retry queue.
    Retry,
    /// The dead-letter queue (`chunking.failed`).
    DeadLetter,
}

impl QueueKind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Requests => "requests",
            Self::Retry => "retry",
            Self::DeadLetter => "dead_letter",
        }
    }
}

/// Tenant label values, bounded.
#[derive(Debug)]
pub(super) struct TenantLabels {
    pub(super) max: usize,
    pub(super) seen: Mutex<HashSet<String>>,
}

impl TenantLabels {
    pub(super) fn label(&self, tenant: Option<&str>) -> String {
        let Some(t) = tenant.filter(|t| shared::contract::is_tenant_id(t)) else {
            return UNKNOWN.to_owned();
        };
        // A poisoned lock only means another thread panicked mid-insert;
        // the set is still usable.
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(t) {
            return t.to_owned();
        }
        if seen.len() < self.max {
            seen.insert(t.to_owned());
            return t.to_owned();
        }
        OTHER_TENANT.to_owned()
    }
}

pub(super) fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

pub(super) fn token_histogram() -> Histogram {
    Histogram::new(TOKEN_BUCKETS)
}
