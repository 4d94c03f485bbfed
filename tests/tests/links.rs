//! End-to-end tests of Confluence link storage (SPEC 3.7, issue #4):
//! Confluence-exported pages published through the worker give exactly the
//! expected `document_links` rows and `cross_links` edges; late targets
//! resolve; other tenants' pages never do; re-publishing changes nothing; a
//! new version replaces the outgoing links.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use serde_json::{json, Value};
use shared::links::encode_tiny;
use tests::{eventually, Options, TestApp, DEADLINE};
use worker::ops::metrics::OperationOutcome as Outcome;

type R = anyhow::Result<()>;

const ACME: &str = "acme-prod";
const GLOBEX: &str = "globex";
const A: &str = "confluence:ENG:100";
const B: &str = "confluence:OPS:200";
const C: &str = "confluence:ENG:300";
const G: &str = "globex:FIN:300";

/// README "Confluence links": which documents link to X.
const README_INCOMING: &str = "\
SELECT c.source_document_id, c.link_count, d.title
FROM cross_links c
JOIN documents d ON d.tenant_id = c.tenant_id AND d.document_id = c.source_document_id
WHERE c.tenant_id = 'acme-prod' AND c.target_document_id = 'confluence:OPS:200'
ORDER BY c.link_count DESC, c.source_document_id;";

/// README: what X links to (every link occurrence, resolved or not).
const README_OUTGOING: &str = "\
SELECT l.link_ordinal, l.link_type, l.url, l.target_document_id, l.chunk_id
FROM document_links l
WHERE l.tenant_id = 'acme-prod' AND l.source_document_id = 'confluence:ENG:100'
ORDER BY l.link_ordinal;";

/// README: broken links (Confluence targets never ingested).
const README_BROKEN: &str = "\
SELECT l.source_document_id, l.link_ordinal, l.link_type, l.target_space_key,
       l.target_page_id, l.target_title, l.url
FROM document_links l
WHERE l.tenant_id = 'acme-prod' AND l.target_document_id IS NULL
  AND l.link_type IN ('confluence_page', 'confluence_tiny', 'confluence_attachment')
ORDER BY l.source_document_id, l.link_ordinal;";

/// README: most-linked pages per space (top 10 by incoming link occurrences).
const README_MOST_LINKED: &str = "\
SELECT space_key, document_id, title, linking_documents, incoming_links
FROM (
  SELECT d.space_key, d.document_id, d.title,
         count(*) AS linking_documents,
         sum(c.link_count) AS incoming_links,
         rank() OVER (PARTITION BY d.space_key ORDER BY sum(c.link_count) DESC) AS rank
  FROM cross_links c
  JOIN documents d ON d.tenant_id = c.tenant_id AND d.document_id = c.target_document_id
  WHERE c.tenant_id = 'acme-prod'
  GROUP BY d.space_key, d.document_id, d.title
) ranked
WHERE rank <= 10
ORDER BY space_key, incoming_links DESC, document_id;";

/// A row of [`README_BROKEN`].
type BrokenRow = (
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

/// A row of [`README_MOST_LINKED`].
type MostLinkedRow = (Option<String>, String, Option<String>, i64, i64);

/// A Confluence page as upstream publishes it.
#[allow(clippy::too_many_arguments)] // reason: one message field each
fn page(
    tenant: &str,
    document: &str,
    version: &str,
    seq: i64,
    page_id: &str,
    space: &str,
    title: &str,
    source_url: &str,
    markdown: &str,
) -> Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": uuid::Uuid::new_v4().to_string(),
        "tenant_id": tenant,
        "document_id": document,
        "source_version_id": version,
        "source_version_seq": seq,
        "source_type": "confluence",
        "markdown": markdown,
        "metadata": {"title": title, "source_url": source_url, "space_key": space, "page_id": page_id},
        "correlation_id": format!("corr-{document}-{version}"),
        "occurred_at": "2026-11-20T10:00:01Z"
    })
}

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

