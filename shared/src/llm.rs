//! Chat-completion models as the `llm_chaptering` strategy sees them: the
//! [`ChatTransport`] trait (a request in, the answer's text out) and a
//! deterministic [`ToyChat`] for tests.
//!
//! This crate stays pure: the HTTP client of an OpenAI-compatible
//! `/v1/chat/completions` endpoint (time-outs, retries with back-off on
//! 429 and 5xx, the API key from a file or the environment) lives in the
//! worker, which implements this trait and gives it to the engine
//! ([`crate::EngineBuilder::chat`]). Nothing here opens a connection.

use std::fmt;
use std::time::Duration;

/// Why a model could not answer (unreachable, timed out, refused, rate
/// limited after every retry, an answer that is not a chat completion).
/// The message names the endpoint and what happened, never document text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LlmError(pub String);

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    /// Its text.
    pub content: String,
}

/// One chat-completion request and how to send it.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The full URL of the chat-completions endpoint
    /// (`http://host:port/v1/chat/completions`).
    pub endpoint: String,
    /// The model name the endpoint serves.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// The most tokens of the answer.
    pub max_answer_tokens: usize,
    /// Sampling seed (sent as `seed`; temperature is always 0).
    pub seed: u64,
    /// Time allowed for one attempt (connect, send, answer).
    pub timeout: Duration,
    /// Attempts in all: a time-out, a refused connection, 429 or 5xx is
    /// tried again, after an exponential back-off from `retry_base`
    /// (doubling, at most 30 s; a `Retry-After` header is honoured up to
    /// that bound).
    pub attempts: u32,
    /// The first back-off.
    pub retry_base: Duration,
    /// A file holding the API key (sent as `Authorization: Bearer`).
    pub api_key_file: Option<String>,
    /// An environment variable holding the API key, when no file is named.
    pub api_key_env: Option<String>,
}

/// Sends chat-completion requests.
///
/// Contract: `complete` returns the text of the first choice's message, or
/// an error once every attempt failed; it never returns a partial answer
/// as success unless the endpoint did (a truncated answer is the caller's
/// to judge).
pub trait ChatTransport: Send + Sync + fmt::Debug {
    /// Sends `request`; the answer's text.
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError>;

    /// A proposed boundary was discarded (outside the document, no
    /// coherence dip, inside a table or code block, right after a heading):
    /// the shell logs it (unit index and reason only, never document text).
    fn discarded(&self, model: &str, unit: usize, reason: &str) {
        let _ = (model, unit, reason);
    }
}

/// A deterministic stand-in for a chat model, for tests and examples: it
/// reads the numbered units of an `llm_chaptering` prompt and proposes a
/// boundary before every heading unit and every `every`-th unit. It knows
/// no meaning.
#[derive(Debug, Clone)]
pub struct ToyChat {
    /// Propose a boundary before every `every`-th unit as well (0: headings
    /// only).
    pub every: usize,
}

impl Default for ToyChat {
    fn default() -> Self {
        Self { every: 6 }
    }
}

impl ChatTransport for ToyChat {
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let prompt = request
            .messages
            .last()
            .map(|m| m.content.as_str())
            .unwrap_or("");
        let mut boundaries = Vec::new();
        for line in prompt.lines() {
            let Some(rest) = line.strip_prefix('[') else {
                continue;
            };
            let Some((num, after)) = rest.split_once(']') else {
                continue;
            };
            let Ok(i) = num.parse::<usize>() else {
                continue;
            };
            let heading = after.trim_start().starts_with("(heading");
            if i > 0 && (heading || (self.every > 0 && i % self.every == 0)) {
                boundaries.push(i.to_string());
            }
        }
        Ok(format!("{{\"boundaries\": [{}]}}", boundaries.join(", ")))
    }
}
