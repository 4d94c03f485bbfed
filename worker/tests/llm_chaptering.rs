//! `llm_chaptering` through the worker's HTTP client against a local
//! chat-completions endpoint (`testkit::chat`) answering from recorded
//! answers: good, partial (cut off), malformed and hallucinated answers,
//! time-outs, 429 and 5xx (retried with back-off, then `LLM_UNAVAILABLE`),
//! a refused connection, the API key, the cache, threads, `explain`, and
//! the CLI's exit status. No test reaches a real model.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use shared::llm::{ChatRequest, ChatTransport, LlmError};
use shared::{DocumentMeta, EndReason, Engine, ErrorCode};
use testkit::chat::{ChatServer, Reply};

const COOKING: &str = "Start the sauce by melting butter in a heavy pan over low heat. \
Add the chopped onions and garlic and cook them until they turn soft and golden. \
A pinch of salt draws moisture out of the onions and keeps them from burning. \
Stir in the crushed tomatoes, fresh basil and a spoonful of sugar to balance the acidity. \
Let the sauce simmer gently for twenty minutes while the pasta water comes to a boil.";

const ASTRONOMY: &str =
    "Astronomers point large telescopes at distant galaxies to measure their light. \
The telescope mirror gathers faint light from stars billions of years old. \
Spectra of distant galaxies shift toward red as the universe expands. \
Astronomers map the galaxies to learn how the universe formed its structure. \
Space telescopes observe the stars above the blurring of the atmosphere.";

/// Units: 0 the title, 1-5 cooking, 6-10 astronomy, 11 the table,
/// 12 a heading, 13 its sentence.
fn document() -> String {
    format!(
        "# Guide\n\n{COOKING}\n\n{ASTRONOMY}\n\n| Planet | Moons |\n| --- | --- |\n| Mars | 2 |\n| Jupiter | 95 |\n\n## Notes\n\nTelescopes need dark skies far from city lights.\n"
    )
}

/// The first words of the astronomy paragraph (unit 6).
const SECOND: &str = "Astronomers point large telescopes";

fn profile(url: &str, model: &str, extra: &str) -> String {
    format!(
        "name = \"llm-test\"\nstrategy = \"llm_chaptering\"\n[params]\ntarget_tokens = 150\nhard_max_tokens = 300\nmin_tokens = 10\nendpoint = \"{url}\"\nmodel = \"{model}\"\ncoherence = \"lexical\"\ntimeout_ms = 400\nattempts = 3\nretry_base_ms = 10\n{extra}"
    )
}

/// The worker's HTTP client, recording what the strategy discards.
#[derive(Debug, Default)]
struct Recording {
    discarded: Mutex<Vec<(usize, String)>>,
}

impl ChatTransport for Recording {
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        worker::llm::HttpChat.complete(request)
    }
    fn discarded(&self, _model: &str, unit: usize, reason: &str) {
        self.discarded
            .lock()
            .unwrap()
            .push((unit, reason.to_owned()));
    }
}

fn engine(profile_toml: &str, chat: Arc<dyn ChatTransport>) -> Engine {
    Engine::builder()
        .experimental(true)
        .chat(chat)
        .profile_source("llm-test.toml", profile_toml)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn chunk(engine: &Engine) -> Result<Vec<String>, shared::ChunkError> {
    let out = engine.chunk(
        document().as_bytes(),
        &DocumentMeta::default(),
        Some("llm-test"),
    )?;
    Ok(out.chunks.into_iter().map(|c| c.chunk_text).collect())
}

fn answering(answers: &'static [&'static str]) -> ChatServer {
    ChatServer::start(move |n, _| Reply::answer(answers[n.min(answers.len() - 1)]))
}

#[test]
fn a_good_answer_sets_the_boundary_and_is_asked_once_per_document() {
    let server = answering(&["{\"boundaries\": [6]}"]);
    let e = engine(
        &profile(server.url(), "m1", ""),
        Arc::new(Recording::default()),
    );
    let texts = chunk(&e).unwrap();
    assert!(texts.iter().any(|t| t.starts_with(SECOND)), "{texts:?}");
    // The prompt numbers the units and states the limit.
    let body: serde_json::Value = serde_json::from_str(&server.bodies()[0]).unwrap();
    let prompt = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.starts_with("Section limit: 1200 tokens."),
        "{prompt}"
    );
    assert!(prompt.contains("[6] (sentence, "), "{prompt}");
    assert!(prompt.contains("[11] (block, "), "{prompt}");
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["model"], "m1");
    // Cached: the same document again asks nothing, and chunks the same.
    assert_eq!(chunk(&e).unwrap(), texts);
    assert_eq!(server.requests(), 1);
    // Threads share the cache and agree byte for byte.
    let runs: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| chunk(&e).unwrap())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(runs.iter().all(|r| *r == texts));
    assert_eq!(server.requests(), 1);
    // Another model is another key.
    let other = engine(
        &profile(server.url(), "m2", ""),
        Arc::new(Recording::default()),
    );
    assert_eq!(chunk(&other).unwrap(), texts);
    assert_eq!(server.requests(), 2);
    // explain names the model's boundary.
    let (_, reasons) = e
        .explain(
            document().as_bytes(),
            &DocumentMeta::default(),
            Some("llm-test"),
        )
        .unwrap();
    assert!(
        reasons
            .iter()
            .any(|r| matches!(r, EndReason::ModelBoundary { model, .. } if model == "m1")),
        "{reasons:?}"
    );
    assert_eq!(server.requests(), 2, "explain reuses the cached answer");
}

