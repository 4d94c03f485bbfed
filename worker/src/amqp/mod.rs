//! RabbitMQ plumbing: connections to the configured nodes with failover
//! ([`nodes`]), the docs/contract.md#topology topology, a confirming publisher and the
//! consumer supervisor.

pub mod headers;
pub mod nodes;
mod open;
pub mod publisher;
pub mod topology;

use lapin::Connection;

use crate::config::AmqpSettings;

pub use nodes::{ConnectError, Connected, Failover};
pub use open::connect_node;

/// Opens a connection to the first node of `amqp.urls` that answers (the
/// one-shot tools: `dlq`, `topology`, the demo and the bench).
pub async fn connect(settings: &AmqpSettings, name: &str) -> Result<Connection, ConnectError> {
    let connected = Failover::new(settings.nodes.len())
        .connect(settings, name)
        .await?;
    tracing::debug!(node = %connected.label, connection = name, "connected to the broker");
    Ok(connected.connection)
}
