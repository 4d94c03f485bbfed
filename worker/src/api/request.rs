//! One `POST /v1/chunk`: the media type and the body ([`super::body`]), then
//! checked field by field (400 not JSON, a
//! field of the wrong JSON type or missing; 422 a value that breaks its rule,
//! an unknown profile, granularity or field, with `errors[]` naming each
//! field and the closest valid values; 403 another tenant; 413 a document
//! over `limits.max_document_bytes`; 503 over the memory estimate or needing
//! a GPU that is not there), then the engine on a bounded blocking pool
//! under a deadline (503 past it: the work's result is dropped and its slot
//! freed only when it ends, so stuck work cannot pile up).
//!
//! What the circuit breaker is told: a deadline passed while waiting for a
//! slot of the pool is overload (no verdict on the strategy); one passed
//! while the strategy ran, an internal error or a panic, and output that
//! broke the checklist are the strategy's failures; input the engine refused
//! says nothing about it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};
use shared::{DocumentMeta, Embedder as _, ErrorCode};

use super::auth::Caller;
use super::problem::{closest, FieldError, Kind, Problem};
use super::state::ApiState;
use crate::breaker::Verdict;

/// The body's fields.
const FIELDS: [&str; 10] = [
    "document_id",
    "markdown",
    "html",
    "tei",
    "tenant_id",
    "source_version_id",
    "title",
    "profile",
    "granularity",
    "metadata",
];

/// Estimated peak memory of an operation per byte of markdown: the
/// normalized text, blocks and token index, chunk texts and embed texts
/// with overlap, and the JSON response (measured at 20-30x on the corpus;
/// 64x leaves room).
pub const OPERATION_BYTES_PER_BYTE: u64 = 64;

/// What the document was sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputKind {
    Markdown,
    Html,
    Tei,
}

/// A request ready to run.
#[derive(Debug)]
pub struct Parsed {
    /// The document as sent: Markdown, an HTML page or GROBID TEI XML.
    input: Vec<u8>,
    kind: InputKind,
    /// No `source_version_id` was given: it is derived from the Markdown.
    default_version: bool,
    meta: DocumentMeta,
    profile: String,
    /// The profile is deprecated: its replacement, if named.
    pub deprecated: Option<Option<String>>,
    /// The profile's strategy (its circuit).
    pub strategy: String,
    /// Only the chunks of this granularity are answered, when given.
    granularity: Option<String>,
    /// Each chunk also says why it ends (`?explain=true`).
    pub explain: bool,
}

fn bad(detail: impl Into<String>) -> Problem {
    Problem::new(Kind::BadRequest, detail)
}

/// 422 for one field whose value breaks its rule.
fn invalid_field(name: &str, detail: impl Into<String>) -> Problem {
    let detail = detail.into();
    Problem::new(Kind::Unprocessable, format!("`{name}` {detail}")).with_errors(vec![field(
        name,
        detail,
        Vec::new(),
    )])
}

/// An opaque id's rule (the queue message's): 1..=`max` characters, no
/// control characters.
fn opaque_id(name: &'static str, value: &str, max: usize) -> Result<(), Problem> {
    shared::contract::check_opaque_id(name, value, max).map_err(|e| match e {
        shared::contract::ContractError::Field { reason, .. } => invalid_field(name, reason),
        other => bad(other.to_string()),
    })
}

fn field(name: &str, detail: impl Into<String>, suggestions: Vec<String>) -> FieldError {
    FieldError {
        field: name.to_owned(),
        detail: detail.into(),
        suggestions,
    }
}

fn text<'a>(body: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, Problem> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad(format!("`{name}` must be a string"))),
    }
}

