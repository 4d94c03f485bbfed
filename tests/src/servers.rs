//! The shared RabbitMQ and Postgres servers: their addresses, connecting,
//! and creating and dropping a test's database.

use lapin::options::ConfirmSelectOptions;
use lapin::{Channel, Connection, ConnectionProperties};
use sqlx::{Connection as _, PgConnection};

/// The shared test servers.
pub const AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
/// Postgres server URL without a database.
pub const PG_SERVER: &str = "postgres://postgres@127.0.0.1:5432";
/// The Postgres server address (for proxies).
pub const PG_ADDR: &str = "127.0.0.1:5432";
/// The RabbitMQ server address (for proxies).
pub const AMQP_ADDR: &str = "127.0.0.1:5672";

/// Opens an AMQP connection on the current runtime.
pub async fn amqp_connect(url: &str) -> lapin::Result<Connection> {
    Connection::connect(
        url,
        ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio::current()),
    )
    .await
}

/// A connection to the shared broker and a channel on it with publisher
/// confirms on (a test's own view of the broker: declaring its topology,
/// publishing and reading its queues). Keep the connection alive as long
/// as the channel is used.
pub async fn confirmed_channel() -> anyhow::Result<(Connection, Channel)> {
    let conn = amqp_connect(AMQP_URL).await?;
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    Ok((conn, channel))
}

/// Creates a database on the shared server.
pub async fn create_database(name: &str) -> anyhow::Result<()> {
    let mut conn = PgConnection::connect(&format!("{PG_SERVER}/postgres")).await?;
    sqlx::query(&format!("CREATE DATABASE \"{name}\""))
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    Ok(())
}

/// Drops a database on the shared server (best effort, forcing sessions out).
pub async fn drop_database(name: &str) {
    if let Ok(mut conn) = PgConnection::connect(&format!("{PG_SERVER}/postgres")).await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .execute(&mut conn)
            .await;
        let _ = conn.close().await;
    }
}
