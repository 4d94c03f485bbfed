//! The API switched off: no key or a short secret refuses to serve, and
//! `run` without the API answers every /v1 path with a 404 problem.

use std::process::Command;

use crate::{client, config_dir, problem};

#[test]
fn the_api_is_off_without_a_key_and_refuses_a_short_secret() {
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__API__ENABLED", "true")
        .env("CHUNK_WORKER__API__JWT__HS256_SECRET", "too-short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("api.jwt.hs256_secret"));
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__HTTP__ADDR", "127.0.0.1:0")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "serve without the API is an error"
    );
}

/// `chunk-worker run` without the API answers every /v1 path with a 404
/// problem (the routes are those `run` merges into its HTTP server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_api_every_v1_path_is_a_404_problem() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, worker::api::routes(None)).await;
    });
    let r = tokio::task::spawn_blocking(move || {
        client()
            .post(format!("http://{addr}/v1/chunk"))
            .body("{}")
            .send()
            .unwrap()
    })
    .await
    .unwrap();
    let body = tokio::task::spawn_blocking(move || problem(r, 404))
        .await
        .unwrap();
    assert!(body["detail"].as_str().unwrap().contains("api.enabled"));
}
