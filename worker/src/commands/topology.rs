//! `chunk-worker topology declare|migrate-retry`: the broker topology
//! ([`crate::amqp::topology`]) declared by hand, and the switch-over of a
//! retry queue that an older worker declared as a classic queue.
//!
//! The switch-over, with the workers stopped:
//! 1. the exchanges and the requests and dead-letter queues are declared
//!    (unchanged: they were quorum queues already);
//! 2. declaring the quorum retry queue is tried: when it succeeds there was
//!    nothing to migrate; when the queue is not the classic queue of an
//!    older worker (another TTL on a quorum queue, say), the broker's
//!    refusal is the error;
//! 3. otherwise every message of the classic retry queue is republished to
//!    the requests queue (confirmed, headers and properties kept), then
//!    acked: a parked message is retried now rather than after the rest of
//!    its delay, which changes nothing but its timing (storing is
//!    idempotent; one republished twice after a crash is stored once);
//! 4. the classic queue is deleted only if empty and unused (else step 3
//!    again), and the quorum retry queue declared.

use anyhow::Context as _;
use lapin::options::{BasicAckOptions, BasicGetOptions, QueueDeleteOptions};
use lapin::Connection;

use crate::amqp::publisher::{PublishError, Publisher};
use crate::amqp::topology::{Topology, TopologyError};
use crate::cli::topology::{TopologyArgs, TopologyCommand};
use crate::config::{AmqpSettings, Settings};
use crate::exit;

/// How often the drain-then-delete of step 3-4 is tried before giving up
/// (something keeps publishing to the classic queue: a worker still runs).
const MIGRATE_ROUNDS: usize = 10;

/// Why a migration stopped.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A declaration was refused.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The channel or connection failed.
    #[error("broker error: {0}")]
    Amqp(#[from] lapin::Error),
    /// A message could not be republished to the requests queue.
    #[error("republishing a retry message: {0}")]
    Publish(#[from] PublishError),
    /// The classic queue kept receiving messages or has a consumer.
    #[error(
        "the classic retry queue {queue} is still in use after {MIGRATE_ROUNDS} rounds (is a \
         worker still running?); stop every worker and run the command again"
    )]
    InUse {
        /// The retry queue.
        queue: String,
    },
}

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Whether the retry queue was a classic queue.
    pub was_classic: bool,
    /// Messages moved from it to the requests queue.
    pub moved: u64,
}

/// Runs a `topology` subcommand; returns the exit status.
pub fn run(args: &TopologyArgs) -> u8 {
    crate::commands::service::tool(1, |settings| async move {
        execute(&settings, &args.command).await
    })
}

async fn execute(settings: &Settings, command: &TopologyCommand) -> anyhow::Result<u8> {
    let topology = Topology::new(settings.topology_prefix.clone());
    let conn = crate::amqp::connect(&settings.amqp, "chunk-worker topology")
        .await
        .context("connecting to the broker (amqp.urls)")?;
    let result = match command {
        TopologyCommand::Declare => {
            topology
                .declare_on(
                    &conn,
                    settings.amqp.delivery_limit,
                    settings.amqp.retry_delay,
                )
                .await?;
            println!(
                "declared {}, {} and the quorum queues {}, {}, {}",
                topology.events_exchange(),
                topology.dead_letter_exchange(),
                topology.requests_queue(),
                topology.failed_queue(),
                topology.retry_queue()
            );
            Ok(())
        }
        TopologyCommand::MigrateRetry => {
            let m = migrate_retry(&conn, &settings.amqp, &topology).await?;
            if m.was_classic {
                println!(
                    "moved {} message(s) from the classic retry queue to {}; {} is now a quorum queue",
                    m.moved,
                    topology.requests_queue(),
                    topology.retry_queue()
                );
            } else {
                println!(
                    "{} is a quorum queue already: nothing to migrate",
                    topology.retry_queue()
                );
            }
            Ok(())
        }
    };
    let _ = conn.close(200, "topology done").await;
    result.map(|()| exit::SUCCESS)
}

/// Replaces a classic retry queue by the quorum retry queue (see the module
/// documentation); a quorum retry queue is left as it is.
pub async fn migrate_retry(
    conn: &Connection,
    amqp: &AmqpSettings,
    topology: &Topology,
) -> Result<Migration, MigrateError> {
    match topology
        .declare_on(conn, amqp.delivery_limit, amqp.retry_delay)
        .await
    {
        Ok(()) => {
            return Ok(Migration {
                was_classic: false,
                moved: 0,
            })
        }
        Err(TopologyError::ClassicRetryQueue { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let queue = topology.retry_queue();
    let requests = topology.requests_queue();
    let publisher = Publisher::open(conn).await?;
    let mut moved = 0;
    let mut deleted = false;
    for _ in 0..MIGRATE_ROUNDS {
        let channel = conn.create_channel().await?;
        while let Some(got) = channel
            .basic_get(&queue, BasicGetOptions { no_ack: false })
            .await?
        {
            let delivery = got.delivery;
            publisher
                .publish("", &requests, &delivery.data, delivery.properties.clone())
                .await?;
            delivery.ack(BasicAckOptions::default()).await?;
            moved += 1;
        }
        let options = QueueDeleteOptions {
            if_unused: true,
            if_empty: true,
            ..QueueDeleteOptions::default()
        };
        match channel.queue_delete(&queue, options).await {
            Ok(_) => {
                let _ = channel.close(200, "retry queue deleted").await;
                deleted = true;
                break;
            }
            // Not empty or not unused: the broker closed the channel.
            Err(e) if e.is_amqp_soft_error() => {
                tracing::info!(error = %e, "the classic retry queue is not empty yet; draining again");
            }
            Err(e) => return Err(e.into()),
        }
    }
    if !deleted {
        return Err(MigrateError::InUse { queue });
    }
    topology
        .declare_on(conn, amqp.delivery_limit, amqp.retry_delay)
        .await?;
    Ok(Migration {
        was_classic: true,
        moved,
    })
}
