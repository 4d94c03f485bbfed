//! Row-level security (issue 15 item 1), proved with real login roles on a
//! database the worker filled: an analyst granted tenant A sees every row of
//! A and none of B in every table and view, through the cookbook of docs/sql.md
//! queries too, whatever role they SET or setting they change; a group grant
//! reaches its members; rows without a tenant and the replay log are for
//! operators; the worker (a member of chunk_worker_service) writes as before.

use serde_json::json;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection, Row};
use tests::cookbook::{cookbook, fill};
use tests::{message, TestApp};
use worker::store::tenants;

type R = anyhow::Result<()>;

/// Every table and view that holds tenant data, and whether it has a tenant
/// column to compare with.
const RELATIONS: [&str; 10] = [
    "documents",
    "source_versions",
    "chunks",
    "document_links",
    "cross_links",
    "chunking_failures",
    "outbox",
    "current_chunks",
    "document_overview",
    "failure_summary",
];

/// Roles are cluster-wide: every role of a run has the run's suffix and is
/// dropped at the end.
struct Roles {
    names: Vec<String>,
}

impl Roles {
    async fn drop_all(&self, conn: &mut PgConnection) {
        for name in &self.names {
            let _ = sqlx::query(&format!("DROP ROLE IF EXISTS {}", quote(name)))
                .execute(&mut *conn)
                .await;
        }
    }
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

async fn login(app: &TestApp, role: &str) -> anyhow::Result<PgConnection> {
    let options: PgConnectOptions = app.settings.database.options.clone().username(role);
    Ok(options.connect().await?)
}

async fn count(conn: &mut PgConnection, sql: &str) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(sql).fetch_one(conn).await?)
}

/// Rows of `relation` as the connected role, and how many name another tenant
/// than `tenant` (or none).
async fn seen(conn: &mut PgConnection, relation: &str, tenant: &str) -> anyhow::Result<(i64, i64)> {
    let all = count(conn, &format!("SELECT count(*) FROM {relation}")).await?;
    let foreign = count(
        conn,
        &format!("SELECT count(*) FROM {relation} WHERE tenant_id IS DISTINCT FROM '{tenant}'"),
    )
    .await?;
    Ok((all, foreign))
}

/// Two more documents per tenant with links, so that document_links and
/// cross_links hold rows of both tenants, and a failure of beta-corp.
async fn fill_links(app: &TestApp) -> R {
    for tenant in ["acme-prod", "beta-corp"] {
        let mut target = message(
            tenant,
            &format!("{tenant}-target"),
            "v1",
            "# Target\n\nThe page others link to.\n",
        );
        target["metadata"] = json!({"title": "Target", "page_id": "4242", "space_key": "ENG",
            "source_url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/4242/Target"});
        app.publish_json(&target).await?;
        app.wait_stored(&format!("{tenant}-target"), "v1").await?;
        let source = message(
            tenant,
            &format!("{tenant}-source"),
            "v1",
            "# Source\n\nSee [the target](https://acme.atlassian.net/wiki/spaces/ENG/pages/4242/Target) \
             and [the web](https://example.com/x).\n",
        );
        app.publish_json(&source).await?;
        app.wait_stored(&format!("{tenant}-source"), "v1").await?;
    }
    // A failure of beta-corp too (fill's are acme-prod's and one without a tenant).
    let mut missing = message("beta-corp", "b-missing", "v1", "");
    if let Some(obj) = missing.as_object_mut() {
        obj.remove("markdown");
        let uri = format!("file://{}/missing.md", app.source_root.display());
        obj.insert("markdown_uri".into(), json!(uri));
        obj.insert("source_type".into(), json!("file"));
    }
    app.publish_json(&missing).await?;
    tests::eventually("the beta-corp failure", tests::DEADLINE, || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM chunking_failures WHERE tenant_id = 'beta-corp'",
        )
        .fetch_one(&app.pool)
        .await?;
        Ok((n == 1).then_some(()))
    })
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysts_see_their_tenants_rows_and_nothing_else() -> R {
    let app = TestApp::spawn().await?;
    fill(&app).await?;
    fill_links(&app).await?;
    let suffix = tests::random_suffix();
    let alice = format!("cw_alice_{suffix}");
    let bob = format!("cw_bob_{suffix}");
    let carol = format!("cw_carol_{suffix}");
    let team = format!("cw_team_{suffix}");
    let dave = format!("cw_dave_{suffix}");
    let olga = format!("cw_olga_{suffix}");
    let roles = Roles {
        names: vec![
            alice.clone(),
            bob.clone(),
            carol.clone(),
            team.clone(),
            dave.clone(),
            olga.clone(),
        ],
    };
    let mut admin = PgConnection::connect(&format!("{}/{}", tests::PG_SERVER, app.db_name)).await?;
    let result = check(&app, &mut admin, &alice, &bob, &carol, &team, &dave, &olga).await;
    roles.drop_all(&mut admin).await;
    admin.close().await?;
    result?;
    app.cleanup().await
}

