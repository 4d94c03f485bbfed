//! One dead-lettered message as the `dlq` commands show it, read from an
//! AMQP delivery.

use lapin::BasicProperties;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::amqp::headers;
use crate::cli::dlq::Filters;
use crate::pipeline::handler::MessageIds;

/// One dead-lettered message.
#[derive(Debug, Clone, Serialize)]
pub struct DeadLetter {
    /// `message_id`, else `sha256:` + 16 hex digits of the body's sha256.
    pub id: String,
    /// The AMQP message id, if any.
    pub message_id: Option<String>,
    /// tenant_id of the body.
    pub tenant_id: Option<String>,
    /// document_id of the body.
    pub document_id: Option<String>,
    /// source_version_id of the body.
    pub source_version_id: Option<String>,
    /// x-error-code.
    pub error_code: Option<String>,
    /// x-error-detail.
    pub error_detail: Option<String>,
    /// x-attempts.
    pub attempts: Option<u64>,
    /// x-first-failed-at.
    pub first_failed_at: Option<String>,
    /// x-failed-at.
    pub failed_at: Option<String>,
    /// sha256 (hex) of the body.
    pub body_sha256: String,
    /// Body size in bytes.
    pub body_size: usize,
    /// Every header, as JSON.
    #[serde(skip)]
    pub headers: serde_json::Map<String, serde_json::Value>,
    /// The body.
    #[serde(skip)]
    pub body: Vec<u8>,
    /// The properties.
    #[serde(skip)]
    pub properties: BasicProperties,
}

impl DeadLetter {
    /// Whether this message passes every filter of `f`.
    pub fn matches(&self, f: &Filters) -> bool {
        let m = self;
        let code_ok = f.error_code.as_deref().is_none_or(|c| {
            m.error_code
                .as_deref()
                .is_some_and(|e| e.eq_ignore_ascii_case(c))
        });
        let tenant_ok = f
            .tenant
            .as_deref()
            .is_none_or(|t| m.tenant_id.as_deref() == Some(t));
        let doc_ok = f
            .document
            .as_deref()
            .is_none_or(|d| m.document_id.as_deref() == Some(d));
        code_ok && tenant_ok && doc_ok
    }

    /// Reads what a delivery says about itself.
    pub fn from_parts(body: &[u8], properties: &BasicProperties) -> Self {
        let table = properties.headers().as_ref();
        let message_id = properties.message_id().as_ref().map(|m| m.to_string());
        let ids = MessageIds::from_body(body, None);
        let sha = hex::encode(Sha256::digest(body));
        let id = message_id
            .clone()
            .unwrap_or_else(|| format!("sha256:{}", &sha[..16]));
        Self {
            id,
            message_id,
            tenant_id: ids.tenant_id,
            document_id: ids.document_id,
            source_version_id: ids.source_version_id,
            error_code: headers::get_str(table, headers::ERROR_CODE),
            error_detail: headers::get_str(table, headers::ERROR_DETAIL),
            attempts: headers::get_u64(table, headers::ATTEMPTS),
            first_failed_at: headers::get_str(table, headers::FIRST_FAILED_AT),
            failed_at: headers::get_str(table, headers::FAILED_AT),
            body_sha256: sha,
            body_size: body.len(),
            headers: table.map(headers::table_to_json).unwrap_or_default(),
            body: body.to_vec(),
            properties: properties.clone(),
        }
    }

    /// Whether `id` names this message (its id, message id, or a prefix of
    /// at least 8 hex digits of its body's sha256, with or without `sha256:`).
    pub fn is_named(&self, id: &str) -> bool {
        if self.id == id || self.message_id.as_deref() == Some(id) {
            return true;
        }
        let hex = id.strip_prefix("sha256:").unwrap_or(id);
        hex.len() >= 8 && self.body_sha256.starts_with(&hex.to_ascii_lowercase())
    }
}
