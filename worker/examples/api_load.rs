//! Load generator for the synchronous API (issue 14's benchmark): the
//! median-sized Markdown file of a directory, `POST /v1/chunk` over
//! keep-alive connections with a token signed here.
//!
//! ```sh
//! chunk-worker serve &   # with api.enabled and the same HS256 secret
//! cargo run --release -p worker --example api_load -- \
//!   --url http://127.0.0.1:9464 --secret-file S --dir ../shared/corpus/en \
//!   --clients 16 --seconds 20 [--rate 200] [--pid PID]
//! ```
//!
//! Closed loop (no `--rate`): each client sends its next request when the
//! last one is answered: requests/s. Open loop (`--rate R`): requests are
//! scheduled R per second across the clients and latency counts from the
//! scheduled time (no coordinated omission): p50/p99. With `--pid`, the
//! server's CPU time per request is read from /proc, and the time to verify
//! one token (the same `Verifier` the server uses) is measured here: the
//! share of the server's CPU that JWT verification takes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // reason: a benchmark tool fails loudly

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::json;

struct Args {
    url: String,
    secret: String,
    dir: PathBuf,
    clients: usize,
    seconds: u64,
    rate: Option<f64>,
    pid: Option<u32>,
}

fn args() -> Args {
    let mut a = Args {
        url: "http://127.0.0.1:9464".into(),
        secret: String::new(),
        dir: PathBuf::from("../shared/corpus/en"),
        clients: 16,
        seconds: 20,
        rate: None,
        pid: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().expect("every flag takes a value");
        match k.as_str() {
            "--url" => a.url = v,
            "--secret-file" => a.secret = std::fs::read_to_string(v).unwrap().trim().to_owned(),
            "--dir" => a.dir = PathBuf::from(v),
            "--clients" => a.clients = v.parse().unwrap(),
            "--seconds" => a.seconds = v.parse().unwrap(),
            "--rate" => a.rate = Some(v.parse().unwrap()),
            "--pid" => a.pid = Some(v.parse().unwrap()),
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(!a.secret.is_empty(), "--secret-file is required");
    a
}

fn median_file(dir: &PathBuf) -> (PathBuf, String) {
    let mut files: Vec<(u64, PathBuf)> = walk(dir)
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.len(), p)))
        .collect();
    files.sort();
    let (_, path) = files.swap_remove(files.len() / 2);
    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
    (path, text)
}

fn walk(dir: &PathBuf) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
    out
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn main() {
    let a = args();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (path, markdown) = median_file(&a.dir);
    let exp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let claims =
        json!({"sub": "bench", "tenant_id": "bench-tenant", "scope": "ingest:write", "exp": exp});
    let token = encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(a.secret.as_bytes()),
    )
    .unwrap();
    let body = json!({"document_id": "bench", "markdown": markdown}).to_string();
    println!(
        "document {} ({} bytes), {} clients, {} s, {}",
        path.display(),
        markdown.len(),
        a.clients,
        a.seconds,
        a.rate.map_or("closed loop".to_owned(), |r| format!(
            "{r} requests/s scheduled"
        ))
    );
    let latencies = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let errors = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(0));
    let ticks_before = a.pid.map(cpu_ticks);
    let start = Instant::now();
    let end = start + Duration::from_secs(a.seconds);
    let threads: Vec<_> = (0..a.clients)
        .map(|_| {
            let (url, token, body) = (format!("{}/v1/chunk", a.url), token.clone(), body.clone());
            let (latencies, errors, next, rate) =
                (latencies.clone(), errors.clone(), next.clone(), a.rate);
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .pool_max_idle_per_host(1)
                    .build()
                    .unwrap();
                let mut mine = Vec::new();
                loop {
                    let scheduled = match rate {
                        Some(r) => {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let at = start + Duration::from_secs_f64(i as f64 / r);
                            if at >= end {
                                break;
                            }
                            if let Some(wait) = at.checked_duration_since(Instant::now()) {
                                std::thread::sleep(wait);
                            }
                            at
                        }
                        None => {
                            let now = Instant::now();
                            if now >= end {
                                break;
                            }
                            now
                        }
                    };
                    let r = client
                        .post(&url)
                        .bearer_auth(&token)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .and_then(|r| {
                            let ok = r.status().is_success();
                            r.bytes().map(|_| ok)
                        });
                    if !matches!(r, Ok(true)) {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    mine.push(scheduled.elapsed());
                }
                latencies.lock().unwrap().extend(mine);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let wall = start.elapsed().as_secs_f64();
    let mut l = latencies.lock().unwrap().clone();
    l.sort();
    let n = l.len();
    let pct = |p: f64| l[((n as f64 * p) as usize).min(n - 1)].as_secs_f64() * 1000.0;
    println!(
        "{n} requests in {wall:.1} s: {:.0} requests/s, {} errors; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        n as f64 / wall,
        errors.load(Ordering::Relaxed),
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
    if let (Some(pid), Some(before)) = (a.pid, ticks_before) {
        let ticks = cpu_ticks(pid) - before;
        // USER_HZ is 100 on Linux.
        let cpu_per_request_us = ticks as f64 * 10_000.0 / n as f64;
        let settings = worker::config::JwtSettings {
            hs256_secret: Some(a.secret.clone().into()),
            public_keys_file: None,
            issuer: None,
            audience: None,
            tenant_claim: "tenant_id".into(),
        };
        let verifier = worker::api::auth::Verifier::new(&settings).unwrap();
        let header = format!("Bearer {token}");
        let rounds = 20_000;
        let t = Instant::now();
        for _ in 0..rounds {
            verifier.verify(Some(&header)).unwrap();
        }
        let verify_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;
        println!(
            "server CPU {:.0} us per request; JWT verification {:.1} us = {:.1}% of it",
            cpu_per_request_us,
            verify_us,
            verify_us / cpu_per_request_us * 100.0
        );
    }
}
