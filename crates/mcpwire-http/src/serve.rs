//! Serving on a TCP listener: the connection limits a public server needs (a header read
//! timeout that also closes idle keep-alive connections, a cap on connections refused before
//! anything is read), and a graceful shutdown.
//!
//! `axum::serve` sets no timer, so hyper's header read timeout is off there: a client that
//! sends its headers a byte at a time, or never, holds its connection (and a file
//! descriptor) for ever. Here every connection is a hyper HTTP/1 connection of our own, or,
//! with [`HttpConfig::http2`](crate::HttpConfig::http2), HTTP/1 or HTTP/2 as its first bytes
//! say (the `h2` module).

#[cfg(feature = "http2")]
mod h2;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::McpHttp;

/// What a connection over the limit is told, written at once without reading anything.
const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 32\r\nconnection: close\r\nretry-after: 1\r\n\r\ntoo many connections; try again\n";

/// After a failed `accept` (out of file descriptors, say), the pause before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

impl McpHttp {
    /// Serves on a bound listener until the future is dropped. Nagle is off on every
    /// connection (MCP messages are small and latency-bound); the connection limits of
    /// [`HttpConfig`](crate::HttpConfig) apply (`header_read_timeout`, `max_connections`).
    /// HTTP/1.1, and with [`HttpConfig::http2`](crate::HttpConfig::http2) (the `http2`
    /// feature) HTTP/2 over cleartext too.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        self.serve_until(listener, std::future::pending()).await
    }

    /// Like [`Self::serve`], until `shutdown` resolves; then shuts down gracefully: stops
    /// accepting, [`Self::shutdown`]s (new requests `503`, endless SSE streams end with a
    /// `retry` hint), keeps idle connections open for
    /// [`HttpConfig::shutdown_drain`](crate::HttpConfig::shutdown_drain) (what arrives on them
    /// is answered `503`), lets requests in flight finish within
    /// [`HttpConfig::shutdown_grace`](crate::HttpConfig::shutdown_grace), closes what is left
    /// and returns.
    pub async fn serve_until(self, listener: TcpListener, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let config = &self.inner.config;
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let graceful = GracefulShutdown::new();
        let mut http = http1::Builder::new();
        if let Some(timeout) = config.header_read_timeout {
            // Armed for every request head (about 4% of the CPU of a small call): hyper's.
            http.timer(TokioTimer::new()).header_read_timeout(timeout);
        }
        // With HTTP/2 too: each connection's first bytes say which it speaks.
        #[cfg(feature = "http2")]
        let both = config.http2.then(|| h2::Both::new(http.clone(), config));
        let router = self.router();
        // Cancelled when the grace period is over: the connections left are closed.
        let closing = CancellationToken::new();
        // Cancelled when the graceful shutdown begins (as `graceful.shutdown()` is called):
        // HTTP/2 connections are sent a GOAWAY.
        #[cfg(feature = "http2")]
        let stopping = CancellationToken::new();
        tokio::pin!(shutdown);
        loop {
            let tcp = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((tcp, _)) => tcp,
                    Err(e) => {
                        tracing::debug!("accept failed: {e}");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                refuse(tcp);
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let service = TowerToHyperService::new(router.clone());
            #[cfg(feature = "http2")]
            if let Some(both) = &both {
                let served = h2::Served {
                    watcher: graceful.watcher(),
                    stopping: stopping.clone(),
                    closing: closing.clone(),
                    slot,
                };
                tokio::spawn(both.clone().serve(tcp, service, served));
                continue;
            }
            let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
            let closing = closing.clone();
            tokio::spawn(async move {
                tokio::select! {
                    ended = connection => if let Err(e) = ended {
                        tracing::debug!("connection ended: {e}");
                    },
                    () = closing.cancelled() => {}
                }
                drop(slot);
            });
        }
        drop(listener);
        self.shutdown();
        // hyper's graceful shutdown closes idle connections at once, and a request a client
        // sends on one at that moment is lost unanswered: first, while the connections stay
        // open, whatever arrives is answered `503` and its connection closed.
        let drain = config.shutdown_drain.min(config.shutdown_grace);
        let open = config.max_connections - slots.available_permits();
        if open > 0 && !drain.is_zero() {
            tokio::time::sleep(drain).await;
        }
        let grace = config.shutdown_grace.saturating_sub(drain);
        #[cfg(feature = "http2")]
        stopping.cancel();
        if tokio::time::timeout(grace, graceful.shutdown()).await.is_err() {
            tracing::warn!("the shutdown grace period is over: the connections still open are closed");
            closing.cancel();
        }
        Ok(())
    }
}

/// Answers a connection over the limit `503` and closes it, without reading from it or
/// waiting for it (a full send buffer just loses the answer).
fn refuse(tcp: TcpStream) {
    let _ = tcp.try_write(OVER_CAPACITY);
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_is_a_complete_response() {
        let text = std::str::from_utf8(super::OVER_CAPACITY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|n| n.parse().ok())
            .expect("a content-length");
        assert_eq!(body.len(), length);
        assert!(head.starts_with("HTTP/1.1 503 "));
    }
}