/// Checks the body of a request by `caller`.
pub fn parse(state: &ApiState, caller: &Caller, body: &[u8]) -> Result<Parsed, Problem> {
    let body = std::str::from_utf8(body).map_err(|e| {
        bad(format!(
            "the body is not UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    let value: Value =
        serde_json::from_str(body).map_err(|e| bad(format!("the body is not JSON: {e}")))?;
    let Value::Object(body) = value else {
        return Err(bad("the body must be a JSON object"));
    };
    let known: Vec<String> = FIELDS.iter().map(|f| (*f).to_owned()).collect();
    let unknown: Vec<FieldError> = body
        .keys()
        .filter(|k| !FIELDS.contains(&k.as_str()))
        .map(|k| field(k, "unknown field", closest(k, &known)))
        .collect();
    if !unknown.is_empty() {
        return Err(
            Problem::new(Kind::Unprocessable, "the body has unknown fields").with_errors(unknown),
        );
    }
    let document_id =
        text(&body, "document_id")?.ok_or_else(|| bad("missing field `document_id`"))?;
    opaque_id(
        "document_id",
        document_id,
        shared::contract::MAX_DOCUMENT_ID_CHARS,
    )?;
    let version = text(&body, "source_version_id")?;
    if let Some(v) = version {
        opaque_id(
            "source_version_id",
            v,
            shared::contract::MAX_SOURCE_VERSION_ID_CHARS,
        )?;
    }
    let sent = [
        ("markdown", InputKind::Markdown),
        ("html", InputKind::Html),
        ("tei", InputKind::Tei),
    ]
    .into_iter()
    .map(|(name, kind)| Ok(text(&body, name)?.map(|t| (name, kind, t))))
    .collect::<Result<Vec<_>, Problem>>()?;
    let sent: Vec<(&str, InputKind, &str)> = sent.into_iter().flatten().collect();
    let (source, kind) = match sent.as_slice() {
        [(_, kind, t)] => (*t, *kind),
        [] => return Err(bad("missing field `markdown` (or `html`, or `tei`)")),
        [(first, ..), (second, ..), ..] => {
            return Err(Problem::new(
                Kind::Unprocessable,
                "send the document once: one of `markdown`, `html` and `tei`",
            )
            .with_errors(vec![field(
                second,
                format!("given with `{first}`"),
                vec![(*first).into()],
            )]))
        }
    };
    let markdown = source;
    if let Some(t) = text(&body, "tenant_id")? {
        if !shared::contract::is_tenant_id(t) {
            return Err(invalid_field("tenant_id", "must match ^[a-z0-9-]{3,64}$"));
        }
        if t != caller.tenant_id {
            return Err(Problem::new(
                Kind::Forbidden,
                format!("the token is for tenant {}, not {t}", caller.tenant_id),
            ));
        }
    }
    let settings = &state.settings;
    if markdown.len() as u64 > settings.max_document_bytes {
        return Err(Problem::new(
            Kind::TooLarge,
            format!(
                "the markdown is {} bytes; limits.max_document_bytes is {}",
                markdown.len(),
                settings.max_document_bytes
            ),
        ));
    }
    let estimate = markdown.len() as u64 * OPERATION_BYTES_PER_BYTE;
    if estimate > settings.max_operation_bytes {
        return Err(Problem::new(
            Kind::Unavailable,
            format!(
                "chunking this document would take about {estimate} bytes of memory; limits.max_operation_bytes is {}",
                settings.max_operation_bytes
            ),
        )
        .retry_after(60));
    }
    let chunking = &settings.chunking;
    let engine = &state.engine;
    let profile_name = match text(&body, "profile")? {
        Some(p) => p.to_owned(),
        None => chunking.select(&caller.tenant_id, None, None).to_owned(),
    };
    let Ok(profile) = engine.profile(Some(&profile_name)) else {
        // The usable names are listed only for a refusal, not on every request.
        let usable: Vec<String> = engine
            .profiles()
            .iter()
            .filter(|p| engine.profile(Some(&p.name)).is_ok())
            .map(|p| p.name.clone())
            .collect();
        return Err(Problem::new(
            Kind::Unprocessable,
            format!("unknown profile `{profile_name}`"),
        )
        .with_errors(vec![field(
            "profile",
            "unknown profile",
            closest(&profile_name, &usable),
        )]));
    };
    let granularities: Vec<&str> = profile.granularities().iter().map(|g| g.as_str()).collect();
    let granularity = match text(&body, "granularity")? {
        Some(g) if granularities.contains(&g) => Some(g.to_owned()),
        Some(_) => {
            return Err(Problem::new(
                Kind::Unprocessable,
                format!(
                    "profile {profile_name} chunks at granularit{} {}",
                    if granularities.len() == 1 { "y" } else { "ies" },
                    granularities.join(", ")
                ),
            )
            .with_errors(vec![field(
                "granularity",
                "not a granularity of this profile",
                granularities.iter().map(|g| (*g).to_owned()).collect(),
            )]));
        }
        None => None,
    };
    if profile.chunker().gpu_required() && !chunking.model.as_ref().is_some_and(|m| m.on_gpu()) {
        return Err(Problem::new(
            Kind::Unavailable,
            format!(
                "profile {profile_name} requires a GPU and this server has none (no CPU fallback)"
            ),
        )
        .retry_after(60));
    }
    let deprecated = crate::profiles::note_use(profile).map(|d| d.replacement.clone());
    let mut meta = DocumentMeta {
        tenant_id: caller.tenant_id.clone(),
        document_id: document_id.to_owned(),
        source_version_id: version.unwrap_or_default().to_owned(),
        title: text(&body, "title")?.map(str::to_owned),
        source_url: None,
        file_path: None,
        metadata: None,
    };
    match body.get("metadata") {
        None | Some(Value::Null) => {}
        Some(m @ Value::Object(_)) => crate::commands::offline::with_metadata(&mut meta, m),
        Some(_) => return Err(bad("`metadata` must be a JSON object")),
    }
    Ok(Parsed {
        deprecated,
        granularity,
        explain: false,
        input: markdown.as_bytes().to_vec(),
        kind,
        default_version: version.is_none(),
        meta,
        strategy: profile.strategy.clone(),
        profile: profile_name,
    })
}

/// Chunks a parsed request within the deadline (counted from `started`):
/// the answer, and what it says about the strategy.
pub async fn run(
    state: &Arc<ApiState>,
    parsed: Parsed,
    started: Instant,
) -> (Result<Value, Problem>, Verdict) {
    let deadline = state.settings.api.deadline;
    let retry = deadline.as_secs().max(1);
    let left = deadline.saturating_sub(started.elapsed());
    let asked = Instant::now();
    let permit = match tokio::time::timeout(left, Arc::clone(&state.slots).acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        // Overload: every slot stayed busy until the deadline. The strategy
        // never ran, so this says nothing about it.
        _ => {
            let p = Problem::new(
                Kind::Unavailable,
                format!(
                    "the server is busy: no chunking slot came free within api.deadline_ms ({} ms; api.max_concurrent = {})",
                    deadline.as_millis(),
                    state.settings.api.max_concurrent
                ),
            )
            .retry_after(retry);
            return (Err(p), Verdict::None);
        }
    };
    let engine = Arc::clone(&state.engine);
    let profile = parsed.profile.clone();
    let granularity = parsed.granularity.clone();
    let task = tokio::task::spawn_blocking(move || {
        // The slot is held until the work ends, even when nobody waits for it.
        let _permit = permit;
        let Parsed {
            input,
            kind,
            default_version,
            mut meta,
            profile,
            explain,
            ..
        } = parsed;
        // An HTML page becomes Markdown here, off the runtime (the LangChain-style factory specification):
        // the document the offsets refer to; what it left out is answered.
        let (markdown, left_out) = match kind {
            InputKind::Html => {
                let page = shared::html::to_markdown(&input)?;
                if meta.title.is_none() {
                    meta.title.clone_from(&page.title);
                }
                let left_out = page.dropped_summary();
                (page.markdown.into_bytes(), Some(left_out))
            }
            // GROBID's TEI XML: the paper's Markdown, which the offsets
            // then refer to (as the CLI and the worker read `*.tei.xml`).
            InputKind::Tei => {
                let paper = shared::tei::to_markdown(&input)?;
                if meta.title.is_none() {
                    meta.title = paper.title;
                }
                (paper.markdown.into_bytes(), None)
            }
            InputKind::Markdown => (input, None),
        };
        if default_version {
            meta.source_version_id = crate::commands::offline::default_source_version(&markdown);
        }
        let done = if explain {
            let explained = engine.explain(&markdown, &meta, Some(&profile));
            explained.map(|(doc, why)| (doc, Some(why)))
        } else {
            engine
                .chunk(&markdown, &meta, Some(&profile))
                .map(|doc| (doc, None))
        };
        done.map(|(doc, why)| (doc, why, left_out))
    });
    let left = deadline.saturating_sub(started.elapsed());
    // How long the request waited for its slot: a deadline that passes
    // while the strategy ran counts against the strategy only when the
    // strategy had at least half of it; a slot that came free late is
    // overload, however the race between the wait and the work fell.
    let waited = asked.elapsed();
    let (mut doc, mut why, left_out) = match tokio::time::timeout(left, task).await {
        Ok(Ok(Ok(done))) => done,
        Ok(Ok(Err(e))) => {
            let (kind, verdict) = match e.code() {
                ErrorCode::Internal | ErrorCode::ValidationFailed => {
                    (Kind::Internal, Verdict::Failure)
                }
                // The profile's chat model is down: the strategy fails, and
                // the caller may try again later.
                ErrorCode::LlmUnavailable => (Kind::Unavailable, Verdict::Failure),
                _ => (Kind::Unprocessable, Verdict::None),
            };
            let mut problem = Problem::new(kind, format!("{}: {e}", e.code().as_str()));
            if e.code() == ErrorCode::LlmUnavailable {
                problem = problem.retry_after(retry);
            }
            return (Err(problem), verdict);
        }
        Ok(Err(_)) => {
            return (
                Err(Problem::new(
                    Kind::Internal,
                    "the chunking engine failed (panicked)",
                )),
                Verdict::Failure,
            )
        }
        // The strategy ran past the deadline: its failure, unless most of
        // the deadline went on waiting for a slot.
        Err(_) => {
            let late_slot = waited * 2 > deadline;
            let detail = if late_slot {
                format!(
                    "the operation did not finish within api.deadline_ms ({} ms): the server was busy, {} ms went on waiting for a chunking slot",
                    deadline.as_millis(),
                    waited.as_millis()
                )
            } else {
                format!(
                    "the operation did not finish within api.deadline_ms ({} ms)",
                    deadline.as_millis()
                )
            };
            let p = Problem::new(Kind::Unavailable, detail).retry_after(retry);
            let verdict = if late_slot {
                Verdict::None
            } else {
                Verdict::Failure
            };
            return (Err(p), verdict);
        }
    };
    if let Some(g) = &granularity {
        let keep: Vec<bool> = doc
            .chunks
            .iter()
            .map(|c| c.granularity.as_str() == g)
            .collect();
        let mut k = keep.iter();
        why.iter_mut()
            .for_each(|w| w.retain(|_| *k.next().unwrap_or(&false)));
        doc.chunks.retain(|c| c.granularity.as_str() == g);
    }
    let chunker_version = doc.chunks.first().map(|c| c.chunker_version.clone());
    let tokenizer = doc.chunks.first().map(|c| c.tokenizer.clone());
    let profile_info = state.engine.profile(Some(&profile)).ok();
    let mut answer = json!({
        "chunks": super::explain::chunks_json(&doc.chunks, why.as_deref()),
        "profile": profile,
        "chunker_version": chunker_version.or_else(|| profile_info.map(|p| p.chunker_version.clone())),
        "tokenizer": tokenizer.or_else(|| profile_info.map(|p| p.tokenizer.name().to_owned())),
        "duration_ms": started.elapsed().as_millis() as u64,
    });
    if let Some(left) = left_out {
        answer["html_left_out"] = json!(left);
    }
    (Ok(answer), Verdict::Success)
}
