//! The API's OpenAPI 3.1 description, derived from the code (`utoipa`):
//! the request and response types below mirror what the handlers read and
//! write, and every status a handler can answer is listed. The request's
//! rules are stated as the server checks them ([`constrain`]): lengths and
//! patterns of the ids, exactly one of `markdown`, `html` and `tei`, no unknown
//! fields, and the enums of this server's usable profiles and of each
//! profile's granularities, so a request the description allows is one the
//! server accepts (Schemathesis checks both ways in CI). Served at
//! `/v1/openapi.json`; `docs/openapi.json` is the copy a server with the
//! default settings serves (a test keeps them equal and checks every
//! documented status against the running server).

#![allow(dead_code)] // reason: the types and functions exist to be described

use serde_json::{json, Value};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// A TEI document the description shows (and a schema-driven client may
/// send: that `tei` is well-formed TEI is a rule of XML no JSON Schema
/// states).
const TEI_EXAMPLE: &str = "<TEI xmlns=\"http://www.tei-c.org/ns/1.0\"><teiHeader><fileDesc><titleStmt><title>A paper</title></titleStmt></fileDesc></teiHeader><text><body><div><head n=\"1\">Introduction</head><p>Chunks follow the sections.</p></div></body></text></TEI>";

/// `POST /v1/chunk` body.
#[derive(ToSchema)]
struct ChunkRequest {
    /// Opaque document id (required).
    document_id: String,
    /// The Markdown (this or `html`).
    markdown: Option<String>,
    /// An HTML page instead of `markdown`: converted to Markdown (headings,
    /// lists, tables, code, links kept; scripts, styles, navigation and
    /// comments left out), which the chunks' offsets then refer to.
    html: Option<String>,
    /// GROBID's TEI XML (a scientific paper) instead of `markdown`: read
    /// into Markdown (title, abstract, sections, figures, tables, page
    /// breaks), which the chunks' offsets then refer to.
    tei: Option<String>,
    /// Must equal the token's tenant when given.
    tenant_id: Option<String>,
    /// Default: `sha256:` + 16 hex digits of the markdown's sha256 (as the CLI).
    source_version_id: Option<String>,
    /// Document title for breadcrumbs (default: the first H1).
    title: Option<String>,
    /// Chunking profile (default: the tenant's, as for queue messages).
    profile: Option<String>,
    /// Answer only the chunks of this granularity (one of the profile's
    /// `granularities`; all when absent).
    granularity: Option<String>,
    /// Document metadata carried onto every chunk (title, source_url, ...).
    metadata: Option<serde_json::Value>,
}

/// `POST /v1/chunk` answer.
#[derive(ToSchema)]
struct ChunkResponse {
    /// One object per chunk: exactly the CLI's JSONL record
    /// (`schemas/chunk-record.schema.json`); with `?explain=true` each also
    /// has `reason` (why the chunk ends, an object tagged by `rule`:
    /// `heading`, `size_budget`, `table_boundary`, `semantic_dip`, ...)
    /// and `explanation` (the same as a sentence).
    chunks: Vec<serde_json::Value>,
    /// The profile used.
    profile: String,
    /// `strategy:version`.
    chunker_version: String,
    /// `cl100k_base` or `o200k_base`.
    tokenizer: String,
    /// Time from request to answer.
    duration_ms: u64,
    /// For `html` input: what the conversion left out (`2 script, 1 nav`).
    html_left_out: Option<String>,
}

/// One invalid field of a 422.
#[derive(ToSchema)]
struct FieldError {
    field: String,
    detail: String,
    /// Valid values, closest first (absent when there are none).
    suggestions: Option<Vec<String>>,
}

/// RFC 7807 Problem Details (`application/problem+json`).
#[derive(ToSchema)]
struct Problem {
    /// `urn:chunk-worker:problem:<kind>`.
    #[schema(rename = "type")]
    type_uri: String,
    title: String,
    status: u16,
    detail: String,
    instance: String,
    correlation_id: String,
    /// 422 only.
    errors: Option<Vec<FieldError>>,
}

