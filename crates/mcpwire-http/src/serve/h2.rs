//! HTTP/2 over cleartext (h2c, prior knowledge) beside HTTP/1.1 on one listener
//! ([`HttpConfig::http2`](crate::HttpConfig::http2)).
//!
//! Which protocol a connection speaks is read from its first bytes without consuming them
//! (`TcpStream::peek`), within the header read timeout: the 24 bytes of the HTTP/2 preface,
//! or bytes that differ from it (HTTP/1.1). hyper-util's `server::conn::auto` would read them
//! without any timeout: a connection that sent nothing would be held for ever.
//!
//! hyper's HTTP/2 connection has no header read timeout of its own; here a connection with
//! no request in flight for the header read timeout is sent a GOAWAY, and closed if it has
//! not closed one timeout later (a client that never answers the GOAWAY's ping, or never
//! finished its handshake).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::Watcher;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::HttpConfig;

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The longest pause between two looks at a connection that has sent part of the preface.
const MOST_PAUSE: Duration = Duration::from_millis(100);

/// The service of every connection: the router.
pub(super) type Routed = TowerToHyperService<axum::Router>;

/// What a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// Serves each connection as HTTP/1.1 or HTTP/2, as its first bytes say.
pub(super) struct Both {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
    /// The header read timeout (`None`: none).
    timeout: Option<Duration>,
}

/// What a connection task is given besides its connection.
pub(super) struct Served {
    /// Counted by the graceful shutdown until the connection ends.
    pub(super) watcher: Watcher,
    /// Cancelled when the graceful shutdown begins (after the drain): a GOAWAY.
    pub(super) stopping: CancellationToken,
    /// Cancelled when the grace period is over: the connection is closed.
    pub(super) closing: CancellationToken,
    /// The connection's slot of `max_connections`.
    pub(super) slot: OwnedSemaphorePermit,
}

impl Both {
    /// The HTTP/1.1 connections of `http1`, and HTTP/2 connections as `config` says.
    pub(super) fn new(http1: http1::Builder, config: &HttpConfig) -> Arc<Self> {
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2.timer(TokioTimer::new()).max_concurrent_streams(config.http2_max_streams.max(1));
        Arc::new(Self { http1, http2, timeout: config.header_read_timeout })
    }

    /// Serves `tcp` until it ends, the shutdown closes it or the grace period is over.
    pub(super) async fn serve(self: Arc<Self>, tcp: TcpStream, service: Routed, served: Served) {
        let Served { watcher, stopping, closing, slot } = served;
        let protocol = tokio::select! {
            protocol = within(self.timeout, sniff(&tcp)) => protocol,
            // Not yet a request: closed as an idle connection is.
            () = stopping.cancelled() => None,
            () = closing.cancelled() => None,
        };
        match protocol {
            None => {}
            Some(Protocol::Http1) => {
                let connection = watcher.watch(self.http1.serve_connection(TokioIo::new(tcp), service));
                tokio::select! {
                    ended = connection => if let Err(e) = ended {
                        tracing::debug!("connection ended: {e}");
                    },
                    () = closing.cancelled() => {}
                }
            }
            Some(Protocol::Http2) => {
                self.serve_http2(tcp, service, &stopping, &closing).await;
                // Counted by the graceful shutdown until now.
                drop(watcher);
            }
        }
        drop(slot);
    }

    async fn serve_http2(
        &self,
        tcp: TcpStream,
        service: Routed,
        stopping: &CancellationToken,
        closing: &CancellationToken,
    ) {
        let activity = Arc::new(Activity::default());
        let service = Counted { inner: service, activity: activity.clone() };
        let connection = self.http2.serve_connection(TokioIo::new(tcp), service);
        tokio::pin!(connection);
        let idle = tokio::select! {
            ended = connection.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!("HTTP/2 connection ended: {e}");
                }
                return;
            }
            () = stopping.cancelled() => false,
            () = activity.idle_for(self.timeout) => true,
            () = closing.cancelled() => return,
        };
        // A GOAWAY: the streams open go on, no new one is taken.
        connection.as_mut().graceful_shutdown();
        // Idle: bounded by one more timeout (the shutdown's grace period bounds the rest).
        let bound = if idle { self.timeout } else { None };
        tokio::select! {
            ended = connection.as_mut() => if let Err(e) = ended {
                tracing::debug!("HTTP/2 connection ended: {e}");
            },
            () = sleep_or_never(bound) => tracing::debug!("an idle HTTP/2 connection did not close after its GOAWAY"),
            () = closing.cancelled() => {}
        }
    }
}

/// `fut`, or `None` once `limit` (if any) has passed.
async fn within<T>(limit: Option<Duration>, fut: impl Future<Output = Option<T>>) -> Option<T> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, fut).await.ok().flatten(),
        None => fut.await,
    }
}

