//! The schema's migrations and the worker's role.
//!
//! `chunk-worker migrate` (and start-up, when a migration is pending) runs
//! the compiled-in migrations; a worker whose schema is current runs none,
//! so it needs no right to change the schema. Then the role the worker runs
//! as must be a member of `chunk_worker_service`, the role whose row-level
//! security policy lets it read and write every tenant's rows: the role
//! named by `database.service_role`, or the one that connects. `migrate` run
//! by an administrator grants it; a worker that finds its own role outside
//! stops with the command that fixes it, instead of storing into tables that
//! hide every row from it.

use sqlx::PgPool;

use super::{quote_ident, MIGRATOR};

/// The role whose policy lets the worker through row-level security.
pub const SERVICE_ROLE: &str = "chunk_worker_service";

/// The versions of the compiled-in migrations the database has not applied
/// (all of them when it has none).
pub async fn pending(pool: &PgPool) -> Result<Vec<i64>, sqlx::Error> {
    let table: Option<String> = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
        .fetch_one(pool)
        .await?;
    let applied: Vec<i64> = if table.is_some() {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(pool)
            .await?
    } else {
        Vec::new()
    };
    Ok(MIGRATOR
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .map(|m| m.version)
        .filter(|v| !applied.contains(v))
        .collect())
}

/// Migrations whose files were reworded after release, in comments only
/// (no schema change): each version with the SHA-384 checksum databases
/// recorded when they applied the old text. sqlx refuses a migration whose
/// file changed; [`run`] first replaces exactly these recorded checksums by
/// the new files' own, so an existing database migrates on. Any other
/// change to an applied migration is still refused.
const REWORDED: [(i64, &str); 4] = [
    (
        1,
        "c362674927b512cff97c9f278635c319ea6a42d836bd9cf1f8ebfeb8d3fcc4cf3583435a853bc995ad1958d35c8f9214",
    ),
    (
        2,
        "65af46cd0d4022980937c176dd44d278259c82e221b50c93cccb84dc4f0b6e683d75a39f3818bb37fb3ed18295655e48",
    ),
    (
        3,
        "7e352569c5189f1193d3bda61cca89e857d691af2d3b84bbab908d26f2c3bf4e05b844ea4afdaceab51d81a4271a52b0",
    ),
    (
        9,
        "3912f9100cdbfd62dd8373b189eef4a99a058054351de77afdde8fe7ddfde6a4cf51caed07c1d69a0ca98116ead1bb65",
    ),
];

/// Bytes of a hex string (the constants above; `None` if malformed).
fn unhex(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect()
}

/// Records the reworded migrations' new checksums where a database holds
/// their old ones; returns how many rows changed.
pub async fn accept_reworded(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let table: Option<String> = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
        .fetch_one(pool)
        .await?;
    if table.is_none() {
        return Ok(0);
    }
    let mut changed = 0;
    for (version, old) in REWORDED {
        let (Some(m), Some(old)) = (MIGRATOR.iter().find(|m| m.version == version), unhex(old))
        else {
            continue;
        };
        changed += sqlx::query(
            "UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2 AND checksum = $3",
        )
        .bind(m.checksum.as_ref())
        .bind(version)
        .bind(old)
        .execute(pool)
        .await?
        .rows_affected();
    }
    Ok(changed)
}

/// Runs the pending migrations (after [`accept_reworded`]).
pub async fn run(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    accept_reworded(pool).await?;
    MIGRATOR.run(pool).await
}

/// Why the worker's role cannot go through the service policy.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    /// `database.service_role` names a role the server does not have.
    #[error("database.service_role names the role {0:?}, which does not exist on this server")]
    Missing(String),
    /// The role is not a member and this connection may not make it one.
    #[error(
        "the role {role:?} is not a member of {SERVICE_ROLE}, so row-level security would hide every row from the worker, \
         and this connection (as {connected:?}) may not grant it: run `chunk-worker migrate` as the database's owner \
         with database.service_role = {role:?} (CHUNK_WORKER__DATABASE__SERVICE_ROLE={role}), \
         or `GRANT {SERVICE_ROLE} TO {quoted}` ({reason})"
    )]
    NotMember {
        /// The worker's role.
        role: String,
        /// The role of this connection.
        connected: String,
        /// `role`, quoted for SQL.
        quoted: String,
        /// The server's refusal.
        reason: String,
    },
    /// The server failed otherwise.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Makes `role` (by default the connecting role) a member of
/// [`SERVICE_ROLE`] when it is not one; a superuser or a role that bypasses
/// row-level security needs nothing. Returns whether a grant was made.
pub async fn ensure_service_role(pool: &PgPool, role: Option<&str>) -> Result<bool, RoleError> {
    let connected: String = sqlx::query_scalar("SELECT current_user::text")
        .fetch_one(pool)
        .await?;
    let role = role.map_or_else(|| connected.clone(), str::to_owned);
    let bypasses: Option<bool> =
        sqlx::query_scalar("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = $1")
            .bind(&role)
            .fetch_optional(pool)
            .await?;
    match bypasses {
        None => return Err(RoleError::Missing(role)),
        Some(true) => return Ok(false),
        Some(false) => {}
    }
    let member: bool = sqlx::query_scalar("SELECT pg_has_role($1, $2, 'MEMBER')")
        .bind(&role)
        .bind(SERVICE_ROLE)
        .fetch_one(pool)
        .await?;
    if member {
        return Ok(false);
    }
    let quoted = quote_ident(&role);
    match sqlx::query(&format!("GRANT {SERVICE_ROLE} TO {quoted}"))
        .execute(pool)
        .await
    {
        Ok(_) => {
            tracing::info!(role = %role, "granted {SERVICE_ROLE} to the worker's role");
            Ok(true)
        }
        Err(sqlx::Error::Database(e)) => Err(RoleError::NotMember {
            role,
            connected,
            quoted,
            reason: e.message().to_owned(),
        }),
        Err(e) => Err(e.into()),
    }
}
