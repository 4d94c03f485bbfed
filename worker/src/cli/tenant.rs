//! The clap arguments of `chunk-worker tenant` (the command lives in
//! `commands::tenant`).

use clap::{Args, Subcommand};

const TENANT_HELP: &str = "\
Analysts read the chunk tables through row-level security: a role sees the
rows of the tenants granted to it (or to a role it belongs to), nothing of
other tenants, whatever query it writes, role it SETs or setting it changes.
Rows without a tenant and the replay log are for operators
(GRANT chunk_worker_operator TO bob;). See docs/security.md.

Settings are those of `chunk-worker run`: database.url, whose role needs
CREATEROLE to create a missing role (or superuser).

Examples:
  chunk-worker tenant grant --tenant acme-prod --role alice
  chunk-worker tenant revoke --tenant acme-prod --role alice
  chunk-worker tenant list --tenant acme-prod

Exit status:
  0  done (revoke: the grant was there)
  1  the database failed, or revoke found no such grant
  2  usage error or invalid settings";

/// `chunk-worker tenant ...`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = TENANT_HELP)]
pub struct TenantArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TenantCommand,
}

/// The `tenant` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum TenantCommand {
    /// Let a role read one tenant's rows: creates the role (LOGIN, no
    /// password) when missing and makes it a member of chunk_worker_analyst.
    #[command(after_long_help = TENANT_HELP)]
    Grant(GrantArgs),
    /// Take one tenant's rows away from a role (the role itself stays).
    #[command(after_long_help = TENANT_HELP)]
    Revoke(GrantArgs),
    /// List the grants: role, tenant, when, by whom.
    #[command(after_long_help = TENANT_HELP)]
    List(ListGrantsArgs),
}

/// A tenant and a role.
#[derive(Debug, Clone, Args)]
pub struct GrantArgs {
    /// The tenant id (^[a-z0-9-]{3,64}$).
    #[arg(long, value_name = "ID")]
    pub tenant: String,
    /// The database role (a login role, or a group role whose members get it).
    #[arg(long, value_name = "ROLE")]
    pub role: String,
}

/// Filters of `tenant list`.
#[derive(Debug, Clone, Args)]
pub struct ListGrantsArgs {
    /// Only this tenant's grants.
    #[arg(long, value_name = "ID")]
    pub tenant: Option<String>,
    /// Only this role's grants.
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
