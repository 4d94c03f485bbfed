//! RabbitMQ plumbing: connections to the configured nodes with failover
//! ([`nodes`]), the docs/contract.md#topology topology, a confirming publisher and the
//! consumer supervisor.

pub mod headers;
pub mod nodes;
pub mod publisher;
pub mod topology;

use lapin::tcp::{OwnedIdentity, OwnedTLSConfig};
use lapin::{types::LongString, Connection, ConnectionProperties};
use secrecy::ExposeSecret;

use crate::config::{AmqpSettings, BrokerNode};

pub use nodes::{ConnectError, Connected, Failover};

/// Opens a connection to the first node of `amqp.urls` that answers (the
/// one-shot tools: `dlq`, `topology`, the demo and the bench).
pub async fn connect(settings: &AmqpSettings, name: &str) -> Result<Connection, ConnectError> {
    let connected = Failover::new(settings.nodes.len())
        .connect(settings, name)
        .await?;
    tracing::debug!(node = %connected.label, connection = name, "connected to the broker");
    Ok(connected.connection)
}

/// Opens a connection to `node`, driven by the current tokio runtime;
/// `amqps://` verifies the broker's certificate (against `amqp.tls_ca_file`,
/// else the system's roots) and host name, and presents the client
/// certificate when one is configured.
pub async fn connect_node(
    settings: &AmqpSettings,
    node: &BrokerNode,
    name: &str,
) -> lapin::Result<Connection> {
    let props = ConnectionProperties::default()
        .with_connection_name(LongString::from(name.to_owned()))
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio::current());
    let tls = OwnedTLSConfig {
        identity: match (&settings.tls.cert_pem, &settings.tls.key_pem) {
            (Some(cert), Some(key)) => Some(OwnedIdentity::PKCS8 {
                pem: cert.as_bytes().to_vec(),
                key: key.expose_secret().as_bytes().to_vec(),
            }),
            _ => None,
        },
        cert_chain: settings.tls.ca_pem.clone(),
    };
    Connection::connect_with_config(node.url.expose_secret(), props, tls).await
}
