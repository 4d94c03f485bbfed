//! Confluence pages published through the worker: exactly the expected
//! rows and edges, late targets resolved, other tenants' pages never,
//! re-publishing changes nothing, a new version replaces the links.

use serde_json::{json, Value};
use shared::links::encode_tiny;
use tests::{eventually, Options, TestApp, DEADLINE};
use worker::ops::metrics::OperationOutcome as Outcome;

use super::readme_queries::{
    BrokenRow, MostLinkedRow, README_BROKEN, README_INCOMING, README_MOST_LINKED, README_OUTGOING,
};
use super::{edge, edges, links_of, page, publish_and_wait, row, Row, A, ACME, B, C, G, GLOBEX, R};

fn page_a_v1() -> Value {
    let tiny = encode_tiny(200);
    let md = format!(
        "# Deploy Guide\n\n\
         Start with the [Runbook](https://acme.atlassian.net/wiki/spaces/OPS/pages/200/Runbook+Index#step-2) \
         and the [Ops Home](https://confluence.acme.com/display/OPS/runbook+index).\n\n\
         ## References\n\n\
         - [Viewpage](https://confluence.acme.com/pages/viewpage.action?pageId=300)\n\
         - [Tiny](https://acme.atlassian.net/wiki/x/{tiny})\n\
         - ![diagram](https://confluence.acme.com/download/attachments/200/diagram.png?version=1)\n\
         - [OPS space](https://confluence.acme.com/display/OPS)\n\
         - [OPS-1234](https://jira.acme.com/browse/OPS-1234)\n\
         - [below](#rollback)\n\
         - [local](./runbooks/queue-backlog.md)\n\
         - [Other](../../pages/555/Other)\n\
         - [Example](https://example.com/a)\n\
         - [self](https://acme.atlassian.net/wiki/spaces/ENG/pages/100/Deploy+Guide#top)\n\n\
         ## Rollback\n\n\
         Bare link: https://confluence.acme.com/pages/viewpage.action?pageId=200 works too.\n"
    );
    page(
        ACME,
        A,
        "v1",
        1,
        "100",
        "ENG",
        "Deploy Guide",
        "https://acme.atlassian.net/wiki/spaces/ENG/pages/100/Deploy+Guide",
        &md,
    )
}

fn page_b() -> Value {
    page(
        ACME,
        B,
        "v1",
        1,
        "200",
        "OPS",
        "Runbook Index",
        "https://confluence.acme.com/display/OPS/Runbook+Index",
        "# Runbook Index\n\n\
         See [Deploy](https://confluence.acme.com/pages/viewpage.action?pageId=100) \
         and [again](/pages/viewpage.action?pageId=100).\n\n\
         Ticket [OPS-7](https://jira.acme.com/browse/OPS-7).\n",
    )
}

fn page_c() -> Value {
    page(
        ACME,
        C,
        "v1",
        1,
        "300",
        "ENG",
        "Queue Backlog",
        "https://acme.atlassian.net/wiki/spaces/ENG/pages/300/Queue+Backlog",
        "# Queue Backlog\n\nNo links here, just text.\n",
    )
}

/// Another tenant's page with the same page id as C.
fn page_g() -> Value {
    page(
        GLOBEX,
        G,
        "v1",
        1,
        "300",
        "FIN",
        "Budget",
        "https://globex.atlassian.net/wiki/spaces/FIN/pages/300/Budget",
        "# Budget\n\n\
         [Deploy](https://globex.atlassian.net/wiki/spaces/ENG/pages/100/Deploy+Guide), \
         [ACME jira](https://jira.acme.com/browse/OPS-1), [FIN-7](https://jira.globex.com/browse/FIN-7).\n",
    )
}

