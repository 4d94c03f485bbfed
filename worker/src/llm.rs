//! The chat-completions client of `llm_chaptering` profiles: an
//! OpenAI-compatible `POST /v1/chat/completions` over HTTP(S), blocking
//! (chunking runs on blocking threads: the CLI's, the worker's and the
//! API's `spawn_blocking`).
//!
//! Each request is sent at temperature 0 with the profile's seed and
//! answer limit. A time-out, a refused or dropped connection, 429 and 5xx
//! are tried again after an exponential back-off (`retry_base` doubling, at
//! most 30 s; a `Retry-After` in seconds is honoured up to 30 s), `attempts`
//! in all; any other status fails at once. The API key is read from the
//! profile's `api_key_file`, else its `api_key_env` variable
//! (`CHUNK_WORKER_LLM_API_KEY` by default), and sent as a bearer token;
//! without either, no `Authorization` header is sent (a local server).
//! `CHUNK_WORKER_LLM_ENDPOINT`, when set, replaces every profile's
//! `endpoint` (to point the built-in profile at a server without writing a
//! profile file).
//! Errors name the endpoint, the status or failure and the attempts, never
//! the prompt or the answer (they hold document text).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use backon::BackoffBuilder;
use shared::llm::{ChatRequest, ChatTransport, LlmError};

/// The longest back-off between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The HTTP client, built on first use (never dropped: a blocking client
/// must not be dropped on an async thread).
static CLIENT: OnceLock<Result<reqwest::blocking::Client, String>> = OnceLock::new();

fn client() -> Result<&'static reqwest::blocking::Client, LlmError> {
    CLIENT
        .get_or_init(|| {
            // ring is the crypto provider of every TLS client here.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::blocking::Client::builder()
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(|e| LlmError(e.clone()))
}

/// The engine's chat client (one per process).
pub fn http_chat() -> Arc<dyn ChatTransport> {
    static CHAT: OnceLock<Arc<HttpChat>> = OnceLock::new();
    CHAT.get_or_init(|| Arc::new(HttpChat)).clone()
}

/// An OpenAI-compatible chat-completions client.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpChat;

/// The environment variable that replaces every profile's endpoint.
pub const ENDPOINT_ENV: &str = "CHUNK_WORKER_LLM_ENDPOINT";

/// The bearer token, if the request names one that exists.
fn api_key(req: &ChatRequest) -> Result<Option<String>, LlmError> {
    if let Some(path) = &req.api_key_file {
        let key = std::fs::read_to_string(path)
            .map_err(|e| LlmError(format!("cannot read the API key file {path}: {e}")))?;
        return Ok(Some(key.trim().to_owned()).filter(|k| !k.is_empty()));
    }
    Ok(req
        .api_key_env
        .as_deref()
        .and_then(|var| std::env::var(var).ok())
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty()))
}

/// The request body.
fn body(req: &ChatRequest) -> serde_json::Value {
    let messages: Vec<serde_json::Value> = req
        .messages
        .iter()
        .map(|m| serde_json::json!({"role": m.role, "content": m.content}))
        .collect();
    serde_json::json!({
        "model": req.model,
        "messages": messages,
        "temperature": 0,
        "seed": req.seed,
        "max_tokens": req.max_answer_tokens,
        "stream": false,
    })
}

/// The first choice's text of a chat-completion answer.
fn content(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    v.get("choices")?
        .get(0)?
        .get("message")?
        .get("content")?
        .as_str()
        .map(str::to_owned)
}

/// The `error.message` of an error answer, shortened (never the whole body).
fn error_message(bytes: &[u8]) -> String {
    let v: Option<serde_json::Value> = serde_json::from_slice(bytes).ok();
    let msg = v
        .as_ref()
        .and_then(|v| v.get("error"))
        .and_then(|e| e.get("message").or(Some(e)))
        .and_then(|m| m.as_str())
        .unwrap_or("");
    let short: String = msg.chars().take(160).collect();
    if short.is_empty() {
        String::new()
    } else {
        format!(": {short}")
    }
}

