//! RFC 7807 Problem Details: every refusal of the API is one of these
//! `application/problem+json` bodies with a stable `type` URI per kind of
//! error, and the request's `correlation_id`. Every text a problem carries
//! (detail, field names and details, the instance path) goes through the
//! scrubber first: a request may quote a token or an address back at us.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::headers::API_VERSION;
use crate::scrub::scrub_pii;

/// The kinds of refusal, each with its status, title and `type` URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 400: the body is not JSON, not UTF-8, or misses a field.
    BadRequest,
    /// 401: no token, or one that does not verify.
    Unauthorized,
    /// 403: a valid token without the scope or for another tenant.
    Forbidden,
    /// 404: no such path or profile, or the API is not enabled here.
    NotFound,
    /// 405: the path exists, the method does not (`Allow` lists those that do).
    MethodNotAllowed,
    /// 413: the document is over `limits.max_document_bytes`, or the body
    /// over its own limit.
    TooLarge,
    /// 415: the body is not declared as JSON.
    UnsupportedMediaType,
    /// 422: unknown profile, granularity or field, or an unsupported input.
    Unprocessable,
    /// 429: over a rate limit.
    RateLimited,
    /// 503: circuit open, deadline passed, over the memory limit, busy.
    Unavailable,
    /// 500: the engine failed in a way that is not the input's fault.
    Internal,
}

impl Kind {
    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        match self {
            Kind::BadRequest => StatusCode::BAD_REQUEST,
            Kind::Unauthorized => StatusCode::UNAUTHORIZED,
            Kind::Forbidden => StatusCode::FORBIDDEN,
            Kind::NotFound => StatusCode::NOT_FOUND,
            Kind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Kind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Kind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Kind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
            Kind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Kind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Kind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Kind::BadRequest => "bad-request",
            Kind::Unauthorized => "unauthorized",
            Kind::Forbidden => "forbidden",
            Kind::NotFound => "not-found",
            Kind::MethodNotAllowed => "method-not-allowed",
            Kind::TooLarge => "document-too-large",
            Kind::UnsupportedMediaType => "unsupported-media-type",
            Kind::Unprocessable => "invalid-parameters",
            Kind::RateLimited => "rate-limited",
            Kind::Unavailable => "unavailable",
            Kind::Internal => "internal",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Kind::BadRequest => "Malformed request",
            Kind::Unauthorized => "Authentication required",
            Kind::Forbidden => "Not allowed",
            Kind::NotFound => "Not found",
            Kind::MethodNotAllowed => "Method not allowed",
            Kind::TooLarge => "Document too large",
            Kind::UnsupportedMediaType => "Unsupported media type",
            Kind::Unprocessable => "Invalid parameters",
            Kind::RateLimited => "Too many requests",
            Kind::Unavailable => "Temporarily unavailable",
            Kind::Internal => "Internal error",
        }
    }
}

/// One invalid field of a 422, with the closest valid values.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldError {
    /// The field (`profile`, `granularity`, or an unknown field's name).
    pub field: String,
    /// What is wrong.
    pub detail: String,
    /// Valid values, closest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

/// A problem response (boxed: results carrying one stay small).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Problem(Box<ProblemBody>);

/// The members of a problem response.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemBody {
    /// A stable URI naming the kind of problem.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Its short title.
    pub title: &'static str,
    /// The HTTP status.
    pub status: u16,
    /// What happened, for a person.
    pub detail: String,
    /// The request path.
    pub instance: String,
    /// The request's correlation id (also the `X-Correlation-ID` header).
    pub correlation_id: String,
    /// The invalid fields of a 422.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    #[serde(skip)]
    kind: Kind,
    #[serde(skip)]
    retry_after: Option<u64>,
}

impl Problem {
    /// The kind answering `status` (the framework's own refusals), if any.
    pub fn kind_of(status: StatusCode) -> Kind {
        match status.as_u16() {
            401 => Kind::Unauthorized,
            403 => Kind::Forbidden,
            404 => Kind::NotFound,
            405 => Kind::MethodNotAllowed,
            413 => Kind::TooLarge,
            415 => Kind::UnsupportedMediaType,
            422 => Kind::Unprocessable,
            429 => Kind::RateLimited,
            503 => Kind::Unavailable,
            s if (400..500).contains(&s) => Kind::BadRequest,
            _ => Kind::Internal,
        }
    }

    /// A problem of `kind` with `detail` (scrubbed).
    pub fn new(kind: Kind, detail: impl Into<String>) -> Self {
        Self(Box::new(ProblemBody {
            type_uri: format!("urn:chunk-worker:problem:{}", kind.slug()),
            title: kind.title(),
            status: kind.status().as_u16(),
            detail: scrub_pii(&detail.into()),
            instance: String::new(),
            correlation_id: String::new(),
            errors: Vec::new(),
            kind,
            retry_after: None,
        }))
    }

    /// Its members.
    pub fn body(&self) -> &ProblemBody {
        &self.0
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.0.kind
    }

    /// With field errors (a 422), scrubbed.
    #[must_use]
    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.0.errors = errors
            .into_iter()
            .map(|e| FieldError {
                field: scrub_pii(&e.field),
                detail: scrub_pii(&e.detail),
                suggestions: e.suggestions,
            })
            .collect();
        self
    }

    /// With a `Retry-After` of `seconds` (at least 1).
    #[must_use]
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.0.retry_after = Some(seconds.max(1));
        self
    }

    /// For the request at `instance` (scrubbed) with `correlation_id`.
    #[must_use]
    pub fn at(mut self, instance: &str, correlation_id: &str) -> Self {
        self.0.instance = scrub_pii(instance);
        correlation_id.clone_into(&mut self.0.correlation_id);
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let p = self.0;
        let status = p.kind.status();
        let body = serde_json::to_vec(&p).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        headers.insert("x-api-version", HeaderValue::from_static(API_VERSION));
        if let Ok(v) = HeaderValue::from_str(&p.correlation_id) {
            headers.insert("x-correlation-id", v);
        }
        if let Some(s) = p.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if p.kind == Kind::Unauthorized {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"chunk-worker\""),
            );
        }
        response
    }
}

/// The names in `valid` closest to `given` (edit distance at most a third of
/// the longer name, at least 2), closest first; all of them when none is close.
pub fn closest(given: &str, valid: &[String]) -> Vec<String> {
    let mut scored: Vec<(usize, &String)> = valid
        .iter()
        .map(|v| (edit_distance(&given.to_lowercase(), &v.to_lowercase()), v))
        .collect();
    scored.sort();
    let close: Vec<String> = scored
        .iter()
        .filter(|(d, v)| *d <= (v.len().max(given.len()) / 3).max(2))
        .map(|(_, v)| (*v).clone())
        .collect();
    if close.is_empty() {
        scored.into_iter().map(|(_, v)| v.clone()).collect()
    } else {
        close
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_the_closest_names() {
        let valid: Vec<String> = ["spec-v1", "enterprise-v1", "docs-v1", "recursive-v1"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(closest("spec-v2", &valid), ["spec-v1"]);
        assert_eq!(closest("Spec-V1", &valid)[0], "spec-v1");
        assert_eq!(closest("zzzzzzzzzzzzzzzz", &valid).len(), 4);
    }
}
