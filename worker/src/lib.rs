//! chunk-worker: the I/O shell around the pure `shared` chunking engine.
//!
//! Data flows one way: message -> chunk -> store -> event.

// Offline command line (chunk, normalize).
pub mod cli;
pub mod offline;

// Queue worker modules are declared below this line.
pub mod amqp;
pub mod clock;
pub mod config;
pub mod context;
pub mod demo;
pub mod dlq;
pub mod exit;
pub mod failure;
pub mod handler;
pub mod http;
pub mod inprocess;
pub mod loadtest;
pub mod metrics;
pub mod ops_metrics;
pub mod outbox;
pub mod profiles;
pub mod scrub;
pub mod service;
pub mod source;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod trace;
