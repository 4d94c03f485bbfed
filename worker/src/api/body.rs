//! A `POST /v1/chunk` body before its fields are read: the media type (415
//! unless JSON) and the bytes, read under their limit (413).

use axum::http::{header, HeaderMap};
use http_body_util::BodyExt as _;

use super::problem::{Kind, Problem};
use crate::config::Settings;

/// Room in a request body for the other fields, beside the document.
pub const ENVELOPE_BYTES: u64 = 1 << 20;
/// JSON may write one byte of a document as up to six (`\u0001`).
pub const ESCAPE_FACTOR: u64 = 6;

/// The largest request body: any document within `limits.max_document_bytes`
/// fits however its JSON is escaped, with the other fields beside it.
pub fn max_body_bytes(settings: &Settings) -> u64 {
    settings
        .max_document_bytes
        .saturating_mul(ESCAPE_FACTOR)
        .saturating_add(ENVELOPE_BYTES)
}

/// 415 unless the body is declared JSON (`application/json`, any
/// `application/*+json`) or not declared at all.
pub fn check_media_type(headers: &HeaderMap) -> Result<(), Problem> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let json = essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"));
    if json {
        Ok(())
    } else {
        Err(Problem::new(
            Kind::UnsupportedMediaType,
            "send the body as Content-Type: application/json",
        ))
    }
}

/// Reads the body, refusing one over [`max_body_bytes`] with 413 as soon as
/// its declared length or the bytes received pass it.
pub async fn read_body(
    settings: &Settings,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<axum::body::Bytes, Problem> {
    let limit = max_body_bytes(settings);
    let too_large = || {
        Problem::new(
            Kind::TooLarge,
            format!(
                "the request body is over {limit} bytes ({ESCAPE_FACTOR} x limits.max_document_bytes = {} for the document's JSON escaping, plus {ENVELOPE_BYTES} for the other fields)",
                settings.max_document_bytes
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX));
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(_) => Err(Problem::new(
            Kind::BadRequest,
            "the request body could not be read (the connection broke)",
        )),
    }
}
