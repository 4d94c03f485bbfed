//! chunk-worker: the I/O shell around the pure `shared` chunking engine.
//!
//! Data flows one way: message -> chunk -> store -> event. The folders are
//! the architecture (ARCHITECTURE.md has the map):
//!
//! - [`commands`]: one entry per subcommand (offline chunk/normalize/
//!   profiles/links/eval, the service commands run/migrate/demo/bench, dlq);
//! - [`pipeline`]: one message through the worker: consume, handle (read the
//!   source, chunk), settle (ack, retry, dead-letter);
//! - [`store`]: every SQL statement (versions, links, failures, dlq replays);
//! - [`outbox`]: the relay that publishes committed events;
//! - [`amqp`]: broker plumbing (connection, topology, publisher, headers);
//! - [`api`]: the synchronous chunking API (`POST /v1/chunk`);
//! - [`breaker`]: circuit breakers per strategy, shared by the API and the
//!   consumer;
//! - [`ops`]: health and metrics endpoints, telemetry, traces;
//! - [`config`], [`profiles`]: settings and the chunking engine they build.

pub mod amqp;
pub mod api;
pub mod breaker;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod context;
pub mod exit;
pub mod llm;
pub mod ops;
pub mod outbox;
pub mod pipeline;
pub mod profiles;
pub mod scrub;
pub mod semantic;
pub mod startup;
pub mod store;
