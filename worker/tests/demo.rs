//! `chunk-worker demo` against the real local services: it stores every
//! sample document, reports each one, and exits 0.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use std::process::Command;

#[test]
fn demo_stores_the_documents_it_publishes_and_reports_them() {
    let id = format!(
        "{:x}",
        std::process::id() as u64 * 7919
            + std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos() as u64
    );
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/tests/fixtures");
    let inputs = [
        format!("{fixtures}/06-confluence-page.md"),
        format!("{fixtures}/03-big-table.md"),
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("demo")
        .args(&inputs)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            format!("postgres://postgres@127.0.0.1:5432/cw_demo_{id}"),
        )
        .env("CHUNK_WORKER__TOPOLOGY__PREFIX", format!("demo{id}."))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Best-effort cleanup of the database the demo created.
    let _ = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-c",
            &format!("DROP DATABASE IF EXISTS cw_demo_{id} WITH (FORCE)"),
        ])
        .output();
    for queue in ["chunking.requests", "chunking.failed", "chunking.retry"] {
        let _ = Command::new("rabbitmqctl")
            .args(["-q", "delete_queue", &format!("demo{id}.{queue}")])
            .output();
    }
    assert!(out.status.success(), "demo failed:\n{stdout}\n{stderr}");
    for doc in ["demo:06-confluence-page", "demo:03-big-table"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(doc))
            .unwrap_or_else(|| panic!("{doc} missing:\n{stdout}"));
        assert!(line.ends_with("stored"), "{line}");
    }
    assert!(
        stdout.contains("2 chunking.completed/failed events received downstream"),
        "{stdout}"
    );
}