#[allow(clippy::too_many_arguments)] // reason: one role per part of the story
async fn check(
    app: &TestApp,
    admin: &mut PgConnection,
    alice: &str,
    bob: &str,
    carol: &str,
    team: &str,
    dave: &str,
    olga: &str,
) -> R {
    // The grants, through the command's library: alice and bob are created
    // as login roles; carol gets beta-corp through a group role.
    let made = tenants::grant(&app.pool, "acme-prod", alice).await?;
    assert!(made.created_role && made.added_to_analysts && made.new_grant);
    let again = tenants::grant(&app.pool, "acme-prod", alice).await?;
    assert!(
        !again.created_role && !again.new_grant,
        "grant is idempotent"
    );
    tenants::grant(&app.pool, "beta-corp", bob).await?;
    sqlx::query(&format!("CREATE ROLE {} NOLOGIN", quote(team)))
        .execute(&mut *admin)
        .await?;
    tenants::grant(&app.pool, "beta-corp", team).await?;
    sqlx::query(&format!(
        "CREATE ROLE {} LOGIN IN ROLE {}",
        quote(carol),
        quote(team)
    ))
    .execute(&mut *admin)
    .await?;
    sqlx::query(&format!(
        "CREATE ROLE {} LOGIN IN ROLE chunk_worker_analyst",
        quote(dave)
    ))
    .execute(&mut *admin)
    .await?;
    sqlx::query(&format!(
        "CREATE ROLE {} LOGIN IN ROLE chunk_worker_operator",
        quote(olga)
    ))
    .execute(&mut *admin)
    .await?;
    let listed = tenants::list(&app.pool, None, None).await?;
    assert_eq!(listed.len(), 3, "{listed:?}");

    // What each tenant holds, counted by the superuser.
    for relation in RELATIONS {
        for tenant in ["acme-prod", "beta-corp"] {
            let expected = count(
                &mut *admin,
                &format!("SELECT count(*) FROM {relation} WHERE tenant_id = '{tenant}'"),
            )
            .await?;
            assert!(
                expected > 0,
                "{relation} holds no row of {tenant}: the test proves nothing"
            );
            for (role, granted) in [
                (alice, "acme-prod"),
                (bob, "beta-corp"),
                (carol, "beta-corp"),
            ] {
                if granted != tenant {
                    continue;
                }
                let mut conn = login(app, role).await?;
                let (all, foreign) = seen(&mut conn, relation, tenant).await?;
                assert_eq!(
                    (all, foreign),
                    (expected, 0),
                    "{role} on {relation}: all of {tenant}'s rows and no other"
                );
                conn.close().await?;
            }
        }
    }
    let null_failures = count(
        &mut *admin,
        "SELECT count(*) FROM chunking_failures WHERE tenant_id IS NULL",
    )
    .await?;
    assert_eq!(null_failures, 1, "the undecodable message names no tenant");

    // An analyst without grants sees nothing; an operator sees everything,
    // rows without a tenant and the replay log included.
    let mut conn = login(app, dave).await?;
    for relation in RELATIONS.iter().chain(&["dlq_replays", "tenant_grants"]) {
        let n = count(&mut conn, &format!("SELECT count(*) FROM {relation}")).await?;
        assert_eq!(n, 0, "{dave} without grants sees {n} rows of {relation}");
    }
    conn.close().await?;
    let mut conn = login(app, olga).await?;
    for relation in RELATIONS.iter().chain(&["dlq_replays", "tenant_grants"]) {
        let expected = count(&mut *admin, &format!("SELECT count(*) FROM {relation}")).await?;
        let n = count(&mut conn, &format!("SELECT count(*) FROM {relation}")).await?;
        assert_eq!(n, expected, "the operator sees every row of {relation}");
    }
    conn.close().await?;

    // Alice tries to widen what she sees.
    let mut conn = login(app, alice).await?;
    let own_grants = count(&mut conn, "SELECT count(*) FROM tenant_grants").await?;
    assert_eq!(own_grants, 1, "alice sees her own grant only");
    sqlx::query("SET ROLE chunk_worker_analyst")
        .execute(&mut conn)
        .await?;
    let (_, foreign) = seen(&mut conn, "chunks", "acme-prod").await?;
    assert_eq!(foreign, 0, "SET ROLE to the analyst role widens nothing");
    sqlx::query("RESET ROLE").execute(&mut conn).await?;
    for attempt in [
        format!("SET ROLE {}", quote(bob)),
        "SET ROLE chunk_worker_operator".to_owned(),
        "SET ROLE chunk_worker_service".to_owned(),
        format!("SET SESSION AUTHORIZATION {}", quote(bob)),
        "INSERT INTO tenant_grants (role_oid, tenant_id) SELECT oid, 'beta-corp' FROM pg_roles WHERE rolname = current_user".to_owned(),
        "UPDATE chunks SET tenant_id = 'acme-prod' WHERE tenant_id = 'beta-corp'".to_owned(),
    ] {
        let r = sqlx::query(&attempt).execute(&mut conn).await;
        assert!(r.is_err(), "{attempt} must be refused");
    }
    for setting in [
        "SET row_security = off",
        "SET app.tenant_id = 'beta-corp'",
        "SET request.jwt.claims = '{\"tenant_id\":\"beta-corp\"}'",
    ] {
        sqlx::query(setting).execute(&mut conn).await?;
        let r = sqlx::query("SELECT count(*) FROM chunks WHERE tenant_id = 'beta-corp'")
            .fetch_one(&mut conn)
            .await;
        match r {
            // row_security = off: an error rather than filtered rows.
            Err(_) => {}
            Ok(row) => assert_eq!(row.get::<i64, _>(0), 0, "after {setting}"),
        }
        sqlx::query("RESET ALL").execute(&mut conn).await?;
    }

    // The cookbook as alice: every answer is hers alone.
    for (question, sql) in cookbook()? {
        let rows = sqlx::query(&sql)
            .fetch_all(&mut conn)
            .await
            .map_err(|e| anyhow::anyhow!("{question}\n{sql}\n{e:#}"))?;
        for row in &rows {
            if let Ok(t) = row.try_get::<Option<String>, _>("tenant_id") {
                assert_eq!(t.as_deref(), Some("acme-prod"), "{question}");
            }
        }
        if question
            .to_lowercase()
            .starts_with("which failures does each tenant have")
        {
            let total: i64 = rows.iter().map(|r| r.get::<i64, _>("failures")).sum();
            assert_eq!(total, 2, "alice sees acme-prod's two failures only");
        }
    }
    conn.close().await?;

    // Revoking takes the rows away at once.
    assert!(tenants::revoke(&app.pool, "acme-prod", alice).await?);
    assert!(!tenants::revoke(&app.pool, "acme-prod", alice).await?);
    let mut conn = login(app, alice).await?;
    assert_eq!(count(&mut conn, "SELECT count(*) FROM chunks").await?, 0);
    conn.close().await?;

    // The worker still writes and reads through its own policy.
    app.publish_json(&message(
        "acme-prod",
        "after-rls",
        "v1",
        "# After\n\nStored.\n",
    ))
    .await?;
    app.wait_stored("after-rls", "v1").await?;
    Ok(())
}

