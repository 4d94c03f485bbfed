//! `POST /v1/chunk?explain=true`: each chunk also says why it ends
//! (`reason`, tagged by `rule`, and `explanation`, a sentence), as
//! `chunk-worker explain` does. Without the parameter the answer is as it
//! always was.

use serde_json::Value;
use shared::{Chunk, EndReason};

use super::problem::{Kind, Problem};

/// The `explain` query parameter: `true`/`1` or `false`/`0`; absent is
/// `false`; any other value or parameter is a 400 problem.
pub(super) fn explain_requested(query: Option<&str>) -> Result<bool, Problem> {
    let mut explain = false;
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
        explain = match (key, value) {
            ("explain", "true" | "1") => true,
            ("explain", "false" | "0") => false,
            ("explain", other) => {
                return Err(Problem::new(
                    Kind::BadRequest,
                    format!("query parameter explain={other:?} is not valid; valid: true, false"),
                ))
            }
            (other, _) => {
                return Err(Problem::new(
                    Kind::BadRequest,
                    format!("unknown query parameter {other:?}; known: explain"),
                ))
            }
        };
    }
    Ok(explain)
}

/// The `chunks` of the answer: the records as they are, or with `reason`
/// and `explanation` added to each when `reasons` are given.
pub(super) fn chunks_json(chunks: &[Chunk], reasons: Option<&[EndReason]>) -> Value {
    let Some(reasons) = reasons else {
        return serde_json::json!(chunks);
    };
    let with = chunks.iter().zip(reasons).map(|(c, r)| {
        let mut v = serde_json::json!(c);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("reason".into(), serde_json::json!(r));
            obj.insert("explanation".into(), Value::String(r.to_string()));
        }
        v
    });
    Value::Array(with.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_read_and_anything_else_refused() {
        assert_eq!(explain_requested(None).ok(), Some(false));
        assert_eq!(explain_requested(Some("explain=true")).ok(), Some(true));
        assert_eq!(explain_requested(Some("explain=0")).ok(), Some(false));
        assert!(explain_requested(Some("explain=maybe")).is_err());
        assert!(explain_requested(Some("other=1")).is_err());
    }
}
