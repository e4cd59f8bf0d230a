//! Rate limiting: a token bucket per client (its connection or session by default, or any
//! key a function draws from the request: a principal, a tool).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use mcpwire_protocol::ErrorObject;
use parking_lot::Mutex;
use serde_json::json;
use tokio::time::Instant;
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};

/// The JSON-RPC error code of a request refused by a [`RateLimitLayer`] (one of the codes
/// JSON-RPC leaves to the server, -32000 to -32099). Its `data` has `retryAfterMs`.
pub const RATE_LIMITED: i64 = -32029;

/// What a [`RateLimitLayer`] keys its buckets on.
type KeyFn<K> = Arc<dyn Fn(&McpRequest) -> Option<K> + Send + Sync>;

/// Lets each client make `burst` requests at once and `rate` per second after that (a
/// token bucket per key); one more is refused at once with [`RATE_LIMITED`], a message that
/// says when to retry, and `data: {"retryAfterMs": N}`. Refused requests cost nothing.
///
/// The key is the request's connection ([`crate::Context::connection_id`]: a stdio
/// connection, a legacy session) unless [`Self::keyed_by`] says otherwise; a request whose
/// key is `None` is not limited. Buckets left full are dropped as others are made, so that
/// the clients of the past hold no memory.
///
/// ```
/// use mcpwire_server::middleware::RateLimitLayer;
///
/// // 10 requests a second per session, 20 at once; tool calls only, keyed by tool and session.
/// let limit = RateLimitLayer::new(10.0, 20).keyed_by(|request| {
///     let tool = request.name()?.to_owned();
///     Some((tool, request.context().connection_id()))
/// });
/// let server = mcpwire_server::Server::builder("demo", "1.0").layer(limit).build();
/// ```
pub struct RateLimitLayer<K = u64> {
    rate: f64,
    burst: f64,
    key: KeyFn<K>,
    buckets: Arc<Mutex<Buckets<K>>>,
}

impl RateLimitLayer<u64> {
    /// `rate` requests per second and `burst` at once, per connection or session.
    pub fn new(rate: f64, burst: u32) -> Self {
        Self {
            rate: rate.max(f64::MIN_POSITIVE),
            burst: f64::from(burst.max(1)),
            key: Arc::new(|request: &McpRequest| Some(request.context().connection_id())),
            buckets: Arc::default(),
        }
    }
}

impl RateLimitLayer<String> {
    /// `rate` requests per second and `burst` at once, per principal when the request has one
    /// (its issuer, subject and client: every session and stateless request of one party share
    /// a bucket), else per connection or session.
    pub fn per_principal(rate: f64, burst: u32) -> Self {
        RateLimitLayer::new(rate, burst).keyed_by(|request: &McpRequest| {
            Some(match request.principal() {
                Some(p) => p.key(),
                None => format!("connection {}", request.context().connection_id()),
            })
        })
    }
}

impl<K> RateLimitLayer<K> {
    /// Keys the buckets on what `key` draws from each request (`None`: not limited).
    pub fn keyed_by<J, F>(self, key: F) -> RateLimitLayer<J>
    where
        F: Fn(&McpRequest) -> Option<J> + Send + Sync + 'static,
    {
        RateLimitLayer { rate: self.rate, burst: self.burst, key: Arc::new(key), buckets: Arc::default() }
    }
}

impl<K> Clone for RateLimitLayer<K> {
    fn clone(&self) -> Self {
        Self { rate: self.rate, burst: self.burst, key: self.key.clone(), buckets: self.buckets.clone() }
    }
}

impl<K> std::fmt::Debug for RateLimitLayer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitLayer").field("rate", &self.rate).field("burst", &self.burst).finish_non_exhaustive()
    }
}

impl<S, K> Layer<S> for RateLimitLayer<K> {
    type Service = RateLimit<S, K>;

    fn layer(&self, inner: S) -> RateLimit<S, K> {
        RateLimit { inner, limit: self.clone() }
    }
}

/// The service of a [`RateLimitLayer`].
#[derive(Debug)]
pub struct RateLimit<S, K = u64> {
    inner: S,
    limit: RateLimitLayer<K>,
}

impl<S: Clone, K> Clone for RateLimit<S, K> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone(), limit: self.limit.clone() }
    }
}

