//! Opening a connection to one broker node (TLS, client certificate).

use lapin::tcp::{OwnedIdentity, OwnedTLSConfig};
use lapin::{types::LongString, Connection, ConnectionProperties};
use secrecy::ExposeSecret;

use crate::config::{AmqpSettings, BrokerNode};

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
