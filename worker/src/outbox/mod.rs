//! Transactional outbox: events are written in the same transaction as the
//! data they announce ([`enqueue`]) and published by the [`run`] relay with
//! publisher confirms and `mandatory`. A row is marked published only after
//! the broker confirmed it; after a crash the relay simply publishes what is
//! still pending (at-least-once; event ids are stable, so a re-publish is a
//! duplicate downstream can drop).
//!
//! Two ways out:
//! - **Handed over.** A `chunking.completed` row is committed with a lease
//!   (`next_attempt_at` [`HANDOVER_LEASE_SECS`] ahead) and its event is
//!   handed to this process's relay in memory ([`Committed`]). The relay
//!   publishes it without reading the row, and marks the published rows in
//!   batches, at most [`MARK_INTERVAL`] after their confirm. So a claim costs
//!   the database nothing, however few rows it holds (issue 18: with two
//!   processes, each relay's claims held half as many rows, and every claim
//!   was a transaction of its own). The lease keeps other processes' scans
//!   off the row meanwhile; if this process dies first, the row becomes due
//!   when the lease runs out, and any relay's scan publishes it.
//! - **Scanned.** Failure events, rows whose lease ran out and retries of
//!   unroutable events are claimed with `FOR UPDATE SKIP LOCKED` (so several
//!   relays never publish the same row at the same time) when the relay is
//!   woken without an event and at least every `outbox.poll_interval`.
//!
//! A handed-over row whose mark did not reach the database (a crash within
//! [`MARK_INTERVAL`] of the confirm) is published again once its lease runs
//! out: a duplicate, with the same event id.

pub mod committed;
mod publish;
mod relay;
pub mod table;

pub use committed::{Committed, Pending};
pub use relay::run;
pub use table::{enqueue, leased_until, prune, Publisher, HANDOVER_LEASE_SECS, MARK_INTERVAL};
