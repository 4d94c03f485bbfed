//! Secrets never leave the process (issue 15 item 3): the real binary runs
//! with its database URL and password and its broker password in files (as
//! Kubernetes mounts secrets), at debug log level, through stored documents,
//! a dead-lettered message, a broker connection refused for a wrong password,
//! a settings error and `/metrics`; then its whole output is searched for
//! every secret it was given. The broker password is real (a RabbitMQ user
//! made for the run); Postgres here trusts local connections, so its
//! passwords are configured and sent but not checked.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lapin::options::{BasicPublishOptions, ExchangeDeclareOptions};
use lapin::types::FieldTable;
use lapin::{BasicProperties, ExchangeKind};
use serde_json::json;
use sqlx::PgPool;

const DEADLINE: Duration = Duration::from_secs(60);

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

fn suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()
}

fn rabbitmqctl(args: &[&str]) -> bool {
    Command::new("rabbitmqctl")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Closes the broker connections of `user` only (other tests share the broker).
fn close_connections_of(user: &str) {
    let out = Command::new("rabbitmqctl")
        .args([
            "list_connections",
            "pid",
            "user",
            "--no-table-headers",
            "--silent",
        ])
        .output()
        .unwrap();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((pid, u)) = line.split_once('\t') {
            if u.trim() == user {
                assert!(rabbitmqctl(&[
                    "close_connection",
                    pid.trim(),
                    "secret test"
                ]));
            }
        }
    }
}