/// Every row of both link tables, timestamps included, as text.
async fn snapshot(app: &TestApp) -> (Vec<String>, Vec<String>) {
    let links = sqlx::query_scalar(
        "SELECT row_to_json(l)::text FROM document_links l \
         ORDER BY tenant_id, source_document_id, link_ordinal",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let cross = sqlx::query_scalar(
        "SELECT row_to_json(c)::text FROM cross_links c \
         ORDER BY tenant_id, source_document_id, target_document_id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    (links, cross)
}

fn expected_a(c: Option<&str>) -> Vec<Row> {
    let tiny_page = "200";
    vec![
        row(
            0,
            "confluence_page",
            [
                Some("OPS"),
                Some("200"),
                Some("Runbook Index"),
                Some("step-2"),
                None,
            ],
            Some(B),
        ),
        row(
            1,
            "confluence_page",
            [Some("OPS"), None, Some("runbook index"), None, None],
            Some(B),
        ),
        row(
            2,
            "confluence_page",
            [None, Some("300"), None, None, None],
            c,
        ),
        row(
            3,
            "confluence_tiny",
            [None, Some(tiny_page), None, None, None],
            Some(B),
        ),
        row(
            4,
            "confluence_attachment",
            [None, Some("200"), Some("diagram.png"), None, None],
            Some(B),
        ),
        row(
            5,
            "confluence_space",
            [Some("OPS"), None, None, None, None],
            None,
        ),
        row(
            6,
            "jira_issue",
            [None, None, None, None, Some("OPS-1234")],
            None,
        ),
        row(
            7,
            "anchor",
            [None, None, None, Some("rollback"), None],
            None,
        ),
        row(8, "relative", [None; 5], None),
        row(
            9,
            "confluence_page",
            [Some("ENG"), Some("555"), Some("Other"), None, None],
            None,
        ),
        row(10, "external", [None; 5], None),
        row(
            11,
            "confluence_page",
            [
                Some("ENG"),
                Some("100"),
                Some("Deploy Guide"),
                Some("top"),
                None,
            ],
            Some(A),
        ),
        row(
            12,
            "confluence_page",
            [None, Some("200"), None, None, None],
            Some(B),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluence_links_are_stored_resolved_late_and_replaced_by_new_versions() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![
            // Comma-separated lists, as environment variables give them.
            (
                "LINKS__CONFLUENCE_BASE_URLS".into(),
                "https://confluence.acme.com, https://wiki.example.org/confluence".into(),
            ),
            (
                "LINKS__JIRA_BASE_URLS".into(),
                "https://jira.acme.com".into(),
            ),
            // globex's Jira list replaces the global one.
            (
                "LINKS__TENANTS__GLOBEX__JIRA_BASE_URLS".into(),
                "https://jira.globex.com".into(),
            ),
        ],
        ..Options::default()
    })
    .await?;

    // Another tenant's page with page id 300 first, then B (links to A, which
    // is not there yet), then A.
    publish_and_wait(&app, &page_g()).await?;
    publish_and_wait(&app, &page_b()).await?;
    assert_eq!(
        links_of(&app, B).await,
        vec![
            row(
                0,
                "confluence_page",
                [None, Some("100"), None, None, None],
                None
            ),
            row(
                1,
                "confluence_page",
                [None, Some("100"), None, None, None],
                None
            ),
            row(
                2,
                "jira_issue",
                [None, None, None, None, Some("OPS-7")],
                None
            ),
        ]
    );
    publish_and_wait(&app, &page_a_v1()).await?;

    // A's links: every URL shape; page 300 is globex's, never acme's.
    assert_eq!(links_of(&app, A).await, expected_a(None));
    // B's links waited for A and resolved when it arrived.
    assert_eq!(
        links_of(&app, B).await,
        vec![
            row(
                0,
                "confluence_page",
                [None, Some("100"), None, None, None],
                Some(A)
            ),
            row(
                1,
                "confluence_page",
                [None, Some("100"), None, None, None],
                Some(A)
            ),
            row(
                2,
                "jira_issue",
                [None, None, None, None, Some("OPS-7")],
                None
            ),
        ]
    );
    // globex: a page id that only acme has never resolves; acme's Jira is
    // not globex's.
    assert_eq!(
        links_of(&app, G).await,
        vec![
            row(
                0,
                "confluence_page",
                [Some("ENG"), Some("100"), Some("Deploy Guide"), None, None],
                None
            ),
            row(1, "external", [None; 5], None),
            row(
                2,
                "jira_issue",
                [None, None, None, None, Some("FIN-7")],
                None
            ),
        ]
    );
    // Self-links resolve but are no edge.
    assert_eq!(
        edges(&app).await,
        vec![edge(ACME, A, B, 5), edge(ACME, B, A, 2)]
    );

    // Every row carries the chunk that holds it, and the stored metadata.
    let (orphans, images): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE c.chunk_id IS DISTINCT FROM l.chunk_id), \
           count(*) FILTER (WHERE l.is_image) \
         FROM document_links l \
         LEFT JOIN chunks c ON c.tenant_id = l.tenant_id AND c.document_id = l.source_document_id \
           AND c.source_version_id = l.source_version_id AND c.ordinal = l.chunk_ordinal",
    )
    .fetch_one(&app.pool)
    .await?;
    assert_eq!((orphans, images), (0, 1));

    // C arrives: A's link to page 300 resolves to it (not to globex's page).
    publish_and_wait(&app, &page_c()).await?;
    assert_eq!(links_of(&app, A).await, expected_a(Some(C)));
    assert_eq!(
        edges(&app).await,
        vec![
            edge(ACME, A, C, 1),
            edge(ACME, A, B, 5),
            edge(ACME, B, A, 2)
        ]
    );

    // The queries of docs/links.md, verbatim, on this data.
    let incoming: Vec<(String, i32, Option<String>)> =
        sqlx::query_as(README_INCOMING).fetch_all(&app.pool).await?;
    assert_eq!(
        incoming,
        [(A.to_owned(), 5, Some("Deploy Guide".to_owned()))]
    );
    let outgoing: Vec<(i32, String, String, Option<String>, String)> =
        sqlx::query_as(README_OUTGOING).fetch_all(&app.pool).await?;
    assert_eq!(outgoing.len(), 13);
    assert_eq!(
        (&outgoing[2].1, outgoing[2].3.as_deref()),
        (&"confluence_page".to_owned(), Some(C))
    );
    let broken: Vec<BrokenRow> = sqlx::query_as(README_BROKEN).fetch_all(&app.pool).await?;
    assert_eq!(
        broken,
        [(
            A.to_owned(),
            9,
            "confluence_page".to_owned(),
            Some("ENG".to_owned()),
            Some("555".to_owned()),
            Some("Other".to_owned()),
            "../../pages/555/Other".to_owned()
        )]
    );
    let most: Vec<MostLinkedRow> = sqlx::query_as(README_MOST_LINKED)
        .fetch_all(&app.pool)
        .await?;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        most,
        [
            (s("ENG"), A.to_owned(), s("Deploy Guide"), 1, 2),
            (s("ENG"), C.to_owned(), s("Queue Backlog"), 1, 1),
            (s("OPS"), B.to_owned(), s("Runbook Index"), 1, 5),
        ]
    );

    // Re-publishing a stored version changes nothing at all.
    let before = snapshot(&app).await;
    app.publish_json(&page_a_v1()).await?;
    let ctx = app.ctx.clone();
    eventually("the duplicate to be acked", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((ctx.metrics.operations(Outcome::Duplicate) >= 1).then_some(())) }
    })
    .await?;
    // An older version stored late is not current: it never touches links.
    let mut old = page_a_v1();
    old["source_version_id"] = json!("v0");
    old["source_version_seq"] = json!(0);
    old["markdown"] = json!("# Deploy Guide\n\n[Only](https://example.com/old).\n");
    publish_and_wait(&app, &old).await?;
    assert_eq!(snapshot(&app).await, before);

    // A new version replaces A's outgoing links and its edges.
    let mut v2 = page_a_v1();
    v2["source_version_id"] = json!("v2");
    v2["source_version_seq"] = json!(2);
    v2["markdown"] = json!(
        "# Deploy Guide\n\nOnly [Queue](https://confluence.acme.com/pages/viewpage.action?pageId=300) \
         now, and [Example](https://example.com/b).\n"
    );
    publish_and_wait(&app, &v2).await?;
    assert_eq!(
        links_of(&app, A).await,
        vec![
            row(
                0,
                "confluence_page",
                [None, Some("300"), None, None, None],
                Some(C)
            ),
            row(1, "external", [None; 5], None),
        ]
    );
    let versions: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT source_version_id FROM document_links WHERE source_document_id = $1",
    )
    .bind(A)
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(versions, ["v2"]);
    assert_eq!(
        edges(&app).await,
        vec![edge(ACME, A, C, 1), edge(ACME, B, A, 2)]
    );
    app.cleanup().await
}
