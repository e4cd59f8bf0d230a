//! The HTTP client of a connection: hyper-util's pooled client driven directly, with
//! redirects followed here, and reqwest for a URL that a proxy variable routes.
//!
//! Why not reqwest for everything: reqwest wraps the same hyper-util client in layers that
//! cost more than the request itself on loopback (counted in docs/PERFORMANCE.md: the URL
//! parsed twice a request by its redirect layer whatever the policy, its default headers
//! merged, its connector cloned; 65,346 instructions a POST against 35,431 for hyper-util).
//! What those layers give that a connection needs is done here: redirects (followed as
//! reqwest follows them: 301/302 turn a POST into a GET, 303 any method but HEAD, 307/308
//! keep the method and body; the credentials dropped when the host changes; at most ten) and
//! TLS (rustls with the webpki roots, as reqwest's `rustls-tls`). Proxies (`HTTP_PROXY`,
//! `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, read as curl and reqwest read them) are left to
//! reqwest, which speaks to them: a request that the variables route goes through it.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    AUTHORIZATION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LOCATION, PROXY_AUTHORIZATION,
    TRANSFER_ENCODING, WWW_AUTHENTICATE,
};
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body::Frame;
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::Url;

use super::options::{HttpError, HttpOptions};

/// Redirects followed for one request, as reqwest's default policy allows.
const MAX_REDIRECTS: usize = 10;

/// An error of an HTTP library, kept whole.
pub(super) type BoxError = Box<dyn StdError + Send + Sync>;

/// An answer: its status, headers and the body still to read.
pub(super) type Response = http::Response<Body>;

/// Where a request goes: the URL as the connection knows it (to join a relative endpoint,
/// to show an auth provider) and as the HTTP client takes it, parsed once.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) url: Url,
    uri: Uri,
}

impl Target {
    pub(super) fn new(url: Url) -> Result<Self, http::uri::InvalidUri> {
        let uri = url.as_str().parse()?;
        Ok(Self { url, uri })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.url.fmt(f)
    }
}

/// The body of an answer, from whichever client made the request.
pub(super) enum Body {
    Direct(hyper::body::Incoming),
    Proxied(reqwest::Body),
}

