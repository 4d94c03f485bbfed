//! What the HTTP framework answers on its own under `/v1`, made a problem
//! like every other refusal: an unknown path (404), a method the path does
//! not take (405, with `Allow`), and any other error status the framework or
//! a layer produces without a problem body. Every `/v1` response carries
//! `X-API-Version`; every refusal is logged once with its correlation id.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::auth::Caller;
use super::headers::{correlation_id, API_VERSION};
use super::problem::{Kind, Problem};

const PROBLEM_JSON: &str = "application/problem+json";

/// The router's fallback: no route has this path ([`problems`] words it).
pub async fn unknown_path() -> StatusCode {
    StatusCode::NOT_FOUND
}

/// Turns any error answer that is not a problem yet into one (keeping
/// `Allow`), and sets `X-API-Version` and `X-Correlation-ID`.
pub async fn problems(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let id = correlation_id(request.headers());
    let response = next.run(request).await;
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    let mut response = if (status.is_client_error() || status.is_server_error()) && !is_problem {
        let allow = response.headers().get(header::ALLOW).cloned();
        let kind = Problem::kind_of(status);
        let detail = match kind {
            Kind::MethodNotAllowed => format!(
                "{path} does not take this method; it takes {}",
                allow
                    .as_ref()
                    .and_then(|a| a.to_str().ok())
                    .unwrap_or("other methods")
            ),
            Kind::NotFound => format!(
                "no {path} in this API: POST /v1/chunk, GET /v1/profiles, /v1/profiles/NAME and /v1/openapi.json"
            ),
            _ => format!("the request was refused ({status})"),
        };
        let problem = Problem::new(kind, detail).at(&path, &id);
        log_refusal(&problem, None);
        let mut replaced = problem.into_response();
        if let Some(allow) = allow {
            replaced.headers_mut().insert(header::ALLOW, allow);
        }
        replaced
    } else {
        response
    };
    let headers = response.headers_mut();
    headers.insert("x-api-version", HeaderValue::from_static(API_VERSION));
    if !headers.contains_key("x-correlation-id") {
        if let Ok(v) = HeaderValue::from_str(&id) {
            headers.insert("x-correlation-id", v);
        }
    }
    response
}

/// One line for one refusal: status, kind, detail (scrubbed), path,
/// correlation id, and the caller when known. Never the token.
pub fn log_refusal(problem: &Problem, caller: Option<&Caller>) {
    let p = problem.body();
    let (tenant_id, user_id) = caller.map_or((None, None), |c| {
        (Some(c.tenant_id.as_str()), Some(c.user_id.as_str()))
    });
    if p.status >= 500 {
        tracing::warn!(audit = true, outcome = "refused", status = p.status, problem = %p.type_uri,
            reason = %p.detail, path = %p.instance, correlation_id = %p.correlation_id,
            tenant_id, user_id, "api request refused");
    } else {
        tracing::info!(audit = true, outcome = "refused", status = p.status, problem = %p.type_uri,
            reason = %p.detail, path = %p.instance, correlation_id = %p.correlation_id,
            tenant_id, user_id, "api request refused");
    }
}
