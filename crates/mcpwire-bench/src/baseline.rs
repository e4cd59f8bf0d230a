//! Raw baselines: the least an MCP-shaped server can do on this machine.
//!
//! - [`serve_http`]: a plain axum POST endpoint (any path) that parses each JSON-RPC message
//!   with `serde_json` and answers `application/json`: `initialize` gets a minimal result and
//!   an `Mcp-Session-Id` header, notifications get 202, `tools/call` gets its
//!   `arguments.text` back as text content. No session is stored, no header is checked.
//! - [`serve_pipe`]: the same answers over newline-delimited JSON on stdin/stdout, with
//!   blocking IO and a flush only when no more input is buffered.
//!
//! - [`serve_sse`]: a plain axum SSE broadcaster: `GET /sse` holds one Server-Sent Events
//!   stream per connection, `POST /broadcast` sends one `notifications/resources/updated`
//!   event to all of them through a tokio broadcast channel (the ceiling for
//!   `mcpwire-bench streams`).
//!
//! `baseline-http` runs on tokio's multi-thread runtime, like the servers it is compared to
//! (`mcp serve --http`, rmcp, axum applications); pinned to one core by the suite, it gets
//! one worker thread, as they do.

use anyhow::{Context as _, Result};
use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
}

/// What the baseline answers to one message.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// A JSON-RPC response; `session` asks for an `Mcp-Session-Id` header.
    Response {
        /// The response body.
        body: String,
        /// Whether this answers `initialize`.
        session: bool,
    },
    /// A notification or a response: nothing to send back (HTTP 202).
    Accepted,
    /// Not JSON-RPC: a parse error response.
    Invalid(String),
}

/// Answers one message (the logic both baselines share).
pub fn answer(bytes: &[u8]) -> Reply {
    let msg: Message = match serde_json::from_slice(bytes) {
        Ok(m) => m,
        Err(e) => {
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": e.to_string()}});
            return Reply::Invalid(body.to_string());
        }
    };
    let (Some(id), Some(method)) = (msg.id, msg.method) else { return Reply::Accepted };
    let params = msg.params.unwrap_or(Value::Null);
    let (result, session) = match method.as_str() {
        "initialize" => {
            let version = params.get("protocolVersion").cloned().unwrap_or_else(|| json!("2025-06-18"));
            let info = json!({"name": "mcp-bench-baseline", "version": env!("CARGO_PKG_VERSION")});
            (json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}), true)
        }
        "tools/call" => {
            let text = params.pointer("/arguments/text").cloned().unwrap_or_else(|| json!(""));
            (json!({"content": [{"type": "text", "text": text}]}), false)
        }
        "tools/list" => {
            let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
            (json!({"tools": [{"name": "echo", "inputSchema": schema}]}), false)
        }
        _ => (json!({}), false),
    };
    Reply::Response { body: json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(), session }
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

async fn handle(body: Bytes) -> Response {
    match answer(&body) {
        Reply::Accepted => StatusCode::ACCEPTED.into_response(),
        Reply::Invalid(body) => {
            (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body)
                .into_response()
        }
        Reply::Response { body, session } => {
            let mut resp =
                ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response();
            if session {
                let id = format!("baseline-{:016x}", NEXT_SESSION.fetch_add(1, Ordering::Relaxed));
                if let Ok(v) = HeaderValue::from_str(&id) {
                    resp.headers_mut().insert("mcp-session-id", v);
                }
            }
            resp
        }
    }
}

/// Serves the HTTP baseline on 127.0.0.1:`port` (0 picks a free port) until killed. Prints
/// `listening on http://127.0.0.1:PORT/mcp` on stdout once bound.
pub fn serve_http(port: u16) -> Result<()> {
    serve_axum(port, "/mcp", || axum::Router::new().fallback(axum::routing::post(handle)))
}

/// Serves `app` on 127.0.0.1:`port` (0 picks a free port) on a multi-thread runtime, until
/// killed; prints `listening on http://ADDR{path}` on stdout once bound.
fn serve_axum(port: u16, path: &str, app: impl FnOnce() -> axum::Router) -> Result<()> {
    serve_axum_with(port, path, None, app)
}

