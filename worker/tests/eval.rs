//! `chunk-worker eval` end to end (issue 12): every built-in profile on the
//! shipped datasets with BM25, the leaderboard files, and bad input named by
//! file and line.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("eval")
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

/// The leaderboard a successful run wrote to `out_dir`.
fn board_of(out: &Output, out_dir: &Path) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&fs::read_to_string(out_dir.join("leaderboard.json")).unwrap()).unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cw-eval-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("documents")).unwrap();
    dir
}

#[test]
fn every_profile_is_measured_on_the_shipped_datasets() {
    let out_dir = temp_dir("board");
    // Without the model, semantic profiles are left out (with it they would
    // be measured too, slowly in a debug build). Half A of each set (its
    // splits.json): every profile through every metric in half the time.
    let out = eval(&[
        "--out",
        out_dir.to_str().unwrap(),
        "--model-dir",
        "/nonexistent/model",
        "--split",
        "A",
    ]);
    let board = board_of(&out, &out_dir);
    assert_eq!(board["rank_by"], "budget_recall@1000");
    let rows = board["rows"].as_array().unwrap();
    let engine = shared::Engine::builtin().unwrap();
    let usable: Vec<String> = engine
        .profiles()
        .names()
        .into_iter()
        .filter(|n| engine.profile(Some(n)).is_ok())
        .collect();
    assert!(usable.len() >= 6 && !usable.iter().any(|n| n == "semantic-v1"));
    // Every usable built-in profile, twice (embed_text and chunk_text).
    assert_eq!(rows.len(), 2 * usable.len());
    for name in &usable {
        assert!(rows.iter().any(|r| r["name"] == name.as_str()), "{name}");
    }
    assert_eq!(rows.iter().filter(|r| r["recommended"] == true).count(), 1);
    for r in rows {
        // Half A of eval/retrieval (282 of 561) and eval/retrieval-plain
        // (512 of 1,031).
        assert_eq!(r["questions"], 282 + 512);
        for key in [
            "boundary_precision",
            "boundary_recall",
            "boundary_f1",
            "recall@5",
            "recall@10",
            "recall@20",
            "token_recall@5",
            "token_precision@5",
            "token_iou@5",
            "ndcg@10",
            "budget_recall@500",
            "budget_recall@1000",
            "budget_recall@2000",
            "budget_precision@1000",
            "budget_iou@1000",
        ] {
            let v = r[key].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{key} = {v}");
        }
        assert!(r["recall@5"].as_f64() <= r["recall@20"].as_f64());
        assert!(r["latency_p95_ms"].as_f64().unwrap() > 0.0);
        // Each question's budgeted recall is kept, and they average to the
        // row's figure (what a paired comparison of two rows is built on).
        let per_question = r["per_question"].as_object().unwrap();
        assert_eq!(per_question.len(), 282 + 512, "{}", r["name"]);
        assert!(per_question
            .keys()
            .any(|k| k.starts_with("retrieval-plain/")));
        for budget in ["500", "1000", "2000"] {
            let key = format!("budget_recall@{budget}");
            let sum: f64 = per_question
                .values()
                .map(|m| m[key.as_str()].as_f64().unwrap())
                .sum();
            let mean = r[key.as_str()].as_f64().unwrap();
            let n = per_question.len() as f64;
            assert!(
                (sum / n - mean).abs() < 1e-9,
                "{key}: {sum} / {n} vs {mean}"
            );
        }
    }
    // Sorted best first, by context-budget recall.
    let ranked: Vec<f64> = rows
        .iter()
        .map(|r| r["budget_recall@1000"].as_f64().unwrap())
        .collect();
    assert!(ranked.windows(2).all(|w| w[0] >= w[1]), "{ranked:?}");
    let html = fs::read_to_string(out_dir.join("leaderboard.html")).unwrap();
    assert!(html.contains("<table id=\"board\"") && html.contains("<svg"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "offline page"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("recommended"), "{table}");
}

fn dataset_with(question: &str) -> PathBuf {
    let dir = temp_dir("bad");
    fs::write(
        dir.join("documents/a.md"),
        "# A\n\nThe cat sat on the mat.\n",
    )
    .unwrap();
    fs::write(dir.join("questions.jsonl"), format!("{question}\n")).unwrap();
    dir
}

#[test]
fn bad_data_is_an_error_naming_the_file_and_line() {
    let good = r#"{"id": "q1", "question": "where did the cat sit", "document": "a.md", "lang": "en", "references": [{"text": "The cat sat on the mat.", "start": 5, "end": 28}]}"#;
    let cases = [
        (
            good.replace("\"start\": 5", "\"start\": 6"),
            "questions.jsonl:1: question \"q1\": the excerpt",
        ),
        (
            good.replace("a.md", "b.md"),
            "questions.jsonl:1: document \"b.md\" is not in documents/",
        ),
        ("{not json".to_owned(), "questions.jsonl:1:"),
    ];
    for (line, expected) in cases {
        let dir = dataset_with(&line);
        let out = eval(&["--dataset", dir.to_str().unwrap(), "--profiles", "spec-v1"]);
        assert_eq!(out.status.code(), Some(2), "{line}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{line}: {err}");
    }
    // A good dataset and a malformed external file.
    let dir = dataset_with(good);
    let ext = dir.join("peer.jsonl");
    fs::write(
        &ext,
        "{\"document\": \"a.md\", \"text\": \"The cat sat\"}\n{\"document\": \"a.md\"\n",
    )
    .unwrap();
    let out_dir = dir.join("out");
    let spec = format!("peer={}", ext.display());
    let with_peer = || {
        eval(&[
            "--dataset",
            dir.to_str().unwrap(),
            "--profiles",
            "spec-v1",
            "--external",
            &spec,
            "--out",
            out_dir.to_str().unwrap(),
        ])
    };
    let out = with_peer();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("peer.jsonl:2: not a chunk object"), "{err}");
    // Fixed, the external system is measured beside the profile.
    fs::write(
        &ext,
        "{\"document\": \"a.md\", \"text\": \"The cat sat on the mat.\"}\n",
    )
    .unwrap();
    let out = with_peer();
    let board = board_of(&out, &out_dir);
    let peer = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "peer")
        .unwrap()
        .clone();
    assert_eq!(peer["external"], true);
    assert_eq!(peer["recall@5"], 1.0);
}

