//! The synchronous chunking API (issue 14, the Chunking System specification): `POST /v1/chunk`
//! chunks one document with the same engine, the same profiles and the same
//! ids as the queue worker and the CLI, and stores nothing; `GET
//! /v1/profiles` lists the profiles. Every request is authenticated
//! (`auth`), rate-limited and guarded by a circuit breaker per strategy
//! (`guard`), bounded in size, memory and time; every refusal is an RFC 7807
//! problem (`problem`). Served beside `/healthz` and `/metrics` by
//! `chunk-worker run` when `api.enabled`, and alone by `chunk-worker serve`.

pub mod auth;
mod body;
mod explain;
mod framework;
pub mod guard;
mod headers;
pub mod openapi;
pub mod problem;
mod request;
mod state;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use serde_json::json;

use crate::breaker::{self, Breakers};
use crate::ops::metrics::Metrics;
use auth::Caller;
use problem::{Kind, Problem};

use headers::correlation_id;
pub use headers::{API_VERSION, MEDIA_TYPE};
pub use state::ApiState;

/// Circuit breakers whose every change of state sets the
/// `chunking_circuit_breaker_state` gauge and logs one line, whichever path
/// (API or queue) caused it.
pub fn breakers(metrics: &Arc<Metrics>) -> Arc<Breakers> {
    let metrics = Arc::clone(metrics);
    Arc::new(Breakers::new(Some(Box::new(
        move |strategy: &str, state| {
            metrics.api.breaker_state(strategy, state as i64);
            match state {
            breaker::State::Open => tracing::warn!(strategy, state = state.as_str(),
                "circuit open after repeated strategy failures: the API answers 503 and the queue parks this strategy's messages until a trial succeeds"),
            breaker::State::HalfOpen => tracing::info!(strategy, state = state.as_str(), "circuit half-open: one trial call"),
            breaker::State::Closed => tracing::info!(strategy, state = state.as_str(), "circuit closed: the strategy works again"),
        }
        },
    ))))
}

/// The `/v1` routes: the API when `state` is given, else a 404 problem for
/// every `/v1` path (the API is off). Whatever the framework itself answers
/// under `/v1` (an unknown path, a wrong method) is a problem too.
pub fn routes(state: Option<Arc<ApiState>>) -> Router {
    let router = match state {
        Some(state) => Router::new()
            .route("/v1/chunk", post(chunk))
            .route("/v1/profiles", get(profiles))
            .route("/v1/profiles/{name}", get(profile))
            .route("/v1/openapi.json", get(openapi_json))
            .fallback(framework::unknown_path)
            .with_state(state),
        None => Router::new().route("/v1/{*rest}", any(disabled)),
    };
    router.layer(axum::middleware::from_fn(framework::problems))
}

async fn openapi_json(State(state): State<Arc<ApiState>>) -> Response {
    let mut response =
        openapi::json_for(&state.engine, &state.settings.chunking.default_profile).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert("x-api-version", HeaderValue::from_static(API_VERSION));
    response
}

async fn disabled(request: Request) -> Response {
    let id = correlation_id(request.headers());
    let problem = Problem::new(
        Kind::NotFound,
        "the API is not enabled here (api.enabled and a key in api.jwt)",
    )
    .at(request.uri().path(), &id);
    framework::log_refusal(&problem, None);
    problem.into_response()
}

/// The response type: the Chunking System specification's media type when the caller accepts it.
fn response_type(headers: &HeaderMap) -> &'static str {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains(MEDIA_TYPE) {
        MEDIA_TYPE
    } else {
        "application/json"
    }
}

fn json_response(
    status: StatusCode,
    media: &'static str,
    id: &str,
    body: &serde_json::Value,
) -> Response {
    let mut response = (status, body.to_string()).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    h.insert("x-api-version", HeaderValue::from_static(API_VERSION));
    if let Ok(v) = HeaderValue::from_str(id) {
        h.insert("x-correlation-id", v);
    }
    response
}

/// `Deprecation: true` and, when the profile names a successor,
/// `Link: </v1/profiles/NAME>; rel="successor-version"`.
fn deprecation_headers(h: &mut HeaderMap, replacement: Option<&str>) {
    h.insert("deprecation", HeaderValue::from_static("true"));
    if let Some(v) = replacement.and_then(|r| {
        HeaderValue::from_str(&format!("</v1/profiles/{r}>; rel=\"successor-version\"")).ok()
    }) {
        h.insert(header::LINK, v);
    }
}

/// Authenticates and rate-limits a request (never logging the token).
fn admit(state: &ApiState, headers: &HeaderMap) -> Result<Caller, Problem> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let caller = state.verifier.verify(authorization)?;
    if let Err((scope, retry)) = state.limiter.check(&caller.tenant_id, &caller.user_id) {
        state.metrics.api.rate_limited(scope.as_str());
        let p = Problem::new(
            Kind::RateLimited,
            format!(
                "over the {} rate limit; retry after {retry} s",
                scope.as_str()
            ),
        )
        .retry_after(retry);
        return Err(p);
    }
    Ok(caller)
}