/// The worker process, killed when the test ends however it ends.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_secrets_never_reach_logs_metrics_or_errors() {
    let id = suffix();
    let amqp_user = format!("cw_secret_{id}");
    // Distinct, unmistakable secrets (and the forms a URL would carry them in).
    let amqp_secret = format!("AmqpS3cret{id}");
    let db_url_secret = format!("DbUrlS3cret{id}");
    let db_file_secret = format!("DbFileS3cret{id}");
    if !rabbitmqctl(&["add_user", &amqp_user, &amqp_secret]) {
        testkit::missing::<()>(
            "rabbitmqctl (to add a RabbitMQ user)",
            "install RabbitMQ's server package and run the tests as a user that may use rabbitmqctl",
        );
        return;
    }
    assert!(rabbitmqctl(&[
        "set_permissions",
        "-p",
        "/",
        &amqp_user,
        ".*",
        ".*",
        ".*"
    ]));

    let dir = std::env::temp_dir().join(format!("cw_secrets_{id}"));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("cw_test_{id}");
    let prefix = format!("s{id}.");
    let write = |name: &str, content: String| {
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        p
    };
    let db_url_file = write(
        "database-url",
        format!("postgres://postgres:{db_url_secret}@127.0.0.1:5432/{db}\n"),
    );
    let db_password_file = write("database-password", format!("{db_file_secret}\n"));
    let amqp_password_file = write("amqp-password", format!("{amqp_secret}\n"));
    let api_secret = format!("ApiJwtS3cret{id}-0123456789abcdef");
    let api_secret_file = write("api-jwt", format!("{api_secret}\n"));
    let http_port = free_port();
    let log_path = dir.join("worker.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("run")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env(
            "CHUNK_WORKER__DATABASE__URL",
            "postgres://placeholder@nowhere/none",
        )
        .env("CHUNK_WORKER__DATABASE__URL_FILE", &db_url_file)
        .env("CHUNK_WORKER__DATABASE__PASSWORD_FILE", &db_password_file)
        .env(
            "CHUNK_WORKER__AMQP__URL",
            format!("amqp://{amqp_user}@127.0.0.1:5672/%2f"),
        )
        .env("CHUNK_WORKER__AMQP__PASSWORD_FILE", &amqp_password_file)
        .env("CHUNK_WORKER__TOPOLOGY__PREFIX", &prefix)
        .env("CHUNK_WORKER__HTTP__ADDR", format!("127.0.0.1:{http_port}"))
        .env("CHUNK_WORKER__API__ENABLED", "true")
        .env(
            "CHUNK_WORKER__API__JWT__HS256_SECRET_FILE",
            &api_secret_file,
        )
        .env("CHUNK_WORKER__SOURCE__ROOT", std::env::temp_dir())
        .env("CHUNK_WORKER__LOG__FORMAT", "json")
        .env("RUST_LOG", "debug")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .map(Running)
        .unwrap();

    // Documents through the real broker with the user's password: stored,
    // and one dead-lettered.
    let (conn, channel) = tests::confirmed_channel().await.unwrap();
    let exchange = format!("{prefix}ingest.events");
    channel
        .exchange_declare(
            &exchange,
            ExchangeKind::Topic,
            ExchangeDeclareOptions {
                durable: true,
                ..ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();
    let publish = async |body: &[u8]| {
        channel
            .basic_publish(
                exchange.as_str(),
                "normalize_markdown.completed",
                BasicPublishOptions::default(),
                body,
                BasicProperties::default(),
            )
            .await
            .unwrap()
            .await
    };
    let pool = PgPool::connect("postgres://postgres@127.0.0.1:5432/postgres")
        .await
        .unwrap();
    let end = Instant::now() + DEADLINE;
    // The worker declares its queues once it is up: until then publishes
    // may be unroutable, so publish again until both documents are stored.
    let stored = loop {
        for (doc, body) in [
            ("d1", "# One\n\nFirst document.\n".to_owned()),
            ("d2", "# Two\n\nSecond document.\n".to_owned()),
        ] {
            let msg = json!({
                "schema": "normalize_markdown.completed/v1",
                "event_id": uuid::Uuid::new_v4().to_string(),
                "tenant_id": "acme-prod", "document_id": doc, "source_version_id": "v1",
                "source_type": "confluence", "markdown": body,
                "occurred_at": "2026-11-20T10:00:01Z"
            });
            let _ = publish(msg.to_string().as_bytes()).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let n: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM pg_database WHERE datname = '{db}'"
        ))
        .fetch_one(&pool)
        .await
        .unwrap();
        if n == 1 {
            let dbpool = PgPool::connect(&format!("postgres://postgres@127.0.0.1:5432/{db}"))
                .await
                .unwrap();
            let docs: i64 = sqlx::query_scalar("SELECT count(*) FROM documents")
                .fetch_one(&dbpool)
                .await
                .unwrap_or(0);
            dbpool.close().await;
            if docs == 2 {
                break true;
            }
        }
        if Instant::now() > end {
            break false;
        }
    };
    publish(b"{ not json").await.unwrap();
    // A message whose missing source file is named with an e-mail address
    // and a JWT (short signature): retried, then dead-lettered, and its
    // detail logged, scrubbed.
    let pii_mail = format!("pii.{id}@example.com");
    let pii_token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &json!({"sub": format!("pii-{id}")}),
        &jsonwebtoken::EncodingKey::from_secret(b"any-key-any-key-any-key-any-key!"),
    )
    .unwrap();
    let pii_jwt = format!(
        "{}.sg",
        pii_token.rsplit_once('.').map_or("", |(head, _)| head)
    );
    let missing = std::env::temp_dir().join(format!("{pii_mail}+{pii_jwt}.md"));
    let msg = json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": uuid::Uuid::new_v4().to_string(),
        "tenant_id": "acme-prod", "document_id": "d-pii", "source_version_id": "v1",
        "source_type": "file", "markdown_uri": format!("file://{}", missing.display()),
        "occurred_at": "2026-11-20T10:00:01Z"
    });
    publish(msg.to_string().as_bytes()).await.unwrap();
    // The source is retried for source.retry_ms (2 s) before it fails.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let metrics = scrape(http_port);
    // The API with a good token and a forged one: neither token is logged.
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let claims = json!({"sub": "u", "tenant_id": "acme-prod", "scope": "ingest:write", "exp": exp});
    let good_token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(api_secret.as_bytes()),
    )
    .unwrap();
    let forged_token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(b"forged-forged-forged-forged-forged!"),
    )
    .unwrap();
    let api_answers: Vec<String> = [&good_token, &forged_token]
        .iter()
        .map(|t| api_post(http_port, t))
        .collect();
    assert!(
        api_answers[0].starts_with("HTTP/1.0 200"),
        "{}",
        api_answers[0]
    );
    assert!(
        api_answers[1].starts_with("HTTP/1.0 401"),
        "{}",
        api_answers[1]
    );

    // The broker refuses the worker's password for a while: it logs the
    // loss and reconnects once the password is back.
    assert!(rabbitmqctl(&[
        "change_password",
        &amqp_user,
        "wrong-for-a-while"
    ]));
    close_connections_of(&amqp_user);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(rabbitmqctl(&["change_password", &amqp_user, &amqp_secret]));
    tokio::time::sleep(Duration::from_secs(2)).await;

    Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    let end = Instant::now() + DEADLINE;
    while child.0.try_wait().unwrap().is_none() && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.0.kill();

    // A settings error with the secret URL in a file.
    let bad_url_file = write(
        "bad-url",
        format!("postgres://postgres:{db_url_secret}@127.0.0.1:notaport/{db}"),
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("migrate")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__DATABASE__URL_FILE", &bad_url_file)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));

    let mut output = String::new();
    std::fs::File::open(&log_path)
        .unwrap()
        .read_to_string(&mut output)
        .unwrap();
    output.push_str(&String::from_utf8_lossy(&bad.stdout));
    output.push_str(&String::from_utf8_lossy(&bad.stderr));
    output.push_str(&metrics);

    let _ = rabbitmqctl(&["delete_user", &amqp_user]);
    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .execute(&pool)
        .await;
    pool.close().await;
    let _ = conn.close(200, "done").await;
    let _ = std::fs::remove_dir_all(&dir);

    assert!(
        stored,
        "the worker stored both documents:\n{}",
        tail(&output)
    );
    assert!(
        output.lines().count() > 50,
        "a debug run says plenty: {} lines",
        output.lines().count()
    );
    assert!(metrics.contains("chunking_operations_total"), "{metrics}");
    assert!(
        output.contains("<jwt>") && output.contains("<email>"),
        "the dead letter's detail was logged, scrubbed:\n{}",
        output
            .lines()
            .filter(|l| l.contains("d-pii"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    for answer in &api_answers {
        output.push_str(answer);
    }
    for secret in [
        &amqp_secret,
        &db_url_secret,
        &db_file_secret,
        &api_secret,
        &good_token,
        &forged_token,
        &pii_mail,
        &pii_jwt,
    ] {
        assert!(
            !output.contains(secret.as_str()),
            "{secret} appears in the output:\n{}",
            output
                .lines()
                .filter(|l| l.contains(secret.as_str()))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// POST /v1/chunk with `token`, as a bare HTTP/1.0 request: the answer.
fn api_post(port: u16, token: &str) -> String {
    use std::io::Write;
    let body = json!({"document_id": "api-doc", "markdown": "# A\n\nB.\n"}).to_string();
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = write!(
        stream,
        "POST /v1/chunk HTTP/1.0\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// GET /metrics with a bare HTTP/1.0 request.
fn scrape(port: u16) -> String {
    use std::io::Write;
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body);
    body
}
