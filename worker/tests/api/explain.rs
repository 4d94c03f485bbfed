//! `POST /v1/chunk?explain=true`: each chunk also says why it ends; the
//! chunks are those of a plain call, which has no such fields.

use serde_json::{json, Value};

use crate::{client, good, problem, Server, DOC};

#[test]
fn explain_adds_a_reason_to_each_chunk_and_changes_nothing_else() {
    let s = Server::start(&[]);
    let t = good("acme-prod", "erin");
    let body = json!({"document_id": "d", "markdown": DOC, "source_version_id": "v1"}).to_string();
    let post = |query: &str| {
        client()
            .post(format!("{}/v1/chunk{query}", s.base))
            .header("content-type", "application/json")
            .bearer_auth(&t)
            .body(body.clone())
            .send()
            .unwrap()
    };
    let plain = post("");
    assert_eq!(plain.status().as_u16(), 200);
    let plain: Value = serde_json::from_str(&plain.text().unwrap()).unwrap();
    let explained = post("?explain=true");
    assert_eq!(explained.status().as_u16(), 200);
    let explained: Value = serde_json::from_str(&explained.text().unwrap()).unwrap();
    let (a, b) = (
        plain["chunks"].as_array().unwrap(),
        explained["chunks"].as_array().unwrap(),
    );
    assert!(!a.is_empty());
    assert_eq!(a.len(), b.len());
    for (p, e) in a.iter().zip(b) {
        assert!(p.get("reason").is_none() && p.get("explanation").is_none());
        let mut stripped = e.clone();
        let obj = stripped.as_object_mut().unwrap();
        let reason = obj.remove("reason").unwrap();
        let sentence = obj.remove("explanation").unwrap();
        assert_eq!(&stripped, p, "explaining changed a chunk");
        assert!(reason["rule"].is_string(), "{reason}");
        assert!(!sentence.as_str().unwrap().is_empty());
    }
    assert_eq!(b.last().unwrap()["reason"]["rule"], "end_of_document");
    // A bad value is a problem, as is an unknown parameter.
    problem(post("?explain=maybe"), 400);
    problem(post("?verbose=1"), 400);
    assert_eq!(post("?explain=false").status().as_u16(), 200);
}
