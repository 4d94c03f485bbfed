//! The end-to-end suite against the real RabbitMQ and Postgres, as one test
//! binary: one link instead of seventeen (issue 18's CI budget on 2 cores).
//! Each module is one concern; every test isolates itself (a fresh database
//! and a random exchange/queue prefix). The trace tests stay binaries of
//! their own (`tests/traces.rs`, `tests/traces_tls.rs`): the tracing
//! subscriber they install is process-global.

mod broker_nodes;
mod circuit;
mod cookbook;
mod deploy;
mod deploy_ops;
mod dlq;
mod granularities;
mod html;
mod links;
mod migrations;
mod ops_metrics;
mod profiles;
mod semantic;
mod store_group;
mod store_paths;
mod tenant_isolation;
mod tls;
mod worker_failures;
mod worker_flow;
mod worker_operations;
mod worker_races;
