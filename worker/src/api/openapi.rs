//! The API's OpenAPI 3.1 description, derived from the code (`utoipa`):
//! the request and response types below mirror what the handlers read and
//! write, and every status a handler can answer is listed. Served at
//! `/v1/openapi.json`; `docs/openapi.json` is the committed copy (a test
//! keeps it equal to this and checks every documented status against the
//! running server).

#![allow(dead_code)] // reason: the types and functions exist to be described

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

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
    /// (`schemas/chunk-record.schema.json`).
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
    /// Valid values, closest first.
    suggestions: Vec<String>,
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
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The chunks (Deprecation and Link headers for a deprecated profile)", body = ChunkResponse),
        (status = 400, description = "Not JSON, not UTF-8, or a missing field", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No token, or one that does not verify", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "No ingest:write scope, or another tenant", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Over limits.max_document_bytes", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Unknown profile, granularity or field (errors[] with suggestions)", body = Problem, content_type = "application/problem+json"),
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

/// The description as pretty JSON (what `/v1/openapi.json` serves).
pub fn json() -> String {
    ApiDoc::openapi().to_pretty_json().unwrap_or_default()
}