/// What one attempt came to.
enum Attempt {
    Answer(String),
    /// Worth trying again; the server's `Retry-After`, if any.
    Again(String, Option<Duration>),
    Fail(String),
}

fn attempt(
    client: &reqwest::blocking::Client,
    endpoint: &str,
    req: &ChatRequest,
    key: Option<&str>,
    body: &[u8],
) -> Attempt {
    let mut rb = client
        .post(endpoint)
        .timeout(req.timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_vec());
    if let Some(k) = key {
        rb = rb.bearer_auth(k);
    }
    let resp = match rb.send() {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return Attempt::Again(
                format!("timed out after {} ms", req.timeout.as_millis()),
                None,
            )
        }
        Err(e) => return Attempt::Again(format!("request failed ({})", root_cause(&e)), None),
    };
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let bytes = match resp.bytes() {
        Ok(b) => b,
        Err(e) if e.is_timeout() => {
            return Attempt::Again(
                format!("timed out after {} ms", req.timeout.as_millis()),
                None,
            )
        }
        Err(e) => {
            return Attempt::Again(
                format!("reading the answer failed ({})", root_cause(&e)),
                None,
            )
        }
    };
    if status.is_success() {
        return match content(&bytes) {
            Some(text) => Attempt::Answer(text),
            None => Attempt::Fail(format!(
                "HTTP {status}, but the answer ({} bytes) is not a chat completion (no choices[0].message.content)",
                bytes.len()
            )),
        };
    }
    let what = format!("HTTP {status}{}", error_message(&bytes));
    if status.as_u16() == 429 || status.is_server_error() {
        Attempt::Again(what, retry_after)
    } else {
        Attempt::Fail(what)
    }
}

/// The innermost cause of a reqwest error (`connection refused`).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

impl ChatTransport for HttpChat {
    fn complete(&self, req: &ChatRequest) -> Result<String, LlmError> {
        let client = client()?;
        let endpoint = std::env::var(ENDPOINT_ENV)
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| req.endpoint.clone());
        let key = api_key(req)?;
        let body = serde_json::to_vec(&body(req))
            .map_err(|e| LlmError(format!("cannot encode the request: {e}")))?;
        let mut delays = backon::ExponentialBuilder::default()
            .with_min_delay(req.retry_base)
            .with_max_delay(MAX_BACKOFF)
            .with_factor(2.0)
            .with_max_times(usize::MAX)
            .build();
        let attempts = req.attempts.max(1);
        let mut last = String::new();
        for n in 1..=attempts {
            match attempt(client, &endpoint, req, key.as_deref(), &body) {
                Attempt::Answer(text) => return Ok(text),
                Attempt::Fail(why) => {
                    return Err(LlmError(format!(
                        "POST {endpoint} (model {:?}): {why}",
                        req.model
                    )))
                }
                Attempt::Again(why, retry_after) => {
                    tracing::warn!(
                        endpoint = %endpoint,
                        attempt = n,
                        attempts,
                        reason = %why,
                        "the chat model did not answer; trying again"
                    );
                    last = why;
                    if n < attempts {
                        let wait = delays.next().unwrap_or(MAX_BACKOFF);
                        let wait = retry_after.map_or(wait, |r| r.max(wait)).min(MAX_BACKOFF);
                        std::thread::sleep(wait);
                    }
                }
            }
        }
        Err(LlmError(format!(
            "POST {endpoint} (model {:?}): {last}, after {attempts} attempt(s)",
            req.model
        )))
    }

    fn discarded(&self, model: &str, unit: usize, reason: &str) {
        tracing::info!(
            model,
            unit,
            reason,
            "llm_chaptering: discarded a proposed boundary as hallucinated"
        );
    }
}
