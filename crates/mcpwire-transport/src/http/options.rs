//! How an HTTP connection is set up: the transport chosen, authorization, limits.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

/// The JSON-RPC error code of a request the transport could not carry (the server
/// unreachable, an HTTP failure without a JSON-RPC answer): implementation-defined range.
pub const TRANSPORT_ERROR: i64 = -32000;

/// Which HTTP transport to speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpMode {
    /// Streamable HTTP, falling back to HTTP+SSE when `initialize` is refused.
    #[default]
    Auto,
    /// Streamable HTTP only.
    Streamable,
    /// HTTP+SSE (2024-11-05) only: the URL is the SSE endpoint.
    Sse,
}

/// A request about to be sent, as an [`AuthProvider`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthRequest<'a> {
    /// The HTTP method (`POST`, `GET`, `DELETE`).
    pub method: &'a str,
    /// The target URL.
    pub url: &'a str,
}

/// A 401 or 403 answer to a request, as an [`AuthProvider`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The HTTP status: 401 (no valid credentials) or 403 (e.g. `insufficient_scope`).
    pub status: u16,
    /// Every `WWW-Authenticate` header value of the answer, in order.
    pub www_authenticate: Vec<String>,
    /// All headers of the answer (names in lower case), for schemes that need more than
    /// `WWW-Authenticate` (a `DPoP-Nonce`, say).
    pub headers: Vec<(String, String)>,
    /// The `Authorization` header the refused request carried, if any: a provider that
    /// has obtained a newer credential since can simply ask for a retry.
    pub authorization: Option<String>,
    /// How many challenges this same request met before this one (0 for the first).
    pub attempt: u32,
}

/// Why an [`AuthProvider`] gave up on a challenge; its text becomes the request's error.
pub type AuthFailure = Box<dyn std::error::Error + Send + Sync>;

/// Supplies the authorization headers of an HTTP connection and answers authorization
/// challenges (401/403), e.g. by running an OAuth flow.
///
/// The transport calls [`Self::headers`] before each request, and on a 401 or 403 answer
/// to a POST calls [`Self::on_challenge`]: `Ok(())` sends the request again (with fresh
/// [`Self::headers`]), an error fails the request with that reason. The transport stops
/// after [`MAX_AUTH_CHALLENGES`] challenges of one request whatever the provider says.
pub trait AuthProvider: Send + Sync + 'static {
    /// The headers to put on `request` now: `Authorization` (`Bearer …`), and whatever
    /// else the scheme needs (a DPoP proof, say). Empty when there is no credential yet.
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> BoxFuture<'a, Vec<(String, String)>>;

    /// Handles a refusal; `Ok(())` means "send the request again".
    fn on_challenge<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, Result<(), AuthFailure>>;
}

/// How many 401/403 challenges one request may meet before the transport gives up on it.
pub const MAX_AUTH_CHALLENGES: u32 = 8;

/// One POST of the connection and its answer, as an [`HttpObserver`] sees it (a debugging
/// aid: an inspector shows them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpExchange {
    /// The HTTP method.
    pub method: String,
    /// The URL.
    pub url: String,
    /// The headers sent (names in lower case), `Authorization` among them.
    pub request_headers: Vec<(String, String)>,
    /// The body sent (a JSON-RPC message).
    pub body: String,
    /// The answer's status; `None` when the request failed before one came.
    pub status: Option<u16>,
    /// The answer's headers (names in lower case).
    pub response_headers: Vec<(String, String)>,
    /// Why the request failed, when it did.
    pub error: Option<String>,
    /// From sending to the answer's headers.
    pub elapsed: Duration,
}

/// Told of every POST of a connection once its answer's headers have come (or it failed);
/// the response body is not waited for.
pub type HttpObserver = Arc<dyn Fn(&HttpExchange) + Send + Sync>;

/// Settings of an HTTP connection.
#[derive(Clone)]
pub struct HttpOptions {
    /// Extra headers on every request.
    pub headers: Vec<(String, String)>,
    /// A bearer token for `Authorization`.
    pub bearer: Option<String>,
    /// Supplies `Authorization` (overriding [`Self::bearer`]) and handles 401/403 answers.
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// Transport choice.
    pub mode: HttpMode,
    /// How long to wait for a connection and response headers.
    pub connect_timeout: Duration,
    /// How many times a broken SSE stream is resumed in a row before giving up.
    pub max_reconnects: u32,
    /// Told of every POST and its answer (none by default).
    pub observer: Option<HttpObserver>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            bearer: None,
            auth: None,
            mode: HttpMode::Auto,
            connect_timeout: Duration::from_secs(30),
            max_reconnects: 5,
            observer: None,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("headers", &self.headers)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("auth", &self.auth.as_ref().map(|_| "<provider>"))
            .field("mode", &self.mode)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_reconnects", &self.max_reconnects)
            .field("observer", &self.observer.as_ref().map(|_| "<observer>"))
            .finish()
    }
}

/// Why an HTTP connection could not be set up.
///
/// The `Display` text is this layer's only; the error of the library that refused (the URL
/// parser's, the HTTP client's) is the [`source`](std::error::Error::source), boxed so that
/// those libraries stay out of this crate's API (downcast it to look closer).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL cannot be parsed, or is not an http(s) URL: displayed as
    /// `invalid URL "…"`, followed by `: not http or https` when it parses.
    #[error("invalid URL {url:?}{}", if source.is_none() { ": not http or https" } else { "" })]
    Url {
        /// The URL as given.
        url: String,
        /// Why it cannot be parsed (a `url::ParseError`); `None` when it parses but its
        /// scheme is neither `http` nor `https`.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A header given in the options (or the bearer token's `Authorization`) is invalid.
    #[error("invalid header {name:?}")]
    Header {
        /// The header's name as given.
        name: String,
        /// Why it is invalid (an `http::header::InvalidHeaderName` or
        /// `InvalidHeaderValue`).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The HTTP client could not be built.
    #[error("HTTP client")]
    Client(
        /// The HTTP client library's error (a `rustls::Error` when its TLS settings are refused).
        #[source]
        Box<dyn std::error::Error + Send + Sync>,
    ),
}