impl Body {
    /// The next piece of the body's data: `None` at its end, an error when it broke.
    pub(super) async fn chunk(&mut self) -> Option<Result<Bytes, BoxError>> {
        loop {
            match self.frame().await? {
                Ok(frame) => match frame.into_data() {
                    Ok(data) => return Some(Ok(data)),
                    // Trailers carry no data.
                    Err(_) => continue,
                },
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The whole body as text (invalid UTF-8 replaced, as reqwest's `text` without its
    /// `charset` feature); empty when it broke.
    pub(super) async fn text(self) -> String {
        match self.collect().await {
            Ok(collected) => match String::from_utf8(collected.to_bytes().into()) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
            Err(_) => String::new(),
        }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        // Both bodies are `Unpin`: no projection needed.
        match self.get_mut() {
            Body::Direct(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            Body::Proxied(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Direct(body) => body.is_end_stream(),
            Body::Proxied(body) => body.is_end_stream(),
        }
    }
}

/// A connection's HTTP client.
pub(super) struct HttpClient {
    direct: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// Which URLs the proxy variables route, read once.
    proxies: Matcher,
    /// Built on the first request a proxy routes (most connections have none).
    proxied: OnceLock<Result<reqwest::Client, Arc<reqwest::Error>>>,
    connect_timeout: Duration,
}

impl HttpClient {
    pub(super) fn new(options: &HttpOptions) -> Result<Self, HttpError> {
        let mut http = HttpConnector::new();
        // `https` is the TLS layer's to handle.
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(options.connect_timeout));
        // reqwest's defaults, kept.
        http.set_keepalive(Some(Duration::from_secs(15)));
        let https = HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| HttpError::Client(Box::new(e)))?
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let direct = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(https);
        Ok(Self {
            direct,
            proxies: Matcher::from_env(),
            proxied: OnceLock::new(),
            connect_timeout: options.connect_timeout,
        })
    }

    /// Sends one request and returns its answer once its head has come, redirects followed.
    pub(super) async fn send(
        &self,
        method: Method,
        target: &Target,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response, BoxError> {
        if self.proxies.intercept(&target.uri).is_some() {
            return self.send_proxied(method, target, headers, body).await;
        }
        let mut at = Cow::Borrowed(target);
        let (mut method, mut headers, mut body) = (method, headers, body);
        for _ in 0..=MAX_REDIRECTS {
            let mut request = Request::new(Full::new(body.clone()));
            *request.method_mut() = method.clone();
            *request.uri_mut() = at.uri.clone();
            // Kept for a redirect: a few small copies, against reqwest's merge of its own
            // default headers into every request.
            *request.headers_mut() = headers.clone();
            let response = self.direct.request(request).await?;
            let status = response.status();
            let Some(next) = redirect(status, &response, &at.url)? else {
                return Ok(response.map(Body::Direct));
            };
            match status {
                StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND if method == Method::POST => {
                    method = Method::GET;
                    body = Bytes::new();
                    drop_payload_headers(&mut headers);
                }
                StatusCode::SEE_OTHER => {
                    if method != Method::HEAD {
                        method = Method::GET;
                    }
                    body = Bytes::new();
                    drop_payload_headers(&mut headers);
                }
                _ => {}
            }
            if next.host_str() != at.url.host_str() || next.port_or_known_default() != at.url.port_or_known_default() {
                // Credentials meant for one host are not shown to another.
                for name in [AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, WWW_AUTHENTICATE] {
                    headers.remove(name);
                }
                headers.remove("cookie2");
            }
            at = Cow::Owned(Target::new(next)?);
        }
        Err(TooManyRedirects.into())
    }

    async fn send_proxied(
        &self,
        method: Method,
        target: &Target,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response, BoxError> {
        let client = self
            .proxied
            .get_or_init(|| {
                reqwest::Client::builder()
                    .connect_timeout(self.connect_timeout)
                    .tcp_nodelay(true)
                    .build()
                    .map_err(Arc::new)
            })
            .as_ref()
            .map_err(|e| Box::new(SharedError(e.clone())) as BoxError)?;
        let response = client.request(method, target.url.clone()).headers(headers).body(body).send().await?;
        Ok(http::Response::from(response).map(Body::Proxied))
    }
}

/// Where a redirect answer sends the request next: `None` when the answer is no redirect
/// (or names no usable `Location`, and is then the answer, as reqwest gives it).
fn redirect<B>(status: StatusCode, response: &http::Response<B>, from: &Url) -> Result<Option<Url>, BoxError> {
    if !matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    ) {
        return Ok(None);
    }
    let Some(next) = response.headers().get(LOCATION).and_then(|l| l.to_str().ok()).and_then(|l| from.join(l).ok())
    else {
        return Ok(None);
    };
    if !matches!(next.scheme(), "http" | "https") {
        return Err(format!("redirected to {next}, which is not http or https").into());
    }
    Ok(Some(next))
}

/// What describes a body that a redirect to a GET leaves behind.
fn drop_payload_headers(headers: &mut HeaderMap) {
    for name in [CONTENT_TYPE, CONTENT_LENGTH, CONTENT_ENCODING, TRANSFER_ENCODING] {
        headers.remove(name);
    }
}

/// More than [`MAX_REDIRECTS`] redirects for one request.
#[derive(Debug)]
struct TooManyRedirects;

impl fmt::Display for TooManyRedirects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "more than {MAX_REDIRECTS} redirects")
    }
}

impl StdError for TooManyRedirects {}

/// The error of building the proxied client, shown to every request that needed it.
#[derive(Debug)]
struct SharedError(Arc<reqwest::Error>);

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the HTTP client for proxied requests could not be built")
    }
}

impl StdError for SharedError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_is_resolved_against_the_url_it_answers() {
        let from = Url::parse("http://127.0.0.1:8000/mcp").unwrap();
        let answer = |status: u16, location: Option<&str>| {
            let mut r = http::Response::builder().status(status);
            if let Some(l) = location {
                r = r.header(LOCATION, l);
            }
            let r = r.body(()).unwrap();
            redirect(r.status(), &r, &from).map(|u| u.map(String::from))
        };
        assert_eq!(answer(307, Some("/mcp/")).unwrap().as_deref(), Some("http://127.0.0.1:8000/mcp/"));
        assert_eq!(answer(308, Some("https://a.example/x")).unwrap().as_deref(), Some("https://a.example/x"));
        // Not a redirect, or one naming nowhere usable: the answer as it is.
        assert_eq!(answer(200, Some("/elsewhere")).unwrap(), None);
        assert_eq!(answer(302, None).unwrap(), None);
        assert_eq!(answer(302, Some("http://[::1")).unwrap(), None);
        let e = answer(301, Some("ftp://a.example/")).unwrap_err();
        assert_eq!(e.to_string(), "redirected to ftp://a.example/, which is not http or https");
    }
}
