//! What every request goes through: the `Host` and `Origin` checks (DNS rebinding, other
//! sites), the token on `/api/`, and the headers of every answer (the page's CSP).

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{Response, StatusCode};
use axum::middleware::Next;
use rand::RngCore;

use crate::api::AppState;

/// The page's Content-Security-Policy: everything from the inspector itself, no inline
/// script or style; images and audio of results as `data:` URLs, and the icons of tools
/// from http(s) too; frames only of the inspector's (the apps', [`crate::apps`]); no framing
/// of the page.
pub(crate) const CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https: http:; \
     media-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// A fresh token: 256 random bits, hex.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `Host` values the inspector answers to: the loopback names with its port (the
/// first is the one of its URL), or the address it listens on when that is not loopback.
pub(crate) fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let ip = addr.ip();
    if ip.is_loopback() {
        let own = match ip {
            std::net::IpAddr::V4(v4) => format!("{v4}:{port}"),
            std::net::IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        };
        let mut hosts = vec![own];
        for other in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")] {
            if !hosts.contains(&other) {
                hosts.push(other);
            }
        }
        hosts
    } else {
        vec![addr.to_string()]
    }
}

/// Compares two byte strings in time that depends on their lengths only.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

fn refuse(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Body::from(format!("{message}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// Checks `Host`, `Origin` and, under `/api/`, the token; adds the security headers. An app's
/// frame (under [`crate::apps::FRAME_PATH`]) keeps the policy it was served with (its own,
/// whose `frame-ancestors` names the inspector), and may be framed.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response<Body> {
    let app_frame = request.uri().path().starts_with(crate::apps::FRAME_PATH);
    let mut response = match check(&state, &request) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused,
    };
    let headers = response.headers_mut();
    if !(app_frame && headers.contains_key(header::CONTENT_SECURITY_POLICY)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn check(state: &AppState, request: &Request) -> Result<(), Response<Body>> {
    let hosts = state.allowed_hosts();
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err(refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "this Host is not the inspector's address (DNS rebinding protection)",
        ));
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let own = hosts.iter().any(|h| origin.eq_ignore_ascii_case(&format!("http://{h}")));
        if !own {
            return Err(refuse(StatusCode::FORBIDDEN, "requests from other origins are refused"));
        }
    }
    if request.uri().path().starts_with("/api/") || request.uri().path() == "/api" {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim);
        let ok = presented.is_some_and(|t| constant_time_eq(t.as_bytes(), state.token().as_bytes()));
        if !ok {
            return Err(refuse(StatusCode::UNAUTHORIZED, "the inspector's token is required (Authorization: Bearer)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_long() {
        let a = new_token();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_token());
    }

    #[test]
    fn comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn hosts_of_loopback() {
        let hosts = allowed_hosts("127.0.0.1:4000".parse().unwrap());
        assert_eq!(hosts[0], "127.0.0.1:4000");
        assert!(hosts.contains(&"localhost:4000".to_owned()));
        assert_eq!(allowed_hosts("10.0.0.1:80".parse().unwrap()), vec!["10.0.0.1:80".to_owned()]);
    }
}