/// The worker as an ordinary role (CREATEDB and CREATEROLE, no superuser, no
/// BYPASSRLS): it creates its database, runs the migrations (which make it a
/// member of chunk_worker_service) and stores and replaces versions through
/// the service policy, although every table FORCEs row security on its owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_without_superuser_rights_stores_through_its_own_policy() -> R {
    let role = format!("cw_worker_{}", tests::random_suffix());
    let mut admin = PgConnection::connect(&format!("{}/postgres", tests::PG_SERVER)).await?;
    sqlx::query(&format!(
        "CREATE ROLE {} LOGIN CREATEDB CREATEROLE",
        quote(&role)
    ))
    .execute(&mut admin)
    .await?;
    let result = async {
        let app = TestApp::spawn_with(tests::Options {
            pg_user: Some(role.clone()),
            ..tests::Options::default()
        })
        .await?;
        for version in ["v1", "v2"] {
            let md = format!("# Page\n\nVersion {version} of the page.\n");
            let mut msg = message("acme-prod", "owned", version, &md);
            msg["occurred_at"] = json!(format!("2026-11-20T1{}:00:00Z", &version[1..]));
            app.publish_json(&msg).await?;
            app.wait_stored("owned", version).await?;
        }
        assert_eq!(app.current_version("owned").await?.as_deref(), Some("v2"));
        app.publish_raw(b"{ broken").await?;
        app.next_dead_letter().await?;
        let forced: Vec<String> = sqlx::query_scalar(
            "SELECT relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relforcerowsecurity ORDER BY 1",
        )
        .fetch_all(&app.pool)
        .await?;
        assert_eq!(
            forced,
            [
                "chunking_failures",
                "chunks",
                "cross_links",
                "dlq_replays",
                "document_links",
                "documents",
                "outbox",
                "source_versions",
                "tenant_grants"
            ]
        );
        let definer_views: Vec<String> = sqlx::query_scalar(
            "SELECT relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'public' AND c.relkind IN ('v', 'm') \
               AND NOT coalesce('security_invoker=true' = ANY (c.reloptions), false)",
        )
        .fetch_all(&app.pool)
        .await?;
        assert!(
            definer_views.is_empty(),
            "views that would read with their owner's rights: {definer_views:?}"
        );
        let owner: String =
            sqlx::query_scalar("SELECT tableowner::text FROM pg_tables WHERE tablename = 'chunks'")
                .fetch_one(&app.pool)
                .await?;
        assert_eq!(owner, role, "the worker owns its tables");
        app.cleanup().await
    }
    .await;
    let _ = sqlx::query(&format!("DROP ROLE IF EXISTS {}", quote(&role)))
        .execute(&mut admin)
        .await;
    admin.close().await?;
    result
}

