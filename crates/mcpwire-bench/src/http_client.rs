//! A lean HTTP/1.1 client: one keep-alive connection (hyper's `client::conn::http1`, no pool),
//! POSTs of JSON-RPC bodies, and the answer found in a JSON or Server-Sent Events body.

use crate::mcp::{self, SseParser};
use anyhow::{anyhow, bail, Context as _, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;

/// The `Mcp-Session-Id` header.
pub const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// The `MCP-Protocol-Version` header.
pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The `Mcp-Method` header (2026-07-28).
pub const METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// The `Mcp-Name` header (2026-07-28).
pub const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// How long to wait for the rest of an SSE stream after its answer arrived, before the
/// connection is dropped (a server should close the stream right after the answer).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// Where an MCP endpoint is: `http://host:port/path`.
#[derive(Debug, Clone)]
pub struct Target {
    /// The socket addresses the host resolves to, tried in order.
    pub addrs: Vec<SocketAddr>,
    /// The `Host` header value.
    pub host: HeaderValue,
    /// The request target (path and query).
    pub path: Uri,
}

impl Target {
    /// Parses an `http://` URL and resolves its host.
    pub async fn parse(url: &str) -> Result<Target> {
        let uri: Uri = url.parse().with_context(|| format!("bad URL {url:?}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => bail!("URL {url:?}: only http:// is supported, not {other}://"),
            None => bail!("URL {url:?}: give a full http://host:port/path URL"),
        }
        let authority = uri.authority().ok_or_else(|| anyhow!("URL {url:?} has no host"))?;
        let port = authority.port_u16().unwrap_or(80);
        let host = authority.host().trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> =
            tokio::net::lookup_host((host, port)).await.with_context(|| format!("cannot resolve {host}"))?.collect();
        if addrs.is_empty() {
            bail!("{host} resolves to no address");
        }
        let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        Ok(Target {
            addrs,
            host: HeaderValue::from_str(authority.as_str())?,
            path: path.parse().with_context(|| format!("bad path in {url:?}"))?,
        })
    }
}

/// A failure to talk HTTP at all (the connection must be opened again), as opposed to an
/// answer that is wrong.
#[derive(Debug)]
pub struct ConnectionError(pub String);

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConnectionError {}

/// What a POST got back.
#[derive(Debug)]
pub struct Answer<T> {
    /// The HTTP status.
    pub status: u16,
    /// The `Mcp-Session-Id` response header, if any.
    pub session_id: Option<String>,
    /// What the matcher made of the answer to the request; `Err` with a description when
    /// the body held no such answer or the status was not a success.
    pub outcome: Result<T, String>,
}

/// One keep-alive HTTP/1.1 connection.
pub struct Connection {
    sender: SendRequest<Full<Bytes>>,
    target: Target,
    broken: bool,
}

impl Connection {
    /// Opens a connection (TCP_NODELAY set) and spawns its driver on the current runtime.
    pub async fn open(target: &Target) -> Result<Connection, ConnectionError> {
        let mut last = None;
        let mut stream = None;
        for addr in &target.addrs {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(format!("connect to {addr}: {e}")),
            }
        }
        let stream = stream.ok_or_else(|| ConnectionError(last.unwrap_or_else(|| "no address".into())))?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ConnectionError(format!("HTTP handshake: {e}")))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Connection { sender, target: target.clone(), broken: false })
    }

    /// POSTs `body` with the MCP `Accept` and `Content-Type` headers plus `headers`, and runs
    /// `matcher` on each JSON-RPC message of the answer until it returns `Some`. With
    /// `expect_body` false (a notification, answered 202) the body is skipped and a success
    /// status gives `Ok(None)`. `Err` means the connection is unusable: open another.
    pub async fn post<T>(
        &mut self,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
        expect_body: bool,
        mut matcher: impl FnMut(&str) -> Option<Result<T, String>>,
    ) -> Result<Answer<Option<T>>, ConnectionError> {
        if self.broken {
            return Err(ConnectionError("the server left an SSE stream open after its answer".into()));
        }
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.target.path.clone();
        let h = req.headers_mut();
        h.insert(HOST, self.target.host.clone());
        h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            h.insert(name.clone(), value.clone());
        }
        self.sender.ready().await.map_err(|e| ConnectionError(format!("connection closed: {e}")))?;
        let response =
            self.sender.send_request(req).await.map_err(|e| ConnectionError(format!("HTTP request failed: {e}")))?;
        let status = response.status().as_u16();
        let session_id = response.headers().get(&SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        let mut body = response.into_body();
        if !(200..300).contains(&status) {
            let bytes = collect(&mut body).await?;
            let text = String::from_utf8_lossy(&bytes);
            return Ok(Answer { status, session_id, outcome: Err(format!("HTTP {status}: {}", mcp::clip(&text))) });
        }
        if !expect_body {
            let _ = collect(&mut body).await?;
            return Ok(Answer { status, session_id, outcome: Ok(None) });
        }
        let outcome = if sse {
            let (outcome, clean) = read_sse(&mut body, &mut matcher).await?;
            if !clean {
                // The server kept the stream open after the answer: this connection cannot
                // carry another request, so the next `post` reports it and the caller reconnects.
                self.broken = true;
            }
            outcome
        } else {
            let bytes = collect(&mut body).await?;
            let text = std::str::from_utf8(&bytes).map_err(|_| ConnectionError("answer is not UTF-8".into()))?;
            if text.trim().is_empty() {
                Err(format!("HTTP {status} with an empty body"))
            } else {
                matcher(text).unwrap_or_else(|| Err(format!("no answer to the request in: {}", mcp::clip(text))))
            }
        };
        Ok(Answer { status, session_id, outcome: outcome.map(Some) })
    }
}

async fn collect(body: &mut Incoming) -> Result<Bytes, ConnectionError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ConnectionError(format!("reading the answer: {e}")))?;
        if let Ok(data) = frame.into_data() {
            out.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(out))
}

/// Reads SSE events until the matcher accepts one; then drains the rest of the stream for at
/// most [`DRAIN_TIMEOUT`]. Returns the outcome and whether the stream ended cleanly.
async fn read_sse<T>(
    body: &mut Incoming,
    matcher: &mut impl FnMut(&str) -> Option<Result<T, String>>,
) -> Result<(Result<T, String>, bool), ConnectionError> {
    let mut parser = SseParser::new();
    let mut found = None;
    while found.is_none() {
        let Some(frame) = body.frame().await else {
            for data in parser.finish() {
                if found.is_none() {
                    found = matcher(&data);
                }
            }
            let outcome = found.unwrap_or_else(|| Err("SSE stream ended without the answer".into()));
            return Ok((outcome, true));
        };
        let frame = frame.map_err(|e| ConnectionError(format!("reading the SSE stream: {e}")))?;
        if let Ok(data) = frame.into_data() {
            for event in parser.push(&data) {
                if found.is_none() {
                    found = matcher(&event);
                }
            }
        }
    }
    let outcome = found.unwrap_or_else(|| Err("no answer".into()));
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while let Some(frame) = body.frame().await {
            if frame.is_err() {
                return false;
            }
        }
        true
    })
    .await
    .unwrap_or(false);
    Ok((outcome, drained))
}
