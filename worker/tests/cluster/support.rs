//! The cluster test's tools: the cluster `scripts/cluster/cluster.sh`
//! started (its nodes, stopped, killed and restarted through that script),
//! `chunk-worker run` processes, their `/metrics`, a publisher with
//! confirms that fails over like the worker, and the documents.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lapin::BasicProperties;
use serde_json::{json, Value};
use worker::amqp::publisher::Publisher;
use worker::amqp::Failover;
use worker::config::AmqpSettings;

/// The cluster of `CLUSTER_DIR` (its `env` file, written by `cluster.sh
/// start`).
pub struct Cluster {
    pub dir: PathBuf,
    /// Node names (`cw52n1...@localhost`), node 1 first.
    pub names: Vec<String>,
    /// AMQP ports, node 1 first.
    pub ports: Vec<u16>,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cluster/cluster.sh")
}

impl Cluster {
    /// The cluster `CLUSTER_DIR` names, or `None` when it is not set.
    pub fn from_env() -> Option<Self> {
        let dir = PathBuf::from(std::env::var_os("CLUSTER_DIR")?);
        let text = std::fs::read_to_string(dir.join("env")).expect("CLUSTER_DIR/env");
        let vars: HashMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
        let names = (1..=3)
            .map(|i| vars[format!("CLUSTER_NODE_{i}").as_str()].to_owned())
            .collect();
        let ports = (1..=3)
            .map(|i| vars[format!("CLUSTER_PORT_{i}").as_str()].parse().unwrap())
            .collect();
        Some(Self { dir, names, ports })
    }

    /// `amqp.urls` listing the nodes in `order` (0-based indices).
    pub fn urls(&self, order: &[usize]) -> String {
        order
            .iter()
            .map(|&i| format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.ports[i]))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new(script())
            .arg(args[0])
            .arg(&self.dir)
            .args(&args[1..])
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(out.status.success(), "cluster.sh {args:?} failed");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Stops node `i` (0-based) gracefully.
    pub fn stop(&self, i: usize) {
        self.run(&["stop", &(i + 1).to_string()]);
    }

    /// SIGKILLs node `i`'s VM.
    pub fn kill(&self, i: usize) {
        self.run(&["kill", &(i + 1).to_string()]);
    }

    /// Starts node `i` again and waits until it runs.
    pub fn restart(&self, i: usize) {
        self.run(&["restart", &(i + 1).to_string()]);
    }

    /// The node (0-based) leading the quorum queue `queue`.
    pub fn leader(&self, queue: &str) -> usize {
        let name = self.run(&["leader", queue]);
        self.names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("leader {name:?} of {queue} is no node of {:?}", self.names))
    }

    /// The node (0-based) whose AMQP port is `port`.
    pub fn node_of_port(&self, port: u16) -> Option<usize> {
        self.ports.iter().position(|p| *p == port)
    }
}

/// A free loopback port (released at once; the worker binds it).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// One `chunk-worker run` process.
pub struct Worker {
    pub name: &'static str,
    pub http_port: u16,
    pub log: PathBuf,
    child: Option<Child>,
}

impl Worker {
    pub fn spawn(name: &'static str, env: &[(String, String)], log: PathBuf) -> Self {
        let http_port = free_port();
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
            .arg("run")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("CHUNK_WORKER__HTTP__ADDR", format!("127.0.0.1:{http_port}"))
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap();
        Self {
            name,
            http_port,
            log,
            child: Some(child),
        }
    }

    /// `/metrics`, or empty when it does not answer.
    pub async fn metrics(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", self.http_port)).await else {
            return String::new();
        };
        let req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        if s.write_all(req.as_bytes()).await.is_err() {
            return String::new();
        }
        let mut buf = String::new();
        let _ = s.read_to_string(&mut buf).await;
        buf
    }

    /// The AMQP port of the node its consumer uses (from
    /// `chunking_broker_node{link="consumer"}`).
    pub async fn consumer_port(&self) -> Option<u16> {
        let text = self.metrics().await;
        text.lines().find_map(|l| {
            let rest = l.strip_prefix("chunking_broker_node{link=\"consumer\",node=\"")?;
            let (node, value) = rest.split_once("\"} ")?;
            (value.trim() == "1").then_some(())?;
            node.rsplit_once(':')?.1.parse().ok()
        })
    }

    /// SIGTERM, then the exit code (`None`: killed after `limit`).
    pub async fn terminate(&mut self, limit: Duration) -> Option<i32> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// The last lines of its log.
    pub fn tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A confirming publisher over the cluster's nodes: a publish that fails
/// (node lost, nack, no confirm in time) is sent again after reconnecting
/// to the next node, so every message is confirmed at least once.
pub struct FailoverPublisher {
    amqp: AmqpSettings,
    failover: Failover,
    current: Option<(lapin::Connection, Publisher)>,
    /// Publishes sent again after a failure.
    pub resent: u64,
}

impl FailoverPublisher {
    pub fn new(amqp: AmqpSettings) -> Self {
        Self {
            failover: Failover::new(amqp.nodes.len()),
            amqp,
            current: None,
            resent: 0,
        }
    }

    /// Publishes `body` (persistent, mandatory) and waits for the confirm,
    /// retrying on other nodes for up to two minutes.
    pub async fn publish(&mut self, exchange: &str, routing_key: &str, body: &[u8]) {
        let end = Instant::now() + Duration::from_secs(120);
        loop {
            if self.current.is_none() {
                if let Ok(c) = self
                    .failover
                    .connect(&self.amqp, "cluster test publisher")
                    .await
                {
                    if let Ok(p) = Publisher::open(&c.connection).await {
                        self.current = Some((c.connection, p));
                    }
                }
            }
            if let Some((_, publisher)) = &self.current {
                let props = BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type("application/json".into());
                let sent = tokio::time::timeout(
                    Duration::from_secs(15),
                    publisher.publish(exchange, routing_key, body, props),
                )
                .await;
                if let Ok(Ok(())) = sent {
                    return;
                }
                self.resent += 1;
                self.current = None;
                self.failover.lost();
            }
            assert!(Instant::now() < end, "could not publish for two minutes");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The Markdown of `doc`'s version `version`.
pub fn markdown(doc: usize, version: usize) -> String {
    let mut md = format!("# Document {doc}\n\nVersion {version} of document {doc}.\n\n");
    for s in 0..(3 + (doc * 7 + version) % 10) {
        md.push_str(&format!(
            "## Section {s}\n\nStep {s} of document {doc}, version {version}: the procedure in \
             some detail, with enough words to need real token counting.\n\n- item {s}.1\n\n"
        ));
    }
    md
}

/// The upstream message of `doc`'s version `version`.
pub fn message(doc: usize, version: usize) -> Value {
    json!({
        "schema": "normalize_markdown.completed/v1",
        "event_id": format!("00000000-0000-4000-8000-{:06}{:06}", doc, version),
        "tenant_id": "cluster-tenant",
        "document_id": format!("doc-{doc}"),
        "source_version_id": format!("v{version}"),
        "source_version_seq": version,
        "source_type": "confluence",
        "markdown": markdown(doc, version),
        "occurred_at": format!("2026-12-05T10:{:02}:{:02}Z", version / 60, version % 60),
    })
}
