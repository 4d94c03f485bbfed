//! The soak's pieces: a seeded schedule, the worker processes it kills and
//! restarts, the messages it publishes, and the crash-looping message.

use super::*;

/// xorshift64*: a seeded schedule without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.below(hi - lo))
    }
}

pub fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

pub struct Worker {
    pub child: Option<Child>,
    pub env: Vec<(String, String)>,
    pub log: PathBuf,
    pub config: PathBuf,
}

impl Worker {
    pub fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
            .arg("run")
            .env("CHUNK_WORKER_CONFIG_DIR", &self.config)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
    }
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    pub async fn terminate(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let end = Instant::now() + Duration::from_secs(30);
            while c.try_wait().unwrap().is_none() && Instant::now() < end {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn markdown(doc: usize, version: usize) -> String {
    let mut md = format!("# Document {doc}\n\nVersion {version} of document {doc}.\n\n");
    for s in 0..(3 + (doc * 7 + version) % 12) {
        md.push_str(&format!(
            "## Section {s}\n\nStep {s} of document {doc}, version {version}: the procedure in some \
             detail, with enough words to need real token counting.\n\n- item {s}.1\n- item {s}.2\n\n"
        ));
    }
    md
}

pub fn message(doc: usize, version: usize) -> Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": format!("00000000-0000-4000-8000-{:06}{:06}", doc, version),
        "tenant_id": "soak-tenant",
        "document_id": format!("doc-{doc}"),
        "source_version_id": format!("v{version}"),
        "source_version_seq": version,
        "source_type": "confluence",
        "markdown": markdown(doc, version),
        "occurred_at": format!("2026-11-20T10:{:02}:{:02}Z", version / 60, version % 60),
    })
}

pub async fn publish(channel: &Channel, exchange: &str, msg: &Value) {
    channel
        .basic_publish(
            exchange,
            "normalize_markdown.completed",
            BasicPublishOptions::default(),
            msg.to_string().as_bytes(),
            BasicProperties::default().with_delivery_mode(2),
        )
        .await
        .unwrap()
        .await
        .unwrap();
}

pub async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap_or(-1)
}

/// The crash-looping message: once everything published so far is stored,
/// both workers are killed, the message is published and taken and
/// abandoned (no ack) `DELIVERY_LIMIT` times, as a worker dying on it each
/// time would; the restarted workers must dead-letter it as DELIVERY_LIMIT.
pub async fn crash_loop(
    conn: &Connection,
    channel: &Channel,
    topology: &Topology,
    exchange: &str,
    pool: &PgPool,
    workers: &mut [Worker],
    published: &BTreeMap<usize, BTreeSet<usize>>,
) {
    let versions: i64 = published.values().map(|v| v.len() as i64).sum();
    let deadline = Instant::now() + Duration::from_secs(120);
    while count(pool, "SELECT count(*) FROM source_versions").await < versions {
        assert!(
            Instant::now() < deadline,
            "the backlog before the crash loop never drained"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for w in workers.iter_mut() {
        w.kill();
    }
    let mut poison = message(0, 1);
    poison["document_id"] = json!("poison");
    poison["event_id"] = json!(uuid::Uuid::new_v4().to_string());
    publish(channel, exchange, &poison).await;
    let queue = topology.requests_queue();
    let mut abandoned = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while abandoned < DELIVERY_LIMIT {
        assert!(
            Instant::now() < deadline,
            "the crash-looping message never came"
        );
        let ch = conn.create_channel().await.unwrap();
        let Some(got) = ch
            .basic_get(&queue, BasicGetOptions { no_ack: false })
            .await
            .unwrap()
        else {
            let _ = ch.close(200, "empty").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if got.delivery.data != poison.to_string().as_bytes() {
            // A message a killed worker stored but had not acked yet: its
            // version is in the database (checked above), so acking this
            // redelivery loses nothing.
            got.delivery.ack(BasicAckOptions::default()).await.unwrap();
            let _ = ch.close(200, "stored already").await;
            continue;
        }
        ch.basic_nack(
            got.delivery.delivery_tag,
            BasicNackOptions {
                requeue: true,
                multiple: false,
            },
        )
        .await
        .unwrap();
        ch.close(200, "crash").await.unwrap();
        abandoned += 1;
    }
    for w in workers.iter_mut() {
        w.spawn();
    }
}
