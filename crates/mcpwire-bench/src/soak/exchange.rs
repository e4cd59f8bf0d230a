//! One HTTP request on a connection of its own, whose answer is read message by message (a
//! JSON body is one message; an SSE body, one per event), and which can be dropped halfway:
//! the connection closes with it, as a client that goes away does.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

use crate::http_client::{Target, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::mcp::SseParser;

/// A request under way: its status, and its answer still to be read.
pub struct Exchange {
    /// The HTTP status.
    pub status: u16,
    /// The `Mcp-Session-Id` response header, if any.
    pub session: Option<String>,
    body: Incoming,
    sse: bool,
    parser: SseParser,
    ready: std::collections::VecDeque<String>,
    ended: bool,
}

/// The MCP headers of a request.
#[derive(Default, Clone)]
pub struct McpHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub version: Option<&'a str>,
    /// `Mcp-Session-Id`.
    pub session: Option<&'a str>,
    /// `Mcp-Method` and `Mcp-Name` (2026-07-28).
    pub method: Option<(&'a str, Option<&'a str>)>,
    /// `Last-Event-ID`.
    pub last_event_id: Option<&'a str>,
}

fn value(s: &str) -> Result<HeaderValue, String> {
    HeaderValue::from_str(s).map_err(|e| format!("header value {s:?}: {e}"))
}

impl Exchange {
    /// Sends `body` (a POST) or nothing (a GET) on a new connection.
    pub async fn send(target: &Target, headers: &McpHeaders<'_>, body: Option<&Value>) -> Result<Exchange, String> {
        let addr = target.addrs.first().ok_or("no address")?;
        let stream = TcpStream::connect(addr).await.map_err(|e| format!("connect to {addr}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut req = Request::new(Full::new(body.map(|b| Bytes::from(b.to_string())).unwrap_or_default()));
        *req.method_mut() = if body.is_some() { Method::POST } else { Method::GET };
        *req.uri_mut() = target.path.clone();
        let h = req.headers_mut();
        h.insert(HOST, target.host.clone());
        if body.is_some() {
            h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        } else {
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        if let Some(v) = headers.version {
            h.insert(PROTOCOL_VERSION, value(v)?);
        }
        if let Some(s) = headers.session {
            h.insert(SESSION_ID, value(s)?);
        }
        if let Some((method, name)) = headers.method {
            h.insert(METHOD, value(method)?);
            if let Some(name) = name {
                h.insert(NAME, value(name)?);
            }
        }
        if let Some(id) = headers.last_event_id {
            h.insert(HeaderName::from_static("last-event-id"), value(id)?);
        }
        let response = sender.send_request(req).await.map_err(|e| format!("HTTP request failed: {e}"))?;
        let status = response.status().as_u16();
        let session = response.headers().get(&SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        Ok(Exchange {
            status,
            session,
            body: response.into_body(),
            sse,
            parser: SseParser::new(),
            ready: Default::default(),
            ended: false,
        })
    }

    /// The next message of the answer; `None` once it has ended.
    pub async fn next(&mut self) -> Result<Option<Value>, String> {
        loop {
            if let Some(text) = self.ready.pop_front() {
                return serde_json::from_str(&text).map(Some).map_err(|e| format!("not JSON ({e}): {text}"));
            }
            if self.ended {
                return Ok(None);
            }
            let mut whole = Vec::new();
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if self.sse {
                            self.ready.extend(self.parser.push(&data));
                        } else {
                            whole.extend_from_slice(&data);
                            // A JSON body: read it whole.
                            while let Some(frame) = self.body.frame().await {
                                let frame = frame.map_err(|e| format!("reading the answer: {e}"))?;
                                if let Ok(data) = frame.into_data() {
                                    whole.extend_from_slice(&data);
                                }
                            }
                            self.ended = true;
                            let text = String::from_utf8_lossy(&whole).into_owned();
                            if !text.trim().is_empty() {
                                self.ready.push_back(text);
                            }
                        }
                    }
                }
                Some(Err(e)) => return Err(format!("reading the answer: {e}")),
                None => {
                    self.ended = true;
                    if self.sse {
                        self.ready.extend(self.parser.finish());
                    }
                }
            }
        }
    }

    /// The last SSE event id read.
    pub fn last_event_id(&self) -> Option<&str> {
        self.parser.last_id()
    }

    /// Reads messages until the answer to request `id` (a response: result or error).
    pub async fn answer_to(&mut self, id: u64) -> Result<Value, String> {
        while let Some(message) = self.next().await? {
            if message.get("method").is_none() && message.get("id").and_then(Value::as_u64) == Some(id) {
                return Ok(message);
            }
        }
        Err(format!("the answer ended without a response to request {id} (HTTP {})", self.status))
    }
}