/// A usable profile.
#[derive(ToSchema)]
struct ProfileInfo {
    name: String,
    description: String,
    strategy: String,
    chunker_version: String,
    tokenizer: String,
    granularity: String,
    /// Every granularity its chunks may have (multi-granularity profiles).
    granularities: Vec<String>,
    experimental: bool,
    deprecated: bool,
    replacement: Option<String>,
}

/// `GET /v1/profiles` answer.
#[derive(ToSchema)]
struct ProfileList {
    profiles: Vec<ProfileInfo>,
    default_profile: String,
}

/// Chunk one document; nothing is stored.
#[utoipa::path(
    post,
    path = "/v1/chunk",
    request_body = ChunkRequest,
    params(
        ("explain" = Option<bool>, Query, description = "`true`: each chunk also says why it ends (`reason`, `explanation`), as `chunk-worker explain` does; the chunks are the same. Default `false`: the answer has no such fields."),
    ),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The chunks (Deprecation and Link headers for a deprecated profile)", body = ChunkResponse),
        (status = 400, description = "Not JSON, not UTF-8, a missing field, or a query parameter other than explain=true|false", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No token, or one that does not verify", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "No ingest:write scope, or another tenant", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "The document over limits.max_document_bytes, or the body over six times that plus 1 MiB", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "A body not declared as JSON", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A value that breaks its rule; an unknown profile, granularity or field (errors[] names each field, with suggestions)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Over a rate limit (Retry-After)", body = Problem, content_type = "application/problem+json"),
        (status = 500, description = "The engine failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "Circuit open, past the deadline, over the memory estimate, or no GPU (Retry-After)", body = Problem, content_type = "application/problem+json"),
    )
)]
fn chunk() {}

/// The profiles the caller may use.
#[utoipa::path(
    get,
    path = "/v1/profiles",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The usable profiles", body = ProfileList),
        (status = 401, description = "No token, or one that does not verify", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "No ingest:write scope", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Over a rate limit (Retry-After)", body = Problem, content_type = "application/problem+json"),
    )
)]
fn profiles() {}

/// One profile.
#[utoipa::path(
    get,
    path = "/v1/profiles/{name}",
    params(("name" = String, Path, description = "Profile name")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The profile", body = ProfileInfo),
        (status = 401, description = "No token, or one that does not verify", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No usable profile of that name", body = Problem, content_type = "application/problem+json"),
    )
)]
fn profile() {}

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        if let Some(c) = openapi.components.as_mut() {
            c.add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .bearer_format("JWT")
                        .description(Some(
                            "A JWT with the ingest:write scope and the tenant claim",
                        ))
                        .build(),
                ),
            );
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "chunk-worker API", version = "1.0", description = "Synchronous chunking: the queue worker's engine, profiles and ids, nothing stored. Every response carries X-API-Version: 1.0; Accept: application/vnd.medkg.chunk.v1+json is echoed as the response type."),
    paths(chunk, profiles, profile),
    components(schemas(ChunkRequest, ChunkResponse, Problem, FieldError, ProfileInfo, ProfileList)),
    modifiers(&Bearer)
)]
struct ApiDoc;

