//! Postgres: the pool, database creation, migrations, and the writes of
//! [`versions`] (one transaction per source version) and [`failures`].

pub mod dlq_replays;
pub mod failures;
pub mod links;
pub mod migrations;
pub mod tenants;
pub mod versions;

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};

use crate::config::DatabaseSettings;

/// The migrations of `migrations/`, compiled in.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// A pooled connection idle for at least this long is pinged before it is
/// handed out; one returned more recently is handed out as it is.
const PING_WHEN_IDLE_FOR: Duration = Duration::from_secs(10);

/// A pool that connects lazily: start-up and `/readyz` decide when the
/// database must be reachable, not pool construction.
///
/// sqlx pings every connection it hands out by default: a round trip (and
/// a wake-up of the server's backend) before every query of a busy worker,
/// on top of the ping with which the pool checks every connection given
/// back. Here only a connection idle for [`PING_WHEN_IDLE_FOR`] is pinged
/// (the one that may have been cut off while nobody used it); one that
/// breaks in between fails its query with an I/O error, which is transient:
/// the message is retried.
pub fn pool(settings: &DatabaseSettings) -> PgPool {
    PgPoolOptions::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(settings.acquire_timeout)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if needs_ping(meta.idle_for) {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .connect_lazy_with(settings.options.clone())
}

/// Whether a connection idle for `idle_for` is pinged before use.
fn needs_ping(idle_for: Duration) -> bool {
    idle_for >= PING_WHEN_IDLE_FOR
}

/// Creates the database named by `settings` when it does not exist, by
/// connecting to the `postgres` maintenance database of the same server.
pub async fn ensure_database(settings: &DatabaseSettings) -> Result<(), sqlx::Error> {
    let (name, mut conn) = maintenance_connection(settings).await?;
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut conn)
        .await?;
    if exists.is_none() {
        let sql = format!("CREATE DATABASE {}", quote_ident(&name));
        match sqlx::query(&sql).execute(&mut conn).await {
            Ok(_) => tracing::info!(database = %name, "created database"),
            // Another worker created it between our check and our create.
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => {}
            Err(e) => return Err(e),
        }
    }
    conn.close().await
}

/// Drops the database named by `settings` (if it exists), closing other
/// sessions on it first; the counterpart of [`ensure_database`] for the
/// throwaway databases of `chunk-worker bench`.
pub async fn drop_database(settings: &DatabaseSettings) -> Result<(), sqlx::Error> {
    let (name, mut conn) = maintenance_connection(settings).await?;
    let sql = format!(
        "DROP DATABASE IF EXISTS {} WITH (FORCE)",
        quote_ident(&name)
    );
    sqlx::query(&sql).execute(&mut conn).await?;
    conn.close().await
}

/// The configured database's name and a connection to the `postgres`
/// maintenance database of the same server (a database cannot be created or
/// dropped from a connection to itself).
async fn maintenance_connection(
    settings: &DatabaseSettings,
) -> Result<(String, PgConnection), sqlx::Error> {
    let name = settings
        .options
        .get_database()
        .unwrap_or("postgres")
        .to_owned();
    let admin_options: PgConnectOptions = settings.options.clone().database("postgres");
    Ok((name, admin_options.connect().await?))
}

/// The array parameters of an `UNNEST` over `columns` (name, element type),
/// numbered from `first`: `$first::t1[], $(first + 1)::t2[], ...`.
pub(crate) fn unnest_params(columns: &[(&str, &str)], first: usize) -> String {
    let params: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| format!("${}::{ty}[]", first + i))
        .collect();
    params.join(", ")
}

/// `"name"` with embedded quotes doubled.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Whether a database error is worth retrying (the server or the network is
/// down, a connection was lost, a serialization conflict) rather than a bug
/// or bad data that will fail the same way again.
pub fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exception; 40: serialization failure/deadlock;
            // 53: insufficient resources; 57: operator intervention (admin
            // shutdown, cannot connect now); 58: system error.
            ["08", "40", "53", "57", "58"]
                .iter()
                .any(|class| code.starts_with(class))
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_connection_idle_for_a_while_is_pinged() {
        assert!(!needs_ping(Duration::ZERO));
        assert!(!needs_ping(Duration::from_millis(9_999)));
        assert!(needs_ping(PING_WHEN_IDLE_FOR));
        assert!(needs_ping(Duration::from_secs(3600)));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("cw_test"), "\"cw_test\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn lost_connections_are_transient_and_decode_errors_are_not() {
        assert!(is_transient(&sqlx::Error::PoolTimedOut));
        assert!(is_transient(&sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset
        ))));
        assert!(!is_transient(&sqlx::Error::RowNotFound));
    }
}