async fn sleep_or_never(limit: Option<Duration>) {
    match limit {
        Some(limit) => tokio::time::sleep(limit).await,
        None => std::future::pending().await,
    }
}

/// What `tcp` speaks, from its first bytes (left unread); `None` if it closes or fails first.
async fn sniff(tcp: &TcpStream) -> Option<Protocol> {
    let mut seen = [0u8; PREFACE.len()];
    let mut pause = Duration::from_millis(1);
    loop {
        let n = tcp.peek(&mut seen).await.ok()?;
        match decide(&seen[..n]) {
            Decided::Closed => return None,
            Decided::Is(protocol) => return Some(protocol),
            Decided::NotYet => {
                // The bytes seen stay readable: `peek` would answer at once with the same.
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MOST_PAUSE);
            }
        }
    }
}

/// What the first bytes of a connection say.
#[derive(Debug, PartialEq, Eq)]
enum Decided {
    /// Nothing: the connection closed.
    Closed,
    /// A beginning of the preface, not all of it.
    NotYet,
    Is(Protocol),
}

fn decide(seen: &[u8]) -> Decided {
    if seen.is_empty() {
        Decided::Closed
    } else if !PREFACE.starts_with(seen) {
        Decided::Is(Protocol::Http1)
    } else if seen.len() == PREFACE.len() {
        Decided::Is(Protocol::Http2)
    } else {
        Decided::NotYet
    }
}

/// The requests in flight on one HTTP/2 connection (from their headers to the end of their
/// response body).
#[derive(Default)]
struct Activity {
    streams: AtomicUsize,
    /// Told when `streams` leaves or reaches 0.
    changed: Notify,
}

impl Activity {
    fn begin(self: &Arc<Self>) -> InFlight {
        if self.streams.fetch_add(1, Ordering::SeqCst) == 0 {
            self.changed.notify_one();
        }
        InFlight(self.clone())
    }

    /// Resolves once no request has been in flight for `timeout` (never without one).
    async fn idle_for(&self, timeout: Option<Duration>) {
        let Some(timeout) = timeout else { return std::future::pending().await };
        loop {
            if self.streams.load(Ordering::SeqCst) == 0 {
                // A change between the load and the wait leaves a permit: not missed.
                let quiet = tokio::time::timeout(timeout, self.changed.notified()).await.is_err();
                if quiet && self.streams.load(Ordering::SeqCst) == 0 {
                    return;
                }
            } else {
                self.changed.notified().await;
            }
        }
    }
}

/// One request in flight, until dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.streams.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.changed.notify_one();
        }
    }
}

/// The router, counting the requests in flight.
#[derive(Clone)]
struct Counted {
    inner: Routed,
    activity: Arc<Activity>,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Guarded>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Counted {
    type Response = Response<Guarded>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Answer {
        let in_flight = self.activity.begin();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| Guarded { body, _in_flight: in_flight }))
        })
    }
}

/// A response body that keeps its request in flight until it is dropped.
struct Guarded {
    body: Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_say_which_protocol() {
        assert_eq!(decide(b""), Decided::Closed);
        assert_eq!(decide(b"P"), Decided::NotYet);
        assert_eq!(decide(b"PRI * HTTP/2.0\r\n"), Decided::NotYet);
        assert_eq!(decide(PREFACE), Decided::Is(Protocol::Http2));
        assert_eq!(decide(b"POST /mcp HTTP/1.1\r\n"), Decided::Is(Protocol::Http1));
        assert_eq!(decide(b"G"), Decided::Is(Protocol::Http1));
        assert_eq!(decide(b"PRI * HTTP/1.1\r\n"), Decided::Is(Protocol::Http1));
        assert_eq!(decide(b"\x16\x03\x01"), Decided::Is(Protocol::Http1), "TLS: HTTP/1 refuses it");
    }

    #[tokio::test(start_paused = true)]
    async fn idle_only_after_the_timeout_with_no_request_in_flight() {
        let activity = Arc::new(Activity::default());
        let timeout = Some(Duration::from_secs(1));
        let in_flight = activity.begin();
        let idle = tokio::time::timeout(Duration::from_secs(5), activity.idle_for(timeout)).await;
        assert!(idle.is_err(), "not idle while a request is in flight");
        drop(in_flight);
        let started = tokio::time::Instant::now();
        activity.idle_for(timeout).await;
        assert!(started.elapsed() >= Duration::from_secs(1));
        let idle = tokio::time::timeout(Duration::from_secs(5), activity.idle_for(None)).await;
        assert!(idle.is_err(), "no timeout, never idle");
    }
}
