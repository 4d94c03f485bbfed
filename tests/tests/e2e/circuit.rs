//! The queue worker's circuit breaker (issue 14): a strategy that fails
//! systemically (every call an internal error, or output that breaks the
//! validation checklist: `VALIDATION_FAILED` is a strategy bug too) opens its
//! circuit after 5 consecutive failures; from then on its messages are
//! parked in the retry queue instead of being dead-lettered one by one, so
//! the input queue is not emptied into the dead-letter queue; once the fault
//! is gone a half-open trial succeeds, the circuit closes and every parked
//! message is stored.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use shared::chunk::span::chunks_from_spans;
use shared::strategy::ChunkInput;
use shared::strategy::{Chunker, Limits, ParamError, Params, Rules, Strategy};
use shared::{Chunk, ChunkError, Engine, Registry};
use tests::{eventually, message, Options, TestApp};
use worker::breaker::State;

type R = anyhow::Result<()>;

/// While set, every chunking call of the `flaky` strategy fails internally.
static FAULT: AtomicBool = AtomicBool::new(true);
/// While set, every chunking call of the `invalid` strategy returns no
/// chunks for a document with text (nothing would be kept: invalid).
static BROKEN: AtomicBool = AtomicBool::new(true);

/// A strategy that fails while its switch is set: with an internal error, or
/// with output the checklist refuses.
#[derive(Debug, Clone, Copy)]
struct Flaky {
    name: &'static str,
    switch: &'static AtomicBool,
    invalid_output: bool,
}

#[derive(Debug)]
struct FlakyChunker(Flaky);

const FLAKY: Flaky = Flaky {
    name: "flaky",
    switch: &FAULT,
    invalid_output: false,
};
const INVALID: Flaky = Flaky {
    name: "invalid",
    switch: &BROKEN,
    invalid_output: true,
};

impl Strategy for Flaky {
    fn name(&self) -> &'static str {
        self.name
    }
    fn version(&self) -> &'static str {
        "0.1.0"
    }
    fn summary(&self) -> &'static str {
        "the whole document as one chunk, or an internal error while FAULT is set"
    }
    fn experimental(&self) -> bool {
        true
    }
    fn param_keys(&self) -> &'static [&'static str] {
        &[]
    }
    fn configure(&self, _: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        Ok(Arc::new(FlakyChunker(*self)))
    }
}

impl Chunker for FlakyChunker {
    fn limits(&self) -> Limits {
        Limits {
            target_tokens: 100_000,
            hard_max_tokens: 100_000,
            min_tokens: 0,
            overlap_tokens: 0,
        }
    }
    fn rules(&self) -> Rules {
        Rules::UNIVERSAL
    }
    fn params(&self) -> toml::Table {
        toml::Table::new()
    }
    fn chunk(&self, input: &ChunkInput<'_>) -> Result<Vec<Chunk>, ChunkError> {
        if self.0.switch.load(Ordering::SeqCst) {
            if self.0.invalid_output {
                return Ok(Vec::new());
            }
            return Err(ChunkError::Embedding("injected systemic fault".into()));
        }
        let whole = std::iter::once(0..input.doc.text.len()).collect::<Vec<_>>();
        Ok(chunks_from_spans(input, &whole, true))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_systemic_failure_parks_messages_instead_of_dead_lettering_them() -> R {
    systemic(FLAKY, "INTERNAL").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn systemically_invalid_output_parks_messages_too() -> R {
    systemic(INVALID, "VALIDATION_FAILED").await
}

async fn systemic(strategy: Flaky, code: &str) -> R {
    let name = strategy.name;
    let mut registry = Registry::builtin();
    registry.register(strategy);
    let engine = Engine::builder()
        .registry(registry)
        .profile_source(
            "flaky.toml",
            format!("name = \"{name}-v1\"\nstrategy = \"{name}\"\n"),
        )
        .experimental(true)
        .build()?;
    let app = TestApp::spawn_with(Options {
        engine: Some(Arc::new(engine)),
        ..Options::default()
    })
    .await?;
    const DOCS: usize = 12;
    for i in 0..DOCS {
        let mut msg = message(
            "acme-prod",
            &format!("doc-{i}"),
            "v1",
            &format!("# Doc {i}\n\nText {i}.\n"),
        );
        msg["profile"] = json!(format!("{name}-v1"));
        app.publish_json(&msg).await?;
    }
    // The circuit opens: at most the 4 failures before it are dead-lettered.
    let metrics = format!("http://{}/metrics", app.http_addr);
    eventually("the circuit to open", tests::DEADLINE, || {
        let ctx = app.ctx.clone();
        async move { Ok((ctx.breakers.state(name) != State::Closed).then_some(())) }
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let codes: Vec<String> = sqlx::query_scalar("SELECT error_code FROM chunking_failures")
        .fetch_all(&app.pool)
        .await?;
    let dead = codes.len() as i64;
    assert!(
        dead <= 4,
        "{dead} messages dead-lettered while the circuit was open"
    );
    assert!(codes.iter().all(|c| c == code), "{codes:?}");
    let rendered = worker::ops::scrape::render(&app.ctx).await;
    assert!(
        rendered.contains(&format!(
            "chunking_circuit_breaker_state{{strategy=\"{name}\"}} 1"
        )) || rendered.contains(&format!(
            "chunking_circuit_breaker_state{{strategy=\"{name}\"}} 2"
        )),
        "the gauge shows the open circuit ({metrics})"
    );

    // The fault goes away: a trial succeeds and every parked message is stored.
    strategy.switch.store(false, Ordering::SeqCst);
    let expected = DOCS as i64 - dead;
    eventually(
        "the parked messages to be stored",
        Duration::from_secs(120),
        || async {
            let n: i64 = sqlx::query_scalar("SELECT count(*) FROM documents")
                .fetch_one(&app.pool)
                .await?;
            Ok((n == expected).then_some(()))
        },
    )
    .await?;
    assert_eq!(
        app.ctx.breakers.state(name),
        State::Closed,
        "the circuit closed"
    );
    let dead_after: i64 = sqlx::query_scalar("SELECT count(*) FROM chunking_failures")
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(dead_after, dead, "nothing more was dead-lettered");
    let rendered = worker::ops::scrape::render(&app.ctx).await;
    assert!(
        rendered.contains(&format!(
            "chunking_circuit_breaker_state{{strategy=\"{name}\"}} 0"
        )),
        "the gauge shows it closed"
    );
    app.cleanup().await
}
