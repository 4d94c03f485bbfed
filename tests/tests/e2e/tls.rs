//! TLS where connections leave the host (issue 15 item 2), against real
//! servers the tests start: a Postgres cluster that accepts only TLS with a
//! client certificate, and a second RabbitMQ node with only an `amqps`
//! listener that requires one. The worker's own connection code
//! (`store::ensure_database` / `store::pool`, `amqp::connect`) is driven
//! through its settings; a wrong CA, a host name the certificate does not
//! name, or a missing client certificate must each fail.

use std::collections::HashMap;

use lapin::options::QueueDeclareOptions;
use lapin::types::FieldTable;
use tests::tls::{pg_bindir, rabbitmq_installed, PgTls, Pki, RabbitTls};
use worker::config::Settings;

type R = anyhow::Result<()>;

fn settings(vars: &[(&str, String)]) -> anyhow::Result<Settings> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (format!("CHUNK_WORKER__{k}"), v.clone()))
        .collect();
    Ok(Settings::load(&tests::config_dir(), None, vars)?)
}

async fn pg_ssl_in_use(s: &Settings) -> anyhow::Result<bool> {
    worker::store::ensure_database(&s.database).await?;
    let pool = worker::store::pool(&s.database);
    worker::store::migrations::run(&pool).await?;
    let ssl: bool = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    Ok(ssl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_verify_full_with_a_ca_file_and_a_client_certificate() -> R {
    let Some(bindir) = pg_bindir() else {
        testkit::missing::<()>(
            "Postgres's server programs (pg_config --bindir has no initdb)",
            "install the postgresql server package",
        );
        return Ok(());
    };
    let pki = Pki::generate()?;
    let pg = PgTls::start(&bindir, &pki)?;
    let url = |host: &str, ca: &str, client: bool| {
        let mut u = format!(
            "postgres://postgres@{host}:{}/cw_tls?sslmode=verify-full&sslrootcert={}",
            pg.port,
            pki.file(ca)
        );
        if client {
            u.push_str(&format!(
                "&sslcert={}&sslkey={}",
                pki.file("client.pem"),
                pki.file("client.key")
            ));
        }
        u
    };

    let good = settings(&[("DATABASE__URL", url("localhost", "ca.pem", true))])?;
    assert!(pg_ssl_in_use(&good).await?, "the session is encrypted");

    for (why, bad) in [
        ("an unrelated CA", url("localhost", "other-ca.pem", true)),
        (
            "a host name the certificate does not name",
            url("127.0.0.1", "ca.pem", true),
        ),
        ("no client certificate", url("localhost", "ca.pem", false)),
        (
            "no TLS at all",
            format!(
                "postgres://postgres@localhost:{}/cw_tls?sslmode=disable",
                pg.port
            ),
        ),
    ] {
        let s = settings(&[("DATABASE__URL", bad)])?;
        let r = pg_ssl_in_use(&s).await;
        assert!(r.is_err(), "connecting with {why} must fail");
    }
    Ok(())
}

async fn amqps_declares(s: &Settings) -> anyhow::Result<()> {
    let conn = worker::amqp::connect(&s.amqp, "chunk-worker tls test").await?;
    let channel = conn.create_channel().await?;
    channel
        .queue_declare(
            "tls-test",
            QueueDeclareOptions {
                exclusive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    conn.close(200, "done").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amqps_with_a_ca_file_a_client_certificate_and_name_verification() -> R {
    if !rabbitmq_installed() {
        testkit::missing::<()>("rabbitmq-server", "install the rabbitmq-server package");
        return Ok(());
    }
    let pki = Pki::generate()?;
    let node = RabbitTls::start(&pki, true)?;
    let tls = |host: &str, ca: &str, client: bool| {
        let mut v = vec![
            (
                "AMQP__URL",
                format!("amqps://guest:guest@{host}:{}/%2f", node.port),
            ),
            ("AMQP__TLS_CA_FILE", pki.file(ca)),
        ];
        if client {
            v.push(("AMQP__TLS_CERT_FILE", pki.file("client.pem")));
            v.push(("AMQP__TLS_KEY_FILE", pki.file("client.key")));
        }
        v
    };
    amqps_declares(&settings(&tls("localhost", "ca.pem", true))?).await?;
    for (why, vars) in [
        ("an unrelated CA", tls("localhost", "other-ca.pem", true)),
        (
            "a host name the certificate does not name",
            tls("127.0.0.1", "ca.pem", true),
        ),
        ("no client certificate", tls("localhost", "ca.pem", false)),
    ] {
        let r = amqps_declares(&settings(&vars)?).await;
        assert!(r.is_err(), "connecting with {why} must fail");
    }
    // TLS files with a plain amqp:// URL are a settings error, not ignored.
    let plain = settings(&[
        (
            "AMQP__URL",
            format!("amqp://guest:guest@localhost:{}/%2f", node.port),
        ),
        ("AMQP__TLS_CA_FILE", pki.file("ca.pem")),
    ]);
    assert!(plain.is_err());
    Ok(())
}
