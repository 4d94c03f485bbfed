//! Messages as upstream publishes them, and as read back from a queue.

use lapin::types::{AMQPValue, FieldTable};
use lapin::BasicProperties;
use serde_json::{json, Value};

/// A valid `normalize_markdown.completed/v1` message with inline markdown.
pub fn message(tenant: &str, document: &str, version: &str, markdown: &str) -> Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": uuid::Uuid::new_v4().to_string(),
        "tenant_id": tenant,
        "document_id": document,
        "source_version_id": version,
        "source_type": "confluence",
        "markdown": markdown,
        "metadata": {"title": "Test page", "source_url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/1/Test"},
        "profile": null,
        "correlation_id": format!("corr-{document}-{version}"),
        "occurred_at": "2026-11-20T10:00:01Z"
    })
}

/// The metadata the worker takes from `msg` (a [`message`]), to chunk the
/// same input with the engine and compare.
pub fn meta_of(msg: &Value) -> shared::DocumentMeta {
    let text = |k: &str| msg["metadata"][k].as_str().map(str::to_owned);
    let field = |k: &str| msg[k].as_str().unwrap_or_default().to_owned();
    shared::DocumentMeta {
        tenant_id: field("tenant_id"),
        document_id: field("document_id"),
        source_version_id: field("source_version_id"),
        title: text("title"),
        source_url: text("source_url"),
        file_path: text("file_path"),
        metadata: shared::DocumentMeta::carried_metadata(&msg["metadata"]),
    }
}

/// A markdown document with a few sections, varying with `n`.
pub fn sample_markdown(n: usize) -> String {
    format!(
        "# Runbook {n}\n\nThis page explains how service {n} is operated.\n\n\
         ## Setup\n\nInstall the agent, then run `setup --id {n}`.\n\n\
         - first item\n- second item\n\n\
         ## Tables\n\n| key | value |\n|---|---|\n| a | {n} |\n\n\
         ```sh\necho {n}\n```\n"
    )
}

/// A message read back from a queue.
#[derive(Debug)]
pub struct Received {
    /// Routing key it was published with.
    pub routing_key: String,
    /// The body, unchanged.
    pub body: Vec<u8>,
    /// Its properties.
    pub properties: BasicProperties,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> anyhow::Result<Value> {
        Ok(serde_json::from_slice(&self.body)?)
    }

    /// A string header.
    pub fn header(&self, key: &str) -> Option<String> {
        worker::amqp::headers::get_str(self.properties.headers().as_ref(), key)
    }

    /// An integer header.
    pub fn header_u64(&self, key: &str) -> Option<u64> {
        worker::amqp::headers::get_u64(self.properties.headers().as_ref(), key)
    }
}

/// Builds an AMQP header table.
pub fn headers(pairs: &[(&str, AMQPValue)]) -> FieldTable {
    let mut t = FieldTable::default();
    for (k, v) in pairs {
        t.insert((*k).into(), v.clone());
    }
    t
}