#[test]
fn hybrid_retrieval_fuses_bm25_and_minilm_into_one_row() {
    let Some(model) = testkit::model_dir() else {
        return;
    };
    let dir = temp_dir("hybrid");
    fs::write(
        dir.join("documents/a.md"),
        "# Cats\n\nThe cat sat on the mat by the kitchen door.\n\n# Ships\n\nThe ferry leaves the harbour at noon every day.\n",
    )
    .unwrap();
    fs::write(
        dir.join("documents/b.md"),
        "# Weather\n\nRain is expected over the hills tomorrow evening.\n",
    )
    .unwrap();
    let doc = fs::read_to_string(dir.join("documents/a.md")).unwrap();
    let excerpt = "The ferry leaves the harbour at noon every day.";
    let start = doc[..doc.find(excerpt).unwrap()].chars().count();
    let question = serde_json::json!({
        "id": "q1", "question": "when does the ferry leave the harbour", "document": "a.md", "lang": "en",
        "references": [{"text": excerpt, "start": start, "end": start + excerpt.chars().count()}]
    });
    fs::write(dir.join("questions.jsonl"), format!("{question}\n")).unwrap();
    let out_dir = dir.join("out");
    let out = eval(&[
        "--dataset",
        dir.to_str().unwrap(),
        "--profiles",
        "markdown-v1",
        "--retriever",
        "hybrid",
        "--text",
        "chunk",
        "--model-dir",
        model.to_str().unwrap(),
        "--budgets",
        "20,200",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let board = board_of(&out, &out_dir);
    let rows = board["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["retriever"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hybrid-bm25+minilm"], "{board}");
    // Both rankings put the ferry section first: its 14 tokens fit the
    // budget of 20 whole.
    assert_eq!(rows[0]["budget_recall@20"], 1.0, "{board}");
    assert_eq!(rows[0]["budget_recall@200"], 1.0, "{board}");
}
