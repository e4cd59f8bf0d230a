//! The authorization step of a native application (RFC 8252): the user's browser goes to
//! the authorization endpoint, and comes back to a loopback redirect URI this process
//! listens on.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use super::Authorizer;
use crate::AuthError;

/// The path of the redirect URI.
const CALLBACK_PATH: &str = "/callback";
/// The longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

/// Shows the user the authorization URL: opens a browser at it, or prints it.
pub type Present = Arc<dyn Fn(&Url) + Send + Sync>;

/// An [`Authorizer`] for native applications: it listens on `http://127.0.0.1:PORT/callback`
/// (a port of its own, RFC 8252 §7.3), has the user shown the authorization URL (`present`:
/// open a browser, print it), and waits (5 minutes by default) for the browser to come back.
pub struct LoopbackAuthorizer {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    present: Present,
    timeout: Duration,
}

impl LoopbackAuthorizer {
    /// Listens on a free loopback port; `present` shows the user each authorization URL.
    /// Must be called within a tokio runtime.
    pub fn bind(present: Present) -> Result<Self, AuthError> {
        let cannot =
            |e: std::io::Error| AuthError::Authorization(format!("cannot listen on the loopback interface: {e}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(cannot)?;
        listener.set_nonblocking(true).map_err(cannot)?;
        let listener = TcpListener::from_std(listener).map_err(cannot)?;
        let port = listener.local_addr().map_err(cannot)?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri,
            present,
            timeout: Duration::from_secs(300),
        })
    }

    /// How long to wait for the browser to come back.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The redirect URI to register and send (`OAuthConfig::redirect_uri`).
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Accepts connections until one is a GET of the callback; answers it and returns its URL.
    async fn callback(&self) -> Result<Url, AuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut stream, _) = listener.accept().await.map_err(|e| AuthError::Authorization(e.to_string()))?;
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head);
            let target = head.lines().next().and_then(|line| {
                let mut parts = line.split(' ');
                (parts.next() == Some("GET")).then(|| parts.next()).flatten().map(str::to_owned)
            });
            let callback = target
                .filter(|t| t.split('?').next() == Some(CALLBACK_PATH))
                .and_then(|t| Url::parse(&format!("http://127.0.0.1{t}")).ok());
            let Some(callback) = callback else {
                let _ =
                    stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
                continue;
            };
            let denied = callback.query_pairs().any(|(k, _)| k == "error");
            let text = match denied {
                true => "Authorization was not granted. You can close this window.",
                false => "Authorized. You can close this window and go back to the terminal.",
            };
            let body = format!("<!doctype html><title>mcp</title><p>{text}</p>");
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let mut url = Url::parse(&self.redirect_uri).map_err(|e| AuthError::Authorization(e.to_string()))?;
            url.set_query(callback.query());
            return Ok(url);
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn authorize<'a>(&'a self, url: &'a Url, _redirect_uri: &'a str) -> BoxFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            (self.present)(url);
            match tokio::time::timeout(self.timeout, self.callback()).await {
                Ok(result) => result,
                Err(_) => Err(AuthError::Authorization(format!(
                    "the browser did not come back to {} within {} s",
                    self.redirect_uri,
                    self.timeout.as_secs()
                ))),
            }
        })
    }
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer").field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}