#[test]
fn hallucinated_boundaries_are_discarded_and_reported() {
    let server = answering(&["```json\n{\"boundaries\": [1, 6, 99, -2, \"x\", 13]}\n```"]);
    let rec = Arc::new(Recording::default());
    let e = engine(&profile(server.url(), "m", ""), rec.clone());
    let texts = chunk(&e).unwrap();
    assert!(texts.iter().any(|t| t.starts_with(SECOND)), "{texts:?}");
    let seen = rec.discarded.lock().unwrap().clone();
    for (unit, why) in [
        (1, "right after a heading"),
        (99, "outside the document"),
        (0, "outside the document"),
        (13, "right after a heading"),
        (0, "entries that are not unit numbers"),
    ] {
        assert!(
            seen.iter().any(|(u, w)| *u == unit && w == why),
            "{unit} {why}: {seen:?}"
        );
    }
}

#[test]
fn a_cut_off_answer_keeps_its_complete_numbers() {
    let server = answering(&["{\"boundaries\": [6, 1"]);
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    let texts = chunk(&e).unwrap();
    assert!(texts.iter().any(|t| t.starts_with(SECOND)), "{texts:?}");
}

#[test]
fn a_malformed_answer_is_asked_again_then_fails_clearly() {
    let server = answering(&["The sections look fine to me.", "{\"boundaries\": [6]}"]);
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    assert!(chunk(&e).unwrap().iter().any(|t| t.starts_with(SECOND)));
    assert_eq!(server.requests(), 2);

    let server = answering(&["no list here"]);
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    let err = chunk(&e).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
    assert!(err.to_string().contains("without a readable"), "{err}");
    assert_eq!(server.requests(), 2, "answer_attempts = 2");
    // A failure is not cached: the next call asks again.
    assert!(chunk(&e).is_err());
    assert_eq!(server.requests(), 4);
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_back_off() {
    let server = ChatServer::start(|n, _| match n {
        0 => Reply::status(429, "{\"error\": {\"message\": \"slow down\"}}")
            .header("Retry-After", "0"),
        1 => Reply::status(503, "unavailable"),
        _ => Reply::answer("{\"boundaries\": [6]}"),
    });
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    assert!(chunk(&e).unwrap().iter().any(|t| t.starts_with(SECOND)));
    assert_eq!(server.requests(), 3);

    let server = ChatServer::start(|_, _| {
        Reply::status(429, "{\"error\": {\"message\": \"rate limit reached\"}}")
    });
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    let err = chunk(&e).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
    let msg = err.to_string();
    assert!(
        msg.contains("HTTP 429") && msg.contains("rate limit reached"),
        "{msg}"
    );
    assert!(msg.contains("after 3 attempt(s)"), "{msg}");
    assert_eq!(server.requests(), 3);
}

#[test]
fn time_outs_and_refused_connections_fail_after_every_attempt() {
    let server = ChatServer::start(|_, _| {
        Reply::answer("{\"boundaries\": [6]}").after(Duration::from_millis(1500))
    });
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    let err = chunk(&e).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
    assert!(err.to_string().contains("timed out after 400 ms"), "{err}");
    assert_eq!(server.requests(), 3);

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let e = engine(&profile(&url, "m", ""), Arc::new(Recording::default()));
    let err = chunk(&e).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmUnavailable);
    assert!(err.to_string().contains(&url), "{err}");
}

#[test]
fn other_client_errors_fail_at_once() {
    let server = ChatServer::start(|_, _| {
        Reply::status(401, "{\"error\": {\"message\": \"invalid api key\"}}")
    });
    let e = engine(
        &profile(server.url(), "m", ""),
        Arc::new(Recording::default()),
    );
    let err = chunk(&e).unwrap_err();
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    assert_eq!(server.requests(), 1);
}

#[test]
fn the_api_key_comes_from_the_key_file() {
    let server = answering(&["{\"boundaries\": [6]}"]);
    let dir = std::env::temp_dir().join(format!("llm-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, "sk-test-123\n").unwrap();
    let extra = format!("api_key_file = \"{}\"\n", key.display());
    let e = engine(
        &profile(server.url(), "m", &extra),
        Arc::new(Recording::default()),
    );
    chunk(&e).unwrap();
    assert_eq!(
        server.authorizations(),
        vec![Some("Bearer sk-test-123".to_owned())]
    );
    // No key anywhere: no header.
    let e = engine(
        &profile(
            server.url(),
            "m2",
            "api_key_env = \"CHUNK_WORKER_TEST_NO_SUCH_KEY\"\n",
        ),
        Arc::new(Recording::default()),
    );
    chunk(&e).unwrap();
    assert_eq!(server.authorizations()[1], None);
}

#[test]
fn the_cli_exits_with_llm_unavailable_when_no_model_answers() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!("llm-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (doc, prof) = (dir.join("doc.md"), dir.join("llm.toml"));
    std::fs::write(&doc, document()).unwrap();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    std::fs::write(&prof, profile(&url, "m", "")).unwrap();
    let run = |env: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chunk-worker"));
        cmd.args(["chunk", "--experimental", "--profile-file"])
            .arg(&prof)
            .args(["--profile", "llm-test"])
            .arg(&doc)
            .env_remove("CHUNK_WORKER_LLM_ENDPOINT");
        if let Some(url) = env {
            cmd.env("CHUNK_WORKER_LLM_ENDPOINT", url);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LLM_UNAVAILABLE"), "{stderr}");
    // The environment points the profile at a server that answers.
    let server = answering(&["{\"boundaries\": [6]}"]);
    let out = run(Some(server.url()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(SECOND));
    assert_eq!(server.requests(), 1);
}
