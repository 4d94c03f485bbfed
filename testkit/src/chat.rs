//! A local chat-completions endpoint for tests of `llm_chaptering`: a
//! plain HTTP/1.1 server on 127.0.0.1 that answers each request from a
//! script (recorded answers, errors, delays), so no test reaches a real
//! model. Each connection is served on its own thread; the server lives as
//! long as the test process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server sends back for one request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Response body.
    pub body: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Waits this long before answering (to test time-outs).
    pub delay: Duration,
}

impl Reply {
    /// A 200 chat completion whose first choice's message is `content`.
    pub fn answer(content: &str) -> Self {
        let body = serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "test",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }],
        });
        Self::status(200, &body.to_string())
    }

    /// Any status with a body.
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status,
            body: body.to_owned(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// This reply, sent after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// This reply with a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

type Script = dyn Fn(usize, &str) -> Reply + Send + Sync;

/// A running server.
#[derive(Clone)]
pub struct ChatServer {
    url: String,
    hits: Arc<AtomicUsize>,
    bodies: Arc<Mutex<Vec<String>>>,
    auth: Arc<Mutex<Vec<Option<String>>>>,
}

impl std::fmt::Debug for ChatServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatServer")
            .field("url", &self.url)
            .finish()
    }
}

impl ChatServer {
    /// Starts a server answering request `n` (0-based) with body `body` by
    /// `script(n, body)`.
    pub fn start(script: impl Fn(usize, &str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("cannot listen on 127.0.0.1: {e}"),
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let server = Self {
            url: format!("http://127.0.0.1:{port}/v1/chat/completions"),
            hits: Arc::new(AtomicUsize::new(0)),
            bodies: Arc::new(Mutex::new(Vec::new())),
            auth: Arc::new(Mutex::new(Vec::new())),
        };
        let script: Arc<Script> = Arc::new(script);
        let seen = Seen {
            hits: server.hits.clone(),
            bodies: server.bodies.clone(),
            auth: server.auth.clone(),
        };
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (script, seen) = (script.clone(), seen.clone());
                std::thread::spawn(move || serve(stream, &*script, &seen));
            }
        });
        server
    }

    /// A server that answers like [`shared::ToyChat`]: a boundary before
    /// every heading unit and every sixth unit.
    pub fn toy() -> Self {
        Self::start(|_, body| Reply::answer(&toy_answer(body)))
    }

    /// The endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Requests served so far.
    pub fn requests(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The `Authorization` header of each request, in arrival order.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.auth.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// The request bodies, in arrival order.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

/// [`shared::ToyChat`]'s answer to a request body.
pub fn toy_answer(body: &str) -> String {
    use shared::llm::{ChatMessage, ChatRequest, ChatTransport};
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let last = v["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let req = ChatRequest {
        endpoint: String::new(),
        model: String::new(),
        messages: vec![ChatMessage {
            role: "user",
            content: last,
        }],
        max_answer_tokens: 0,
        seed: 0,
        timeout: Duration::ZERO,
        attempts: 1,
        retry_base: Duration::ZERO,
        api_key_file: None,
        api_key_env: None,
    };
    shared::ToyChat::default()
        .complete(&req)
        .unwrap_or_default()
}

/// What the server records.
#[derive(Clone)]
struct Seen {
    hits: Arc<AtomicUsize>,
    bodies: Arc<Mutex<Vec<String>>>,
    auth: Arc<Mutex<Vec<Option<String>>>>,
}

fn serve(stream: TcpStream, script: &Script, seen: &Seen) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    let mut auth = None;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("authorization") {
                auth = Some(value.trim().to_owned());
            }
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let n = seen.hits.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut b) = seen.bodies.lock() {
        b.push(body.clone());
    }
    if let Ok(mut a) = seen.auth.lock() {
        a.push(auth);
    }
    let reply = script(n, &body);
    std::thread::sleep(reply.delay);
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = writer.write_all(head.as_bytes());
    let _ = writer.write_all(reply.body.as_bytes());
    let _ = writer.flush();
}