/// An administrator runs the migrations (`chunk-worker migrate` as a
/// superuser) naming the worker's role in `database.service_role`; the
/// worker then runs as that role, which may not change the schema and owns
/// no table, and stores through the service policy. A role the migration did
/// not name is stopped at start-up with the command that fixes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_migrated_by_an_administrator_runs_as_its_own_role() -> R {
    let suffix = tests::random_suffix();
    let (app_role, stray) = (format!("cw_app_{suffix}"), format!("cw_stray_{suffix}"));
    let database = format!("cw_test_{suffix}");
    let roles = Roles {
        names: vec![app_role.clone(), stray.clone()],
    };
    let mut admin = PgConnection::connect(&format!("{}/postgres", tests::PG_SERVER)).await?;
    for role in &roles.names {
        sqlx::query(&format!("CREATE ROLE {} LOGIN", quote(role)))
            .execute(&mut admin)
            .await?;
    }
    let settings = |user: &str, service_role: &str| {
        worker::config::Settings::load(
            &tests::config_dir(),
            None,
            [
                (
                    "CHUNK_WORKER__DATABASE__URL".to_owned(),
                    format!("postgres://{user}@{}/{database}", tests::PG_ADDR),
                ),
                (
                    "CHUNK_WORKER__DATABASE__SERVICE_ROLE".to_owned(),
                    service_role.to_owned(),
                ),
            ]
            .into_iter()
            .collect(),
        )
    };
    let result = async {
        worker::startup::prepare_database(&settings("postgres", &app_role)?).await?;
        // A role that was not named: refused at start-up, saying what to run.
        let e = worker::startup::prepare_database(&settings(&stray, "")?)
            .await
            .expect_err("a role outside chunk_worker_service starts");
        let why = format!("{e:#}");
        assert!(
            why.contains("chunk-worker migrate") && why.contains("service_role"),
            "{why}"
        );
        let app = TestApp::spawn_with(tests::Options {
            pg_user: Some(app_role.clone()),
            database: Some(database.clone()),
            ..tests::Options::default()
        })
        .await?;
        for version in ["v1", "v2"] {
            let md = format!("# Page\n\nVersion {version} of the page.\n");
            let mut msg = message("acme-prod", "admin-made", version, &md);
            msg["occurred_at"] = json!(format!("2026-11-20T1{}:00:00Z", &version[1..]));
            app.publish_json(&msg).await?;
            app.wait_stored("admin-made", version).await?;
        }
        assert_eq!(
            app.current_version("admin-made").await?.as_deref(),
            Some("v2")
        );
        app.publish_raw(b"{ broken").await?;
        app.next_dead_letter().await?;
        let owner: String =
            sqlx::query_scalar("SELECT tableowner::text FROM pg_tables WHERE tablename = 'chunks'")
                .fetch_one(&app.pool)
                .await?;
        assert_eq!(owner, "postgres", "the administrator owns the tables");
        app.cleanup().await
    }
    .await;
    let _ = sqlx::query(&format!(
        "DROP DATABASE IF EXISTS {} WITH (FORCE)",
        quote(&database)
    ))
    .execute(&mut admin)
    .await;
    roles.drop_all(&mut admin).await;
    admin.close().await?;
    result
}
