//! The HTTP client against a server that refuses a request with a JSON-RPC error naming no
//! request (`"id": null`), as the TypeScript SDK's servers answer `server/discover` before
//! `initialize` (400 `Bad Request: Server not initialized`). The POST carried one request,
//! so the error is that request's answer: era detection falls back to `initialize` at once
//! instead of waiting out the probe timeout.
//!
//! The server is a few lines of HTTP/1.1 over a std `TcpListener` on 127.0.0.1, one thread
//! per connection, every answer closing its connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_client::{Client, Era, ProtocolVersion};
use mcpwire_transport::http::{self, HttpOptions};
use serde_json::{json, Value};

/// What the TypeScript SDK's Streamable HTTP server answers a request before `initialize`.
const NOT_INITIALIZED: &str =
    r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;

/// A bound on each test, to detect a hang; not a timing assertion (the probe timeout is 60 s).
const HANG: Duration = Duration::from_secs(20);

/// A legacy-only Streamable HTTP server that refuses anything before `initialize` with
/// [`NOT_INITIALIZED`]; records the JSON-RPC methods POSTed to it.
struct TsLikeServer {
    url: String,
    methods: Arc<Mutex<Vec<String>>>,
}

impl TsLikeServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let methods = Arc::new(Mutex::new(Vec::new()));
        let initialized = Arc::new(Mutex::new(false));
        let seen = methods.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (seen, initialized) = (seen.clone(), initialized.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &seen, &initialized);
                });
            }
        });
        Self { url, methods }
    }

    fn methods(&self) -> Vec<String> {
        self.methods.lock().unwrap().clone()
    }
}

/// Answers one HTTP request and closes the connection.
fn serve(stream: TcpStream, seen: &Mutex<Vec<String>>, initialized: &Mutex<bool>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let (status, headers, answer) = if request_line.starts_with("POST ") {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        seen.lock().unwrap().push(method.clone());
        let id = message.get("id").cloned();
        match (method.as_str(), id) {
            ("initialize", Some(id)) => {
                *initialized.lock().unwrap() = true;
                let result = json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "ts-like", "version": "1.0.0"},
                });
                ("200 OK", "mcp-session-id: s-1\r\n", json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
            }
            (_, _) if !*initialized.lock().unwrap() => ("400 Bad Request", "", NOT_INITIALIZED.to_owned()),
            (_, None) => ("202 Accepted", "", String::new()),
            ("tools/list", Some(id)) => {
                ("200 OK", "", json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}).to_string())
            }
            (_, Some(id)) => ("200 OK", "", json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string()),
        }
    } else if request_line.starts_with("GET ") {
        ("405 Method Not Allowed", "", String::new())
    } else {
        ("200 OK", "", String::new())
    };
    let content_type = if answer.is_empty() { "" } else { "content-type: application/json\r\n" };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\n{content_type}{headers}content-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}

#[tokio::test]
async fn an_error_without_an_id_answers_the_request_the_post_carried() {
    let server = TsLikeServer::start();
    let mut connection = http::connect(&server.url, HttpOptions::default()).unwrap();
    let discover = json!({
        "jsonrpc": "2.0", "id": 7, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    });
    connection.outgoing.send(mcpwire_protocol::frame::Outbound::text(discover.to_string())).await.unwrap();
    let frame = tokio::time::timeout(HANG, connection.incoming.recv()).await.expect("an answer").unwrap().unwrap();
    let answer: Value = serde_json::from_str(&frame.text).unwrap();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: Server not initialized"}, "id": 7})
    );
    assert_eq!(server.methods(), ["server/discover"]);
}

#[tokio::test]
async fn detection_falls_back_to_initialize_at_once() {
    let server = TsLikeServer::start();
    let connection = http::connect(&server.url, HttpOptions::default()).unwrap();
    // Were the refusal not delivered as the probe's answer, connecting would wait the whole
    // probe timeout (60 s) and be caught by HANG.
    let client = Client::builder("test", "1").probe_timeout(Duration::from_secs(60)).build();
    let session = tokio::time::timeout(HANG, client.connect(connection))
        .await
        .expect("connected without waiting out the probe timeout")
        .unwrap();
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(session.server_info().unwrap().name, "ts-like");
    let tools = tokio::time::timeout(HANG, session.list_tools(None)).await.unwrap().unwrap();
    assert!(tools.tools.is_empty());
    // (The transport sends notifications in order, before any later request.)
    assert_eq!(server.methods(), ["server/discover", "initialize", "notifications/initialized", "tools/list"]);
    let _ = tokio::time::timeout(HANG, session.close()).await;
}
