//! The words of MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool that carries an
//! interactive HTML interface, served as a `ui://` resource and rendered by the host in a
//! sandboxed frame.

/// The extension identifier of MCP Apps (`capabilities.extensions` key, both sides).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML resource.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme of an app resource's URI (with its `://`).
pub const APP_URI_SCHEME: &str = "ui://";

/// The `_meta` key of a tool's, a resource's or a resource read item's app metadata.
pub const UI_META: &str = "ui";

/// The deprecated flat `_meta` key of a tool's app resource URI, read by older hosts.
pub const UI_RESOURCE_URI_META: &str = "ui/resourceUri";

/// The member of the extension's capability object (either side) that lists the MIME types
/// of app resources.
pub const APPS_MIME_TYPES: &str = "mimeTypes";

/// The members of an app resource's `_meta.ui.csp`: the origins it may reach, by kind (network
/// requests; images, scripts, styles, fonts and media; nested frames; the base URI).
pub const CSP_CONNECT_DOMAINS: &str = "connectDomains";
/// See [`CSP_CONNECT_DOMAINS`].
pub const CSP_RESOURCE_DOMAINS: &str = "resourceDomains";
/// See [`CSP_CONNECT_DOMAINS`].
pub const CSP_FRAME_DOMAINS: &str = "frameDomains";
/// See [`CSP_CONNECT_DOMAINS`].
pub const CSP_BASE_URI_DOMAINS: &str = "baseUriDomains";

/// The sandbox permissions an app resource may ask for (members of `_meta.ui.permissions`).
pub const PERMISSION_CAMERA: &str = "camera";
/// See [`PERMISSION_CAMERA`].
pub const PERMISSION_MICROPHONE: &str = "microphone";
/// See [`PERMISSION_CAMERA`].
pub const PERMISSION_GEOLOCATION: &str = "geolocation";
/// See [`PERMISSION_CAMERA`].
pub const PERMISSION_CLIPBOARD_WRITE: &str = "clipboardWrite";

/// Checks one origin of an app resource's CSP lists (`connectDomains`, `resourceDomains`, …):
/// `scheme://host[:port]`, the scheme `https`, `http`, `wss` or `ws`, the host a domain name
/// (possibly `*.`-prefixed), no path. Returns it lowercased and without a trailing `/`, or why
/// it is not one. Nothing that could change the policy it is put in (a quote, `;`, a space, a
/// comma) passes: the server checks its own declarations with it when it is built, and a host
/// checks a server's before it builds a frame's Content-Security-Policy.
///
/// ```
/// use mcpwire_protocol::types::csp_origin;
///
/// assert_eq!(csp_origin("https://*.CDN.example.com/"), Ok("https://*.cdn.example.com".to_owned()));
/// assert!(csp_origin("https://a.com; script-src *").is_err());
/// ```
pub fn csp_origin(text: &str) -> Result<String, &'static str> {
    if text.len() > 300 {
        return Err("it is too long");
    }
    let lower = text.to_ascii_lowercase();
    let Some((scheme, rest)) = lower.split_once("://") else { return Err("it has no scheme (`https://`)") };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return Err("its scheme is not https, http, wss or ws");
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    if port.is_some_and(|p| {
        p.is_empty()
            || p.len() > 5
            || !p.bytes().all(|b| b.is_ascii_digit())
            || p.parse::<u32>().map_or(true, |p| p > 65535)
    }) {
        return Err("its port is not a number");
    }
    let bare = host.strip_prefix("*.").unwrap_or(host);
    if bare.is_empty() {
        return Err("it has no host");
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if !bare.split('.').all(label_ok) {
        return Err("its host is not a domain name (nothing but letters, digits, `-` and `.`; no path)");
    }
    Ok(format!("{scheme}://{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_origins() {
        for (good, as_written) in [
            ("https://api.example.com", "https://api.example.com"),
            ("https://API.example.com/", "https://api.example.com"),
            ("https://*.example.com", "https://*.example.com"),
            ("http://localhost:8080", "http://localhost:8080"),
            ("wss://live.example.com:8443/", "wss://live.example.com:8443"),
            ("https://a-b.example.co.uk:443", "https://a-b.example.co.uk:443"),
        ] {
            assert_eq!(csp_origin(good).as_deref(), Ok(as_written), "{good}");
        }
        for (bad, why) in [
            ("api.example.com", "no scheme"),
            ("'self'", "no scheme"),
            ("*", "no scheme"),
            ("data:", "no scheme"),
            ("ftp://example.com", "scheme"),
            ("javascript://x", "scheme"),
            ("https://", "no host"),
            ("https://*.", "no host"),
            ("https://example.com/path", "not a domain"),
            ("https://example.com:port", "port"),
            ("https://a.com:99999", "port"),
            ("https://exa mple.com", "not a domain"),
            ("https://example.com; script-src *", "not a domain"),
            ("https://a.com 'unsafe-eval'", "not a domain"),
            ("https://a.com,https://b.com", "port"),
            ("https://a.com\"", "not a domain"),
            ("https://a..com", "not a domain"),
            ("https://*", "not a domain"),
            ("https://-x.com", "not a domain"),
        ] {
            let reason = csp_origin(bad).unwrap_err();
            assert!(reason.contains(why), "{bad}: {reason}");
        }
        assert_eq!(csp_origin(&format!("https://{}.com", "a".repeat(300))), Err("it is too long"));
    }
}
