//! Origin and Host validation against DNS rebinding: a browser page on another origin must
//! not reach a server bound to loopback.

use axum::http::{header, HeaderMap, HeaderValue};

/// Which hosts and origins a server accepts.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// Host names accepted in `Host` and in `Origin` (without port). Empty: any.
    pub allowed_hosts: Vec<String>,
}

impl Default for HostPolicy {
    fn default() -> Self {
        Self { allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into(), "::1".into()] }
    }
}

/// The host part of `host[:port]` (IPv6 literals keep their brackets).
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.find(']') {
            Some(end) => &authority[..end + 2],
            None => authority,
        };
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(h, port)| if port.chars().all(|c| c.is_ascii_digit()) { h } else { authority })
}

impl HostPolicy {
    /// Accepts any host and origin (a server behind a trusted proxy that checks them).
    pub fn any() -> Self {
        Self { allowed_hosts: Vec::new() }
    }

    fn allows(&self, host: &str) -> bool {
        self.allowed_hosts.is_empty() || self.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Why the request's `Host` or `Origin` is refused, if it is.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        if let Some(host) = only(headers, header::HOST)? {
            let host = host.to_str().map_err(|_| "unreadable Host header".to_owned())?;
            if !self.allows(host_of(host)) {
                return Err(format!("Host {host:?} is not allowed"));
            }
        }
        if let Some(origin) = only(headers, header::ORIGIN)? {
            let origin = origin.to_str().map_err(|_| "unreadable Origin header".to_owned())?;
            // `null` comes from sandboxed frames and file: pages of any site: not an allowed origin.
            let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            let authority = authority.split('/').next().unwrap_or(authority);
            if origin == "null" || !self.allows(host_of(authority)) {
                return Err(format!("Origin {origin:?} is not allowed"));
            }
        }
        Ok(())
    }

    /// Why the authority of the request's URI is refused, if it names one: HTTP/2's
    /// `:authority` (which takes the place of `Host`), or an absolute-form HTTP/1.1 target.
    pub(crate) fn check_authority(&self, uri: &axum::http::Uri) -> Result<(), String> {
        match uri.authority() {
            Some(authority) if !self.allows(authority.host()) => {
                Err(format!("Host {:?} is not allowed", authority.as_str()))
            }
            _ => Ok(()),
        }
    }
}

/// A header's one value: given twice, a proxy and this server could each judge another.
fn only(headers: &HeaderMap, name: header::HeaderName) -> Result<Option<&HeaderValue>, String> {
    let mut values = headers.get_all(&name).iter();
    match (values.next(), values.next()) {
        (first, None) => Ok(first),
        (Some(_), Some(_)) | (None, Some(_)) => Err(format!("header {name} is given more than once")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_only_by_default() {
        let p = HostPolicy::default();
        assert!(p.check(&headers("127.0.0.1:3000", Some("http://127.0.0.1:3000"))).is_ok());
        assert!(p.check(&headers("localhost", None)).is_ok());
        assert!(p.check(&headers("[::1]:80", Some("http://[::1]:80"))).is_ok());
        assert!(p.check(&headers("evil.example.com", None)).is_err());
        assert!(p.check(&headers("127.0.0.1:3000", Some("http://evil.example.com"))).is_err());
        assert!(HostPolicy::any().check(&headers("evil.example.com", Some("http://evil.example.com"))).is_ok());
    }

    #[test]
    fn the_authority_of_the_uri_is_checked_too() {
        let p = HostPolicy::default();
        let uri = |s: &str| s.parse::<axum::http::Uri>().unwrap();
        assert!(p.check_authority(&uri("/mcp")).is_ok());
        assert!(p.check_authority(&uri("http://127.0.0.1:3000/mcp")).is_ok());
        assert!(p.check_authority(&uri("http://localhost/mcp")).is_ok());
        assert!(p.check_authority(&uri("http://[::1]:8080/mcp")).is_ok());
        assert!(p.check_authority(&uri("http://evil.example.com:3000/mcp")).is_err());
        assert!(p.check_authority(&uri("http://user@evil.example.com/mcp")).is_err());
        assert!(HostPolicy::any().check_authority(&uri("http://evil.example.com/mcp")).is_ok());
    }

    #[test]
    fn host_or_origin_given_twice_is_refused() {
        let p = HostPolicy::any();
        let mut twice = headers("127.0.0.1", None);
        twice.append(header::HOST, HeaderValue::from_static("127.0.0.1"));
        assert_eq!(p.check(&twice), Err("header host is given more than once".into()));
        let mut twice = headers("127.0.0.1", Some("http://127.0.0.1"));
        twice.append(header::ORIGIN, HeaderValue::from_static("http://evil.example.com"));
        assert_eq!(p.check(&twice), Err("header origin is given more than once".into()));
    }
}