/// The description as pretty JSON, with the rules of a server running
/// `engine` (what `/v1/openapi.json` serves).
pub fn json_for(engine: &shared::Engine, default_profile: &str) -> String {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    constrain(&mut doc, engine, default_profile);
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// States the rules [`super::request::parse`] checks on `ChunkRequest`.
fn constrain(doc: &mut Value, engine: &shared::Engine, default_profile: &str) {
    let Some(schema) = doc.pointer_mut("/components/schemas/ChunkRequest") else {
        return;
    };
    let usable: Vec<&shared::Profile> = engine
        .profiles()
        .iter()
        .filter(|p| engine.profile(Some(&p.name)).is_ok())
        .collect();
    let names: Vec<Value> = usable.iter().map(|p| json!(p.name)).collect();
    let mut every_granularity: Vec<&str> = usable
        .iter()
        .flat_map(|p| p.granularities().into_iter().map(|g| g.as_str()))
        .collect();
    every_granularity.sort_unstable();
    every_granularity.dedup();
    let control_free = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";
    let text = |min: usize, max: Option<usize>, description: &str| {
        let mut t = json!({"type": "string", "minLength": min, "pattern": control_free, "description": description});
        if let Some(max) = max {
            t["maxLength"] = json!(max);
        }
        t
    };
    let nullable =
        |t: &str, description: &str| json!({"type": [t, "null"], "description": description});
    schema["additionalProperties"] = json!(false);
    schema["required"] = json!(["document_id"]);
    schema["properties"] = json!({
        "document_id": text(1, Some(shared::contract::MAX_DOCUMENT_ID_CHARS), "Opaque document id: 1 to 256 characters, no control characters."),
        "markdown": nullable("string", "The Markdown (exactly one of `markdown`, `html` and `tei`)."),
        "html": nullable("string", "An HTML page instead of `markdown`: converted to Markdown (headings, lists, tables, code, links kept; scripts, styles, navigation and comments left out), which the chunks' offsets then refer to."),
        "tei": {"type": ["string", "null"], "description": "GROBID's TEI XML (a scientific paper) instead of `markdown`: read into Markdown (title, abstract, sections, figures, tables, page breaks), which the chunks' offsets then refer to. XML that is not well-formed TEI is answered 422.", "examples": [TEI_EXAMPLE]},
        "tenant_id": {"type": ["string", "null"], "pattern": "^[a-z0-9-]{3,64}$", "description": "Must equal the token's tenant when given."},
        "source_version_id": {"type": ["string", "null"], "minLength": 1, "maxLength": shared::contract::MAX_SOURCE_VERSION_ID_CHARS, "pattern": control_free, "description": "1 to 128 characters, no control characters. Default: `sha256:` + 16 hex digits of the markdown's sha256 (as the CLI)."},
        "title": nullable("string", "Document title for breadcrumbs (default: the first H1)."),
        "profile": {"type": ["string", "null"], "enum": names.iter().cloned().chain([Value::Null]).collect::<Vec<_>>(), "description": format!("Chunking profile, one this server can use (default: the tenant's, as for queue messages; `{default_profile}` unless a tenant rule says otherwise).")},
        "granularity": {"type": ["string", "null"], "enum": every_granularity.iter().map(|g| json!(g)).chain([Value::Null]).collect::<Vec<_>>(), "description": "Answer only the chunks of this granularity, one of the profile's `granularities` (all when absent)."},
        "metadata": {"type": ["object", "null"], "description": "Document metadata carried onto every chunk (title, source_url, ...)."},
    });
    // Exactly one of the three documents is a string.
    schema["oneOf"] = json!([
        {"required": ["markdown"], "properties": {"markdown": {"type": "string"}}},
        {"required": ["html"], "properties": {"html": {"type": "string"}}},
        {"required": ["tei"], "properties": {"tei": {"type": "string"}}},
    ]);
    // A granularity is one of its profile's: one rule per set of
    // granularities (the default profile's when none is named).
    let mut groups: Vec<(Vec<&str>, Vec<&str>)> = Vec::new();
    for p in &usable {
        let gs: Vec<&str> = p.granularities().into_iter().map(|g| g.as_str()).collect();
        match groups.iter_mut().find(|(g, _)| *g == gs) {
            Some((_, members)) => members.push(&p.name),
            None => groups.push((gs, vec![&p.name])),
        }
    }
    let mut rules: Vec<Value> = groups
        .iter()
        .map(|(gs, members)| {
            json!({
                "if": {"required": ["profile"], "properties": {"profile": {"enum": members}}},
                "then": {"properties": {"granularity": {"enum": gs.iter().map(|g| json!(g)).chain([Value::Null]).collect::<Vec<_>>()}}},
            })
        })
        .collect();
    if let Ok(default) = engine.profile(Some(default_profile)) {
        let gs: Vec<Value> = default
            .granularities()
            .iter()
            .map(|g| json!(g.as_str()))
            .chain([Value::Null])
            .collect();
        rules.push(json!({
            "if": {"properties": {"profile": {"type": "null"}}},
            "then": {"properties": {"granularity": {"enum": gs}}},
        }));
    }
    schema["allOf"] = Value::Array(rules);
}
