//! `chunk-worker tenant grant|revoke|list`: who may read which tenant's rows
//! (row-level security, migration 0008; the SQL is in `store::tenants`).

use std::io::Write;

use anyhow::Context as _;

use crate::cli::tenant::{TenantArgs, TenantCommand};
use crate::config::Settings;
use crate::exit;
use crate::store::tenants::{self, valid_role, valid_tenant};

/// Runs a `tenant` subcommand; returns the exit status.
pub fn run(args: &TenantArgs) -> u8 {
    if let Err(message) = check(&args.command) {
        eprintln!("error: {message}");
        return exit::USAGE;
    }
    crate::commands::service::tool(1, |settings| async move {
        execute(&settings, &args.command).await
    })
}

fn check(command: &TenantCommand) -> Result<(), String> {
    let (tenant, role) = match command {
        TenantCommand::Grant(a) | TenantCommand::Revoke(a) => (Some(&a.tenant), Some(&a.role)),
        TenantCommand::List(a) => (a.tenant.as_ref(), a.role.as_ref()),
    };
    if let Some(t) = tenant.filter(|t| !valid_tenant(t)) {
        return Err(format!(
            "--tenant {t:?} is not a tenant id (3-64 of a-z, 0-9 and -)"
        ));
    }
    if let Some(r) = role.filter(|r| !valid_role(r)) {
        return Err(format!("--role {r:?} is not a role name (1-63 bytes)"));
    }
    Ok(())
}

async fn execute(settings: &Settings, command: &TenantCommand) -> anyhow::Result<u8> {
    let pool = crate::store::pool(&settings.database);
    let hint = "database.url; has `chunk-worker migrate` run, and may its role create roles?";
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match command {
        TenantCommand::Grant(a) => {
            let o = tenants::grant(&pool, &a.tenant, &a.role)
                .await
                .context(hint)?;
            if o.created_role {
                writeln!(
                    out,
                    "created login role {} (no password: ALTER ROLE ... PASSWORD '...' where logins need one)",
                    a.role
                )?;
            }
            if o.added_to_analysts {
                writeln!(out, "{} is now a member of chunk_worker_analyst", a.role)?;
            }
            if o.new_grant {
                writeln!(out, "granted tenant {} to {}", a.tenant, a.role)?;
            } else {
                writeln!(out, "{} already had tenant {}", a.role, a.tenant)?;
            }
            exit::SUCCESS
        }
        TenantCommand::Revoke(a) => {
            if tenants::revoke(&pool, &a.tenant, &a.role)
                .await
                .context(hint)?
            {
                writeln!(out, "revoked tenant {} from {}", a.tenant, a.role)?;
                exit::SUCCESS
            } else {
                eprintln!("error: {} has no grant of tenant {}", a.role, a.tenant);
                exit::FAILED
            }
        }
        TenantCommand::List(a) => {
            let grants = tenants::list(&pool, a.tenant.as_deref(), a.role.as_deref())
                .await
                .context(hint)?;
            if a.json {
                serde_json::to_writer_pretty(&mut out, &grants)?;
                writeln!(out)?;
            } else {
                let width = grants
                    .iter()
                    .map(|g| g.role.len())
                    .max()
                    .unwrap_or(4)
                    .max(4);
                writeln!(
                    out,
                    "{:width$}  {:24}  {:20}  GRANTED BY",
                    "ROLE", "TENANT", "GRANTED AT"
                )?;
                for g in &grants {
                    writeln!(
                        out,
                        "{:width$}  {:24}  {:20}  {}",
                        g.role, g.tenant_id, g.granted_at, g.granted_by
                    )?;
                }
            }
            exit::SUCCESS
        }
    };
    pool.close().await;
    Ok(code)
}