impl<S, K> Service<McpRequest> for RateLimit<S, K>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    K: Hash + Eq + Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let RateLimitLayer { rate, burst, key, buckets } = &self.limit;
        if let Some(key) = key(&request) {
            let wait = buckets.lock().take(key, *rate, *burst, Instant::now());
            if let Some(wait) = wait {
                return futures::future::ready(Ok(limited(wait))).boxed();
            }
        }
        self.inner.call(request).boxed()
    }
}

/// The answer to a request over its limit, which may be retried after `wait`.
fn limited(wait: Duration) -> McpResponse {
    let ms = wait.as_millis().max(1) as u64;
    McpResponse::Error(
        ErrorObject::new(RATE_LIMITED, format!("rate limit exceeded: retry in {ms} ms"))
            .with_data(json!({ "retryAfterMs": ms })),
    )
}

/// The buckets, by key.
struct Buckets<K> {
    by_key: HashMap<K, Bucket>,
    /// How many buckets there may be before the full ones are dropped.
    sweep_at: usize,
}

impl<K> Default for Buckets<K> {
    fn default() -> Self {
        Self { by_key: HashMap::new(), sweep_at: SWEEP_AT_LEAST }
    }
}

/// Buckets are not swept below this many.
const SWEEP_AT_LEAST: usize = 1024;

/// One key's tokens, as of `at`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// The tokens at `now`.
    fn refilled(self, rate: f64, burst: f64, now: Instant) -> f64 {
        (self.tokens + now.saturating_duration_since(self.at).as_secs_f64() * rate).min(burst)
    }
}

impl<K: Hash + Eq> Buckets<K> {
    /// Takes a token of `key`'s bucket, or says how long until there is one.
    fn take(&mut self, key: K, rate: f64, burst: f64, now: Instant) -> Option<Duration> {
        if self.by_key.len() >= self.sweep_at {
            self.by_key.retain(|_, b| b.refilled(rate, burst, now) < burst);
            self.sweep_at = (self.by_key.len() * 2).max(SWEEP_AT_LEAST);
        }
        let bucket = self.by_key.entry(key).or_insert(Bucket { tokens: burst, at: now });
        let tokens = bucket.refilled(rate, burst, now);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now };
            None
        } else {
            *bucket = Bucket { tokens, at: now };
            Some(Duration::from_secs_f64((1.0 - tokens) / rate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_lets_its_burst_through_then_its_rate_and_tells_the_wait() {
        let mut buckets = Buckets::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(buckets.take("a", 2.0, 3.0, t0), None);
        }
        assert_eq!(buckets.take("a", 2.0, 3.0, t0), Some(Duration::from_millis(500)));
        // Another key has its own bucket.
        assert_eq!(buckets.take("b", 2.0, 3.0, t0), None);
        // Half a second later one token is back, and only one.
        let t1 = t0 + Duration::from_millis(500);
        assert_eq!(buckets.take("a", 2.0, 3.0, t1), None);
        assert_eq!(buckets.take("a", 2.0, 3.0, t1), Some(Duration::from_millis(500)));
        // A long pause refills to the burst, no more.
        let t2 = t1 + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(buckets.take("a", 2.0, 3.0, t2), None);
        }
        assert!(buckets.take("a", 2.0, 3.0, t2).is_some());
    }

    #[test]
    fn full_buckets_are_dropped_as_new_ones_come() {
        let mut buckets = Buckets::default();
        let t0 = Instant::now();
        for key in 0..SWEEP_AT_LEAST {
            buckets.take(key, 1.0, 10.0, t0);
        }
        assert_eq!(buckets.by_key.len(), SWEEP_AT_LEAST);
        // Ten seconds on, every bucket is full again: the next new key sweeps them.
        buckets.take(usize::MAX, 1.0, 10.0, t0 + Duration::from_secs(10));
        assert_eq!(buckets.by_key.len(), 1);
        // Buckets in use are kept: the sweep that the 1,024th bucket brings drops only the
        // full one of ten seconds ago.
        let t1 = t0 + Duration::from_secs(20);
        for key in 0..SWEEP_AT_LEAST {
            buckets.take(key, 1.0, 10.0, t1);
        }
        assert_eq!(buckets.by_key.len(), SWEEP_AT_LEAST);
        assert!((0..SWEEP_AT_LEAST).all(|key| buckets.by_key.contains_key(&key)));
        assert!(!buckets.by_key.contains_key(&usize::MAX));
    }
}
