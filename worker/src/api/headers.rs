//! The headers every API response carries: the API version, the media
//! type, the correlation id.

use axum::http::HeaderMap;

/// `X-API-Version` of every response.
pub const API_VERSION: &str = "1.0";
/// The Chunking System specification's media type, echoed as the response type when asked for.
pub const MEDIA_TYPE: &str = "application/vnd.medkg.chunk.v1+json";

/// `X-Correlation-ID` when sent (printable, at most 128 bytes), else a new one.
pub(super) fn correlation_id(headers: &HeaderMap) -> String {
    headers
        .get("x-correlation-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned)
}