/// `(link_ordinal, link_type, space, page id, title, anchor, issue key, target document)`.
type Row = (
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn row(ordinal: i32, link_type: &str, target: [Option<&str>; 5], resolved: Option<&str>) -> Row {
    let s = |o: Option<&str>| o.map(str::to_owned);
    (
        ordinal,
        link_type.to_owned(),
        s(target[0]),
        s(target[1]),
        s(target[2]),
        s(target[3]),
        s(target[4]),
        s(resolved),
    )
}

async fn links_of(app: &TestApp, document: &str) -> Vec<Row> {
    sqlx::query_as(
        "SELECT link_ordinal, link_type, target_space_key, target_page_id, target_title, target_anchor, \
           target_issue_key, target_document_id \
         FROM document_links WHERE source_document_id = $1 ORDER BY link_ordinal",
    )
    .bind(document)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

async fn edges(app: &TestApp) -> Vec<(String, String, String, i32)> {
    sqlx::query_as(
        "SELECT tenant_id, source_document_id, target_document_id, link_count FROM cross_links \
         ORDER BY tenant_id, source_document_id, target_document_id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap()
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

async fn publish_and_wait(app: &TestApp, msg: &Value) -> R {
    app.publish_json(msg).await?;
    app.wait_stored(
        msg["document_id"].as_str().unwrap(),
        msg["source_version_id"].as_str().unwrap(),
    )
    .await
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

fn edge(tenant: &str, from: &str, to: &str, n: i32) -> (String, String, String, i32) {
    (tenant.to_owned(), from.to_owned(), to.to_owned(), n)
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

    // The README's queries, verbatim, on this data.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_target_loses_title_links_and_space_title_links_resolve_late() -> R {
    let app = TestApp::spawn_with(Options {
        vars: vec![(
            "LINKS__CONFLUENCE_BASE_URLS".into(),
            "https://confluence.acme.com".into(),
        )],
        ..Options::default()
    })
    .await?;
    let linker = page(
        ACME,
        "doc:linker",
        "v1",
        1,
        "1",
        "OPS",
        "Linker",
        "https://confluence.acme.com/display/OPS/Linker",
        "# Linker\n\n[Title link](https://confluence.acme.com/display/OPS/Queue+Runbook) and \
         [query](https://confluence.acme.com/pages/viewpage.action?spaceKey=OPS&title=queue+runbook).\n",
    );
    publish_and_wait(&app, &linker).await?;
    let target = |version: &str, seq: i64, title: &str| {
        page(
            ACME,
            "doc:target",
            version,
            seq,
            "2",
            "ops",
            title,
            "https://confluence.acme.com/display/OPS/whatever",
            "# Target\n\nText.\n",
        )
    };
    publish_and_wait(&app, &target("v1", 1, "QUEUE RUNBOOK")).await?;
    let resolved: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT target_document_id FROM document_links WHERE source_document_id = 'doc:linker' \
         ORDER BY link_ordinal",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(
        resolved,
        [Some("doc:target".to_owned()), Some("doc:target".to_owned())]
    );
    assert_eq!(
        edges(&app).await,
        vec![edge(ACME, "doc:linker", "doc:target", 2)]
    );
    // The target is renamed: title links no longer point at it.
    publish_and_wait(&app, &target("v2", 2, "Something Else")).await?;
    let resolved: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT target_document_id FROM document_links WHERE source_document_id = 'doc:linker' \
         ORDER BY link_ordinal",
    )
    .fetch_all(&app.pool)
    .await?;
    assert_eq!(resolved, [None, None]);
    assert_eq!(edges(&app).await, vec![]);
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_linking_each_other_stored_concurrently_resolve_without_deadlocks() -> R {
    // Straight at the store: 12 pages that all link to each other, two
    // versions each, released at once. Whatever the interleaving, every link
    // resolves and every edge exists exactly once.
    use shared::links::{extract_links, Classifier, LinkConfig};
    use shared::DocumentMeta;
    use shared::Engine;

    const N: usize = 12;
    let app = TestApp::spawn().await?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .connect(&format!("{}/{}", tests::PG_SERVER, app.db_name))
        .await?;
    let engine = Engine::builtin()?;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(N * 2));
    let mut tasks = Vec::new();
    for d in 0..N {
        for v in 0..2usize {
            let doc = format!("confluence:ENG:{}", 1000 + d);
            let version = format!("v{v}");
            let source_url = format!(
                "https://acme.atlassian.net/wiki/spaces/ENG/pages/{}/P",
                1000 + d
            );
            let mut md = format!("# Page {d} v{v}\n\n");
            for other in (0..N).filter(|o| *o != d) {
                md.push_str(&format!(
                    "- [p{other}](https://acme.atlassian.net/wiki/spaces/ENG/pages/{})\n",
                    1000 + other
                ));
            }
            let meta = DocumentMeta {
                tenant_id: ACME.into(),
                document_id: doc.clone(),
                source_version_id: version.clone(),
                source_url: Some(source_url.clone()),
                ..DocumentMeta::default()
            };
            let chunked = engine.chunk(md.as_bytes(), &meta, None)?;
            let classifier = Classifier::new(&LinkConfig::default(), Some(&source_url));
            let links = extract_links(&chunked.normalized, &chunked.chunks, &classifier);
            assert_eq!(links.len(), N - 1);
            let (pool, barrier) = (pool.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let new = worker::store::versions::NewVersion {
                    tenant_id: ACME,
                    document_id: &doc,
                    source_version_id: &version,
                    source_version_seq: Some(v as i64),
                    occurred_at: None,
                    source_type: Some("confluence"),
                    causation_id: "c",
                    correlation_id: None,
                    content_sha256: String::new(),
                    normalized: &chunked.normalized,
                    metadata: json!({"source_url": source_url, "title": format!("Page {d}")}),
                    profile: "spec-v1",
                    chunker_version: "structural:1.3.0",
                    tokenizer: "cl100k_base",
                    chunks: &chunked.chunks,
                    event_headers: json!({}),
                };
                barrier.wait().await;
                worker::store::versions::store_version_with_links(&pool, &new, &links)
                    .await
                    .map_err(|e| anyhow::anyhow!("{doc}@{version}: {e}"))
            }));
        }
    }
    for t in tasks {
        t.await??;
    }
    let (links, unresolved, stale_version, edges, counts): (i64, i64, i64, i64, i64) =
        sqlx::query_as(
            "SELECT (SELECT count(*) FROM document_links), \
               (SELECT count(*) FROM document_links WHERE target_document_id IS NULL), \
               (SELECT count(*) FROM document_links WHERE source_version_id <> 'v1'), \
               (SELECT count(*) FROM cross_links), \
               (SELECT count(*) FROM cross_links WHERE link_count <> 1)",
        )
        .fetch_one(&app.pool)
        .await?;
    let n = N as i64;
    assert_eq!(
        (links, unresolved, stale_version, edges, counts),
        (n * (n - 1), 0, 0, n * (n - 1), 0)
    );
    pool.close().await;
    app.cleanup().await
}

/// A file document with no Confluence keys and no page links takes the fast
/// path (no tenant lock): its links are still stored, and replaced by its
/// next version.
#[tokio::test]
async fn a_document_without_confluence_keys_still_stores_and_replaces_its_links() -> R {
    let app = TestApp::spawn().await?;
    let file = |version: &str, seq: i64, markdown: &str| {
        json!({
            "schema": "normalize_markdown.completed/v1",
            "event_id": uuid::Uuid::new_v4().to_string(),
            "tenant_id": ACME,
            "document_id": "file:notes",
            "source_version_id": version,
            "source_version_seq": seq,
            "source_type": "file",
            "markdown": markdown,
            "metadata": {"file_path": "notes.md"},
            "occurred_at": "2026-11-20T10:00:01Z"
        })
    };
    publish_and_wait(
        &app,
        &file("v1", 1, "# Notes\n\nSee [the docs](https://example.com/docs), [a file](../other.md) and [here](#notes).\n"),
    )
    .await?;
    let types = |rows: Vec<Row>| rows.into_iter().map(|r| r.1).collect::<Vec<_>>();
    assert_eq!(
        types(links_of(&app, "file:notes").await),
        ["external", "relative", "anchor"]
    );
    publish_and_wait(
        &app,
        &file(
            "v2",
            2,
            "# Notes\n\nOnly [one link](https://example.com/x) now.\n",
        ),
    )
    .await?;
    assert_eq!(types(links_of(&app, "file:notes").await), ["external"]);
    assert!(edges(&app).await.is_empty());
    app.cleanup().await
}