/// [`serve_axum`], with `Some(streams)`: HTTP/1.1 and HTTP/2 over cleartext (prior knowledge),
/// each connection as its first bytes say (hyper-util's `server::conn::auto`), at most
/// `streams` streams per HTTP/2 connection.
fn serve_axum_with(port: u16, path: &str, http2: Option<u32>, app: impl FnOnce() -> axum::Router) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .with_context(|| format!("cannot bind 127.0.0.1:{port}"))?;
        let addr = listener.local_addr()?;
        println!("listening on http://{addr}{path}");
        std::io::stdout().flush().ok();
        if let Some(streams) = http2 {
            return serve_both(listener, streams, app()).await;
        }
        // TCP_NODELAY, as `mcp serve --http` sets it: no Nagle delay on small answers.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app()).await.context("HTTP server failed")
    })
}

/// Serves `app` on `listener` until killed, HTTP/1.1 or HTTP/2 (prior knowledge) as each
/// connection's first bytes say, at most `streams` streams per HTTP/2 connection.
async fn serve_both(listener: tokio::net::TcpListener, streams: u32, app: axum::Router) -> Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto;
    use hyper_util::service::TowerToHyperService;
    use std::sync::Arc;

    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http2().max_concurrent_streams(streams);
    let builder = Arc::new(builder);
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let (builder, service) = (builder.clone(), TowerToHyperService::new(app.clone()));
        tokio::spawn(async move {
            let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}

/// The event [`serve_sse`] broadcasts: the update `mcp serve` sends for the resource the
/// streams benchmark subscribes to.
pub const SSE_EVENT: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}}"#;

/// Serves the SSE broadcast baseline on 127.0.0.1:`port` until killed (multi-thread runtime,
/// like [`serve_http`]). Prints `listening on http://127.0.0.1:PORT/sse` once bound. With
/// `Some(streams)`, HTTP/2 over cleartext too, at most `streams` streams per connection.
pub fn serve_sse(port: u16, http2: Option<u32>) -> Result<()> {
    use axum::response::sse::{Event, Sse};
    use std::convert::Infallible;
    use std::sync::Arc;
    use tokio::sync::broadcast;

    serve_axum_with(port, "/sse", http2, || {
        let (tx, _) = broadcast::channel::<Arc<str>>(16);
        let subscribe = tx.clone();
        axum::Router::new()
            .route(
                "/sse",
                axum::routing::get(move || {
                    let rx = subscribe.subscribe();
                    async move {
                        let events = futures::stream::unfold(rx, |mut rx| async move {
                            loop {
                                match rx.recv().await {
                                    Ok(data) => return Some((Ok::<_, Infallible>(Event::default().data(&*data)), rx)),
                                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                                    Err(broadcast::error::RecvError::Closed) => return None,
                                }
                            }
                        });
                        Sse::new(events)
                    }
                }),
            )
            .route(
                "/broadcast",
                axum::routing::post(move || {
                    let sent = tx.send(Arc::from(SSE_EVENT)).unwrap_or(0);
                    async move { sent.to_string() }
                }),
            )
    })
}

/// Serves the stdio baseline on stdin/stdout until stdin ends.
pub fn serve_pipe() -> Result<()> {
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let mut output = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match answer(&line) {
            Reply::Accepted => {}
            Reply::Invalid(body) | Reply::Response { body, .. } => {
                output.write_all(body.as_bytes())?;
                output.write_all(b"\n")?;
            }
        }
        // Flush once nothing more is waiting: one write per batch of pipelined requests.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp;

    #[test]
    fn answers_like_an_echo_server() {
        let call = mcp::echo_call(5, "hello", mcp::MODERN_VERSION);
        let Reply::Response { body, session } = answer(call.as_bytes()) else { panic!("no response") };
        assert!(!session);
        assert_eq!(mcp::check_echo(&body, 5, "hello"), Ok(true));
        let Reply::Response { body, session } = answer(mcp::initialize(0, "2025-06-18").as_bytes()) else {
            panic!("no response")
        };
        assert!(session);
        assert_eq!(mcp::find_result(&body, 0).unwrap().unwrap()["protocolVersion"], "2025-06-18");
        assert_eq!(answer(mcp::initialized().as_bytes()), Reply::Accepted);
        assert!(matches!(answer(b"{oops"), Reply::Invalid(_)));
    }
}
