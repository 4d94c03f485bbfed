//! RabbitMQ plumbing: connections, the SPEC 2.4 topology, a confirming
//! publisher and the consumer supervisor.

pub mod headers;
pub mod publisher;
pub mod topology;

use lapin::{types::LongString, Connection, ConnectionProperties};

/// Opens a connection driven by the current tokio runtime.
pub async fn connect(url: &str, name: &str) -> lapin::Result<Connection> {
    let props = ConnectionProperties::default()
        .with_connection_name(LongString::from(name.to_owned()))
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio::current());
    Connection::connect(url, props).await
}
