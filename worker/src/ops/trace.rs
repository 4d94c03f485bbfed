//! W3C trace context (`traceparent` / `tracestate` AMQP headers): read from
//! the input message, logged with it, and continued on the events it causes
//! (same trace id, a new parent id), so a trace follows a document from
//! upstream through chunking to the embedder.
//!
//! With trace export on ([`crate::ops::telemetry`]), the incoming context becomes
//! the parent of the `consume` span and the events carry that span's id; with
//! it off, events carry a fresh parent id under the same trace id.

use std::collections::HashMap;

use lapin::types::FieldTable;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::amqp::headers;

/// The trace context of one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// A valid `traceparent`, if the message had one.
    pub traceparent: Option<String>,
    /// `tracestate`, passed on unchanged.
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// Reads the headers; an invalid `traceparent` is ignored (W3C: start a
    /// new trace rather than fail).
    pub fn from_headers(table: Option<&FieldTable>) -> Self {
        let traceparent = headers::get_str(table, "traceparent").filter(|t| is_traceparent(t));
        let tracestate = traceparent
            .as_ref()
            .and_then(|_| headers::get_str(table, "tracestate"));
        Self {
            traceparent,
            tracestate,
        }
    }

    /// Reads the `traceparent` / `tracestate` strings of an event's stored
    /// headers (the outbox's `headers` column).
    pub fn from_json(headers: &serde_json::Value) -> Self {
        let get = |k: &str| headers.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let traceparent = get("traceparent").filter(|t| is_traceparent(t));
        let tracestate = traceparent.as_ref().and_then(|_| get("tracestate"));
        Self {
            traceparent,
            tracestate,
        }
    }

    /// Makes `span` a child of this context (the upstream span), before the
    /// span is entered. Without a context, or without trace export, nothing
    /// changes.
    pub fn adopt(&self, span: &tracing::Span) {
        if self.traceparent.is_none() {
            return;
        }
        let parent = TraceContextPropagator::new().extract(&self.carrier());
        // Fails only when the span is not recorded (export off): nothing to
        // re-parent then.
        let _ = span.set_parent(parent);
    }

    fn carrier(&self) -> HashMap<String, String> {
        let mut carrier = HashMap::new();
        if let Some(tp) = &self.traceparent {
            carrier.insert("traceparent".to_owned(), tp.clone());
        }
        if let Some(ts) = &self.tracestate {
            carrier.insert("tracestate".to_owned(), ts.clone());
        }
        carrier
    }

    /// Headers for an event caused by the message handled in `span`: the
    /// span's own context when traces are recorded (its trace id is the
    /// upstream one after [`TraceContext::adopt`]), else
    /// [`TraceContext::child_headers`].
    pub fn event_headers(&self, span: &tracing::Span) -> serde_json::Value {
        let cx = span.context();
        if !cx.span().span_context().is_valid() {
            return self.child_headers();
        }
        let mut carrier: HashMap<String, String> = HashMap::new();
        TraceContextPropagator::new().inject_context(&cx, &mut carrier);
        let mut map = serde_json::Map::new();
        for key in ["traceparent", "tracestate"] {
            if let Some(v) = carrier.remove(key).filter(|v| !v.is_empty()) {
                map.insert(key.to_owned(), v.into());
            }
        }
        serde_json::Value::Object(map)
    }

    /// Headers for an event caused by this message: the same trace id and
    /// flags with a fresh parent id. An empty object without a trace.
    pub fn child_headers(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        if let Some(parent) = &self.traceparent {
            let trace_id = &parent[3..35];
            let flags = &parent[53..55];
            let span_id = &uuid::Uuid::new_v4().simple().to_string()[..16];
            map.insert(
                "traceparent".into(),
                format!("00-{trace_id}-{span_id}-{flags}").into(),
            );
            if let Some(state) = &self.tracestate {
                map.insert("tracestate".into(), state.clone().into());
            }
        }
        serde_json::Value::Object(map)
    }
}

/// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, ids not all zero.
fn is_traceparent(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |r: std::ops::Range<usize>| {
        b[r].iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    };
    b.len() == 55
        && &s[0..3] == "00-"
        && b[35] == b'-'
        && b[52] == b'-'
        && hex(3..35)
        && hex(36..52)
        && hex(53..55)
        && s[3..35].bytes().any(|c| c != b'0')
        && s[36..52].bytes().any(|c| c != b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_child_keeps_the_trace_id_and_flags() {
        let mut t = FieldTable::default();
        headers::set_str(&mut t, "traceparent", PARENT);
        headers::set_str(&mut t, "tracestate", "congo=t61rcWkgMzE");
        let ctx = TraceContext::from_headers(Some(&t));
        let child = ctx.child_headers();
        let tp = child["traceparent"].as_str().unwrap_or_default();
        assert!(is_traceparent(tp), "{tp}");
        assert_eq!(&tp[..36], &PARENT[..36]);
        assert_ne!(&tp[36..52], &PARENT[36..52]);
        assert_eq!(&tp[52..], "-01");
        assert_eq!(child["tracestate"], "congo=t61rcWkgMzE");
    }

    #[test]
    fn stored_event_headers_read_back() {
        let ctx = TraceContext::from_json(&serde_json::json!({
            "traceparent": PARENT, "tracestate": "a=b"
        }));
        assert_eq!(ctx.traceparent.as_deref(), Some(PARENT));
        assert_eq!(ctx.tracestate.as_deref(), Some("a=b"));
        let none = TraceContext::from_json(&serde_json::json!({"tracestate": "a=b"}));
        assert_eq!(none, TraceContext::default());
    }

    #[test]
    fn without_recorded_spans_events_get_a_child_of_the_incoming_trace() {
        let ctx = TraceContext::from_json(&serde_json::json!({ "traceparent": PARENT }));
        let span = tracing::Span::none();
        ctx.adopt(&span);
        let headers = ctx.event_headers(&span);
        let tp = headers["traceparent"].as_str().unwrap_or_default();
        assert_eq!(&tp[..36], &PARENT[..36]);
    }

    #[test]
    fn invalid_or_missing_contexts_give_no_headers() {
        let mut t = FieldTable::default();
        headers::set_str(&mut t, "traceparent", "00-zz-00-01");
        assert_eq!(
            TraceContext::from_headers(Some(&t)).child_headers(),
            serde_json::json!({})
        );
        assert_eq!(
            TraceContext::from_headers(None).child_headers(),
            serde_json::json!({})
        );
    }
}
