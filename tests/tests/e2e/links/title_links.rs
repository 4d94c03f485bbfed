//! Links by space and title: resolved late, and lost when the target is
//! renamed.

use tests::{Options, TestApp};

use super::{edge, edges, page, publish_and_wait, ACME, R};

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
