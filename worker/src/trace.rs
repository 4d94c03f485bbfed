//! W3C trace context (`traceparent` / `tracestate` AMQP headers): read from
//! the input message, logged with it, and continued on the events it causes
//! (same trace id, a new parent id), so a trace follows a document from
//! upstream through chunking to the embedder.

use lapin::types::FieldTable;

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
