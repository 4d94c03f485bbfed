//! `chunk-worker bench` against the real local services, in the modes issue
//! 18's figures come from: a backlog drained by two `chunk-worker run`
//! children, and the in-process worker under a live publisher. Each run must
//! see every event, report the workers it ran, the CPU split and the bytes
//! per row, and leave no database behind.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use std::process::Command;

fn run_bench(extra: &[&str]) -> (String, String) {
    let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tests/fixtures/06-confluence-page.md"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .args(["bench", "--docs", "12", fixture])
        .args(extra)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            format!("postgres://postgres@127.0.0.1:5432/cw_bench_{id}"),
        )
        .env("CHUNK_WORKER__TOPOLOGY__PREFIX", format!("bench{id}."))
        .env("CHUNK_WORKER__LOG__LEVEL", "warn")
        .output()
        .unwrap();
    for queue in ["chunking.requests", "chunking.failed", "chunking.retry"] {
        let _ = Command::new("rabbitmqctl")
            .args(["-q", "delete_queue", &format!("bench{id}.{queue}")])
            .output();
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "bench failed:\n{stdout}\n{stderr}");
    // The run's own database (the configured name + _bench_<random>) is gone.
    let left = Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-Atc"])
        .arg(format!(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'cw_bench_{id}%'"
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "0");
    (stdout, stderr)
}

#[test]
fn a_backlog_is_drained_by_two_worker_processes() {
    let (stdout, stderr) = run_bench(&["--backlog", "--processes", "2"]);
    assert!(
        stdout.contains("12 chunking.completed events"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("workers: 2 chunk-worker run processes"),
        "{stdout}"
    );
    assert!(
        stdout.contains("backlog published, workers started to last event"),
        "{stdout}"
    );
    // A backlog has no publish-to-event latency worth reporting.
    assert!(!stdout.contains("latency"), "{stdout}");
    // The two children did the work: the CPU split names the worker, and
    // twelve documents' chunk rows were stored.
    assert!(
        stdout.contains("cpu seconds per 1000 documents: worker"),
        "{stdout}"
    );
    let rows = rows_of(&stdout, "chunks");
    assert!(
        rows >= 12 && rows % 12 == 0,
        "{rows} rows for 12 copies\n{stdout}"
    );
    assert_eq!(rows_of(&stdout, "source_versions"), 12, "{stdout}");
}

/// The row count the storage report gives `table`.
fn rows_of(stdout: &str, table: &str) -> u64 {
    stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["storage", table]))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no row count for {table}:\n{stdout}"))
}

#[test]
fn the_in_process_worker_reports_latency_under_a_live_publisher() {
    let (stdout, stderr) = run_bench(&[]);
    assert!(
        stdout.contains("12 chunking.completed events"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("workers: in-process"), "{stdout}");
    let all = stdout
        .lines()
        .find(|l| l.starts_with("latency") && l.contains(" all "))
        .unwrap_or_else(|| panic!("no latency line:\n{stdout}"));
    assert!(all.contains("(n=   12)"), "{all}");
}
