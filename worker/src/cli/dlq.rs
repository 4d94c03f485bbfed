//! The clap arguments of `chunk-worker dlq` and the filters they carry
//! (the commands live in `commands::dlq`).

use clap::{Args, Subcommand};
use serde::Serialize;

const DLQ_HELP: &str = "\
Settings are those of `chunk-worker run` (config/default.toml,
config/$CHUNK_WORKER_ENV.toml, CHUNK_WORKER__<SECTION>__<KEY> variables):
amqp.urls (or amqp.url), topology.prefix and, for replay, database.url.

Examples:
  chunk-worker dlq list
  chunk-worker dlq list --error-code SOURCE_UNAVAILABLE --tenant acme-prod --json
  chunk-worker dlq show 6f1c0d2e-0b7a-4d61-9a55-1f0b8c2d9e41
  chunk-worker dlq replay --error-code SOURCE_UNAVAILABLE --dry-run
  chunk-worker dlq replay --error-code SOURCE_UNAVAILABLE --rate 20

Exit status:
  0  done (replay: every matching message was republished)
  1  some message could not be replayed, `show` found no such message, or
     the broker or database failed
  2  usage error or invalid settings";

/// `chunk-worker dlq ...`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = DLQ_HELP)]
pub struct DlqArgs {
    /// What to do with the dead-letter queue.
    #[command(subcommand)]
    pub command: DlqCommand,
}

/// The `dlq` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum DlqCommand {
    /// List dead-lettered messages (newest state of the queue; nothing is removed).
    #[command(after_long_help = DLQ_HELP)]
    List(ListArgs),
    /// Show one dead-lettered message: properties, headers and body.
    #[command(after_long_help = DLQ_HELP)]
    Show(ShowArgs),
    /// Republish dead-lettered messages to the input exchange (publish-confirm, then ack).
    #[command(after_long_help = DLQ_HELP)]
    Replay(ReplayArgs),
}

/// Which dead-lettered messages a command applies to.
#[derive(Debug, Clone, Default, Args, Serialize)]
pub struct Filters {
    /// Only messages with this error code (x-error-code), e.g. SOURCE_UNAVAILABLE.
    #[arg(long, value_name = "CODE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Only messages of this tenant (tenant_id of the body).
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only messages of this document (document_id of the body).
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

impl Filters {
    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        self.error_code.is_none() && self.tenant.is_none() && self.document.is_none()
    }
}

/// Options of `dlq list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Which messages.
    #[command(flatten)]
    pub filters: Filters,
    /// Show at most this many messages.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options of `dlq show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The message id (as `dlq list` prints it: the AMQP message id, else
    /// `sha256:` and the start of the body's sha256).
    #[arg(value_name = "ID")]
    pub id: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `dlq replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// Which messages.
    #[command(flatten)]
    pub filters: Filters,
    /// Replay every dead-lettered message (required when no filter is given).
    #[arg(long)]
    pub all: bool,
    /// List what would be replayed; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replay at most this many messages.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// At most this many messages per second (0: no limit).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 50.0)]
    pub rate: f64,
    /// Who replays, recorded in dlq_replays (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
}
