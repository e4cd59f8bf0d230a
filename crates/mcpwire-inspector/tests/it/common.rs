//! Helpers: an inspector on a loopback port, raw HTTP to it, the reference server over HTTP
//! in this process, the event stream read with a deadline.

use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use mcpwire_inspector::{Inspector, RunningInspector};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The longest any one step may take.
pub const STEP: Duration = Duration::from_secs(20);

/// An inspector on 127.0.0.1 and a free port.
pub async fn inspector() -> RunningInspector {
    Inspector::builder().build().await.expect("the inspector starts")
}

/// An answer read off the socket.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Raw {
    /// A header's value (the first), by name, case-insensitively.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Sends `request` (the request line and headers, without the blank line; `Connection:
/// close` is added) and `body` as is, and reads the whole answer.
pub async fn raw(addr: SocketAddr, head: &str, body: &str) -> Raw {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let mut text = head.trim_end().replace('\n', "\r\n");
        if !body.is_empty() {
            text.push_str(&format!("\r\nContent-Length: {}", body.len()));
        }
        text.push_str("\r\nConnection: close\r\n\r\n");
        text.push_str(body);
        stream.write_all(text.as_bytes()).await.expect("write");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        String::from_utf8_lossy(&answer).into_owned()
    };
    let answer = tokio::time::timeout(STEP, exchange).await.expect("the inspector answers in time");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Raw { status, head: head.to_owned(), body: body.to_owned() }
}

/// A client of the inspector's API with its token.
pub struct Api {
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
}

impl Api {
    pub fn new(inspector: &RunningInspector) -> Self {
        let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(60)).build().expect("client");
        Self { base: format!("http://{}", inspector.local_addr()), token: inspector.token().to_owned(), http }
    }

    /// POSTs `body` to `path`; the status and the JSON answer.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let send = self.http.post(format!("{}{path}", self.base)).bearer_auth(&self.token).json(&body).send();
        let response = tokio::time::timeout(STEP, send).await.expect("in time").expect("sent");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// GETs `path`.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let send = self.http.get(format!("{}{path}", self.base)).bearer_auth(&self.token).send();
        let response = tokio::time::timeout(STEP, send).await.expect("in time").expect("sent");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The event stream, as events `{seq, kind, data}`.
    pub async fn events(&self) -> Events {
        let response = self
            .http
            .get(format!("{}/api/events", self.base))
            .bearer_auth(&self.token)
            .timeout(Duration::from_secs(600))
            .send()
            .await
            .expect("the event stream opens");
        assert_eq!(response.status(), 200);
        Events { stream: Box::pin(response.bytes_stream()), buffer: String::new() }
    }
}

/// The event stream of the inspector.
pub struct Events {
    stream: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buffer: String,
}

impl Events {
    /// The next event whose kind is `kind` and for which `check` holds.
    pub async fn until(&mut self, kind: &str, check: impl Fn(&Value) -> bool) -> Value {
        let wait = async {
            loop {
                while let Some(cut) = self.buffer.find("\n\n") {
                    let chunk: String = self.buffer.drain(..cut + 2).collect();
                    let data: String = chunk
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|l| l.strip_prefix(' ').unwrap_or(l))
                        .collect::<Vec<_>>()
                        .join("\n");
                    if data.is_empty() {
                        continue;
                    }
                    let event: Value = serde_json::from_str(&data).expect("an event is JSON");
                    if event["kind"] == kind && check(&event["data"]) {
                        return event["data"].clone();
                    }
                }
                let bytes = self.stream.next().await.expect("the stream goes on").expect("readable");
                self.buffer.push_str(&String::from_utf8_lossy(&bytes));
            }
        };
        tokio::time::timeout(STEP, wait).await.unwrap_or_else(|_| panic!("no {kind} event in time"))
    }
}

/// The reference server (`mcp serve`'s) over HTTP on 127.0.0.1: Streamable HTTP at /mcp,
/// HTTP+SSE at /sse. Stopped when dropped.
pub struct Reference {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Reference {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Reference {
    pub async fn start() -> Self {
        Self::start_with(mcpwire_reference::server()).await
    }

    /// `server` instead of the reference server.
    pub async fn start_with(server: mcpwire_server::Server) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let http = mcpwire_http::McpHttp::new(server, mcpwire_http::HttpConfig::default());
        let task = tokio::spawn(http.serve(listener));
        Self { addr, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
