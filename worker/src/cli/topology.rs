//! The clap arguments of `chunk-worker topology` (the command lives in
//! `commands::topology`).

use clap::{Args, Subcommand};

const TOPOLOGY_HELP: &str = "\
Settings are those of `chunk-worker run`: amqp.urls (or amqp.url),
topology.prefix, amqp.delivery_limit, amqp.retry_delay_ms. The first node of
amqp.urls that answers is used.

Every queue the worker declares is a quorum queue (RabbitMQ 3.10 or later).
A worker from before that declared the retry queue as a classic queue; a
newer worker then stops at start-up naming `topology migrate-retry`. Stop
every worker, run it, start the workers again.

Examples:
  chunk-worker topology declare
  chunk-worker topology migrate-retry

Exit status:
  0  done
  1  the broker failed or refused a declaration
  2  invalid settings";

/// `chunk-worker topology ...`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = TOPOLOGY_HELP)]
pub struct TopologyArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TopologyCommand,
}

/// The `topology` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum TopologyCommand {
    /// Declare the exchanges, queues and bindings (idempotent), as the
    /// worker does at start-up.
    #[command(after_long_help = TOPOLOGY_HELP)]
    Declare,
    /// Replace a classic retry queue (from an older worker) by the quorum
    /// retry queue: its messages go to the requests queue (retried now
    /// rather than after their delay), then the classic queue is deleted
    /// and the quorum queue declared. Stop the workers first.
    #[command(after_long_help = TOPOLOGY_HELP)]
    MigrateRetry,
}