/// Answers a refusal: counted, and logged once with its correlation id
/// (and the caller, when the token verified).
fn refuse(
    state: &ApiState,
    problem: Problem,
    path: &str,
    id: &str,
    caller: Option<&Caller>,
) -> Response {
    let status = problem.kind().status().as_u16();
    state.metrics.api.answered(status);
    let problem = problem.at(path, id);
    framework::log_refusal(&problem, caller);
    problem.into_response()
}

async fn profiles(State(state): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    let id = correlation_id(&headers);
    if let Err(p) = admit(&state, &headers) {
        return refuse(&state, p, "/v1/profiles", &id, None);
    }
    let list: Vec<serde_json::Value> = state
        .engine
        .profiles()
        .iter()
        .filter(|p| state.engine.profile(Some(&p.name)).is_ok())
        .map(describe)
        .collect();
    state.metrics.api.answered(200);
    json_response(
        StatusCode::OK,
        response_type(&headers),
        &id,
        &json!({ "profiles": list, "default_profile": state.settings.chunking.default_profile }),
    )
}

async fn profile(
    State(state): State<Arc<ApiState>>,
    axum::extract::Path(name): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let id = correlation_id(&headers);
    let path = format!("/v1/profiles/{name}");
    let caller = match admit(&state, &headers) {
        Ok(c) => c,
        Err(p) => return refuse(&state, p, &path, &id, None),
    };
    match state.engine.profile(Some(&name)) {
        Ok(p) => {
            state.metrics.api.answered(200);
            json_response(StatusCode::OK, response_type(&headers), &id, &describe(p))
        }
        Err(_) => refuse(
            &state,
            Problem::new(Kind::NotFound, format!("no usable profile {name:?}")),
            &path,
            &id,
            Some(&caller),
        ),
    }
}

/// A profile as `/v1/profiles` lists it.
fn describe(p: &shared::Profile) -> serde_json::Value {
    json!({
        "name": p.name,
        "description": p.description,
        "strategy": p.strategy,
        "chunker_version": p.chunker_version,
        "tokenizer": p.tokenizer.name(),
        "granularity": p.granularity.as_str(),
        "granularities": p.granularities().iter().map(|g| g.as_str()).collect::<Vec<_>>(),
        "experimental": p.experimental,
        "deprecated": p.deprecation.is_some(),
        "replacement": p.deprecation.as_ref().and_then(|d| d.replacement.clone()),
    })
}

async fn chunk(
    State(state): State<Arc<ApiState>>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    body: axum::body::Body,
) -> Response {
    let started = Instant::now();
    let id = correlation_id(&headers);
    let path = "/v1/chunk";
    // Who is calling first: nobody's body is read before their token
    // verifies and their allowance holds.
    let caller = match admit(&state, &headers) {
        Ok(c) => c,
        Err(p) => return refuse(&state, p, path, &id, None),
    };
    let refused = |p: Problem| refuse(&state, p, path, &id, Some(&caller));
    if let Err(p) = body::check_media_type(&headers) {
        return refused(p);
    }
    let body = match body::read_body(&state.settings, &headers, body).await {
        Ok(b) => b,
        Err(p) => return refused(p),
    };
    let explain = match explain::explain_requested(query.as_deref()) {
        Ok(e) => e,
        Err(p) => return refused(p),
    };
    let mut parsed = match request::parse(&state, &caller, &body) {
        Ok(r) => r,
        Err(p) => return refused(p),
    };
    parsed.explain = explain;
    drop(body);
    let strategy = parsed.strategy.clone();
    let deprecated = parsed.deprecated.clone();
    // Held until the call ends; dropped with this future (a client gone),
    // it gives a trial back.
    let permit = match state.breakers.admit(&strategy) {
        Ok(permit) => permit,
        Err(r) => {
            let p = Problem::new(
                Kind::Unavailable,
                format!(
                    "the {strategy} strategy is failing (circuit open); retry after {} s",
                    r.retry_after_s
                ),
            )
            .retry_after(r.retry_after_s);
            return refused(p);
        }
    };
    let (outcome, verdict) = request::run(&state, parsed, started).await;
    permit.settle(verdict);
    let duration_ms = started.elapsed().as_millis();
    match outcome {
        Ok(body) => {
            tracing::info!(audit = true, correlation_id = %id, tenant_id = %caller.tenant_id,
                user_id = %caller.user_id, outcome = "chunked", duration_ms = duration_ms as u64,
                "api chunk");
            state.metrics.api.answered(200);
            let mut response = json_response(StatusCode::OK, response_type(&headers), &id, &body);
            if let Some(replacement) = deprecated {
                deprecation_headers(response.headers_mut(), replacement.as_deref());
            }
            response
        }
        Err(p) => refused(p),
    }
}
