//! `amqp.urls` (issue 52): the worker connects to the first node that
//! answers and, after a lost connection, to the next node in order
//! (wrapping), for the consumer and the outbox relay alike; the node in use
//! is on `/metrics` as `chunking_broker_node{link, node}`. Three TCP proxies
//! in front of the one local broker stand in for three nodes: cutting a
//! proxy is that node going away.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use tests::proxy::Proxy;
use tests::{eventually, message, sample_markdown, Options, TestApp, DEADLINE};

type R = anyhow::Result<()>;

/// The value of `chunking_broker_node{link="<link>",node="<node>"}`.
fn node_gauge(ctx: &worker::context::Context, link: &str, node: &str) -> Option<i64> {
    let series = format!("chunking_broker_node{{link=\"{link}\",node=\"{node}\"}} ");
    ctx.metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(&series)?.trim().parse().ok())
}

/// Waits until both links use `node` (and no other of `nodes`).
async fn both_links_on(app: &TestApp, nodes: &[String], node: &str) -> R {
    let ctx = app.ctx.clone();
    eventually(&format!("both links on {node}"), DEADLINE, || {
        let ctx = ctx.clone();
        async move {
            let on = |link: &str| {
                nodes
                    .iter()
                    .all(|n| node_gauge(&ctx, link, n) == Some(i64::from(n == node)))
            };
            Ok((on("consumer") && on("outbox") && ctx.health.broker()).then_some(()))
        }
    })
    .await
    .map_err(|e| {
        let series: Vec<String> = app
            .ctx
            .metrics
            .render()
            .lines()
            .filter(|l| l.starts_with("chunking_broker_"))
            .map(str::to_owned)
            .collect();
        e.context(format!("nodes {nodes:?}; {series:#?}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_moves_to_the_next_node_in_order_and_wraps_around() -> R {
    let proxies = [
        Proxy::start(tests::AMQP_ADDR).await?,
        Proxy::start(tests::AMQP_ADDR).await?,
        Proxy::start(tests::AMQP_ADDR).await?,
    ];
    let nodes: Vec<String> = proxies.iter().map(Proxy::addr).collect();
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("amqp://guest:guest@{n}/%2f"))
        .collect();
    // The first node is down when the worker starts: the second answers.
    proxies[0].cut();
    let app = TestApp::spawn_with(Options {
        vars: vec![("AMQP__URLS".into(), urls.join(","))],
        ..Options::default()
    })
    .await?;
    assert_eq!(app.settings.amqp.nodes.len(), 3);
    both_links_on(&app, &nodes, &nodes[1]).await?;
    let publish_and_store = |doc: &'static str, n: usize| {
        let app = &app;
        async move {
            app.publish_json(&message("acme-prod", doc, "v1", &sample_markdown(n)))
                .await?;
            app.wait_stored(doc, "v1").await?;
            let ev = app.next_event().await?.json()?;
            assert_eq!(ev["document_id"], doc);
            anyhow::Ok(())
        }
    };
    publish_and_store("doc-node-2", 80).await?;

    // The second node goes away; the first is back by then, but the walk
    // goes on from the lost node: the third.
    proxies[0].restore();
    proxies[1].cut();
    both_links_on(&app, &nodes, &nodes[2]).await?;
    publish_and_store("doc-node-3", 81).await?;

    // The third goes away: the walk wraps around to the first.
    proxies[1].restore();
    proxies[2].cut();
    both_links_on(&app, &nodes, &nodes[0]).await?;
    publish_and_store("doc-node-1", 82).await?;

    // Nothing was dead-lettered, and no label or series names a credential.
    assert!(app.get(&app.topology.failed_queue()).await?.is_none());
    let text = app.ctx.metrics.render();
    assert!(!text.contains("guest"), "{text}");
    app.cleanup().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_url_is_one_node_and_the_worker_retries_it() -> R {
    // `amqp.url` alone, as before issue 52: the one node, retried.
    let proxy = Proxy::start(tests::AMQP_ADDR).await?;
    let app = TestApp::spawn_with(Options {
        amqp_addr: Some(proxy.addr()),
        ..Options::default()
    })
    .await?;
    assert_eq!(app.settings.amqp.nodes.len(), 1);
    let nodes = [proxy.addr()];
    both_links_on(&app, &nodes, &nodes[0]).await?;
    proxy.cut();
    let ctx = app.ctx.clone();
    let node = &nodes[0];
    eventually("the worker to notice", DEADLINE, || {
        let ctx = ctx.clone();
        async move { Ok((node_gauge(&ctx, "consumer", node) == Some(0)).then_some(())) }
    })
    .await?;
    proxy.restore();
    both_links_on(&app, &nodes, &nodes[0]).await?;
    app.publish_json(&message("acme-prod", "doc-one", "v1", &sample_markdown(83)))
        .await?;
    app.wait_stored("doc-one", "v1").await?;
    app.cleanup().await
}
