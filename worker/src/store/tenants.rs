//! Tenant grants for row-level security (migration 0008): which database
//! roles may read which tenant's rows. `chunk-worker tenant grant` creates a
//! missing login role, makes it a member of `chunk_worker_analyst` (read
//! rights on the tables and views) and records the grant; the policies do the
//! rest. Role names are quoted as identifiers, never spliced raw.

use sqlx::{PgPool, Row};

use super::quote_ident;

/// The tenant id format of docs/contract.md#input-message.
pub fn valid_tenant(tenant: &str) -> bool {
    (3..=64).contains(&tenant.len())
        && tenant
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A role name Postgres accepts (1-63 bytes, no NUL).
pub fn valid_role(role: &str) -> bool {
    (1..=63).contains(&role.len()) && !role.contains('\0')
}

/// What [`grant`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantOutcome {
    /// The role did not exist and was created (LOGIN, no password).
    pub created_role: bool,
    /// The role was not yet a member of `chunk_worker_analyst`.
    pub added_to_analysts: bool,
    /// The grant is new (false: it was already there).
    pub new_grant: bool,
}

/// One row of `tenant_grants`, with the role's name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Grant {
    /// The role's name (`#<oid>` once the role was dropped).
    pub role: String,
    /// The tenant.
    pub tenant_id: String,
    /// When (RFC 3339).
    pub granted_at: String,
    /// Who granted it.
    pub granted_by: String,
}

/// Lets `role` (and its members) read `tenant`'s rows, in one transaction:
/// the role is created when missing and made a member of the analyst role.
pub async fn grant(pool: &PgPool, tenant: &str, role: &str) -> Result<GrantOutcome, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_roles WHERE rolname = $1")
        .bind(role)
        .fetch_optional(&mut *tx)
        .await?;
    let created_role = exists.is_none();
    if created_role {
        sqlx::query(&format!("CREATE ROLE {} LOGIN", quote_ident(role)))
            .execute(&mut *tx)
            .await?;
    }
    let member: bool =
        sqlx::query_scalar("SELECT pg_has_role($1::name, 'chunk_worker_analyst', 'MEMBER')")
            .bind(role)
            .fetch_one(&mut *tx)
            .await?;
    if !member {
        sqlx::query(&format!(
            "GRANT chunk_worker_analyst TO {}",
            quote_ident(role)
        ))
        .execute(&mut *tx)
        .await?;
    }
    let inserted = sqlx::query(
        "INSERT INTO tenant_grants (role_oid, tenant_id) \
         SELECT oid, $2 FROM pg_roles WHERE rolname = $1 \
         ON CONFLICT DO NOTHING",
    )
    .bind(role)
    .bind(tenant)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(GrantOutcome {
        created_role,
        added_to_analysts: !member,
        new_grant: inserted == 1,
    })
}

/// Removes the grant of `tenant` to `role`; returns whether there was one.
/// The role and its analyst membership stay (without grants it sees no
/// tenant's rows).
pub async fn revoke(pool: &PgPool, tenant: &str, role: &str) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query(
        "DELETE FROM tenant_grants g USING pg_roles r \
         WHERE r.oid = g.role_oid AND r.rolname = $1 AND g.tenant_id = $2",
    )
    .bind(role)
    .bind(tenant)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(deleted > 0)
}

/// Every grant (that the connecting role may see), by role then tenant;
/// optionally only one tenant's or one role's.
pub async fn list(
    pool: &PgPool,
    tenant: Option<&str>,
    role: Option<&str>,
) -> Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT coalesce(r.rolname::text, '#' || g.role_oid::text) AS role, g.tenant_id, \
                to_char(g.granted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS granted_at, \
                g.granted_by \
         FROM tenant_grants g LEFT JOIN pg_roles r ON r.oid = g.role_oid \
         WHERE ($1::text IS NULL OR g.tenant_id = $1) AND ($2::text IS NULL OR r.rolname = $2) \
         ORDER BY 1, 2",
    )
    .bind(tenant)
    .bind(role)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Grant {
            role: r.get("role"),
            tenant_id: r.get("tenant_id"),
            granted_at: r.get("granted_at"),
            granted_by: r.get("granted_by"),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_and_role_names_are_checked() {
        assert!(valid_tenant("acme-prod"));
        assert!(!valid_tenant("ac"));
        assert!(!valid_tenant("Acme"));
        assert!(!valid_tenant("acme'; DROP TABLE chunks; --"));
        assert!(valid_role("alice"));
        assert!(valid_role("Alice \"the analyst\""));
        assert!(!valid_role(""));
        assert!(!valid_role(&"a".repeat(64)));
    }
}
