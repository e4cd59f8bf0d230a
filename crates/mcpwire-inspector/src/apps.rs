//! MCP Apps (the `io.modelcontextprotocol/ui` extension): the inspector as a host.
//!
//! The page reads an app tool's `ui://` resource (through `/api/request`, so that the read is
//! in the history) and hands its HTML and its `_meta.ui` to `POST /api/apps/frame`, which
//! keeps them and answers the URL of a frame, `/apps/frame/{id}` (an unguessable id, no token:
//! a frame's navigation carries none). The page loads it in `<iframe sandbox="allow-scripts">`:
//! without `allow-same-origin` the app runs in an opaque origin, so that it cannot read the
//! page's storage (the token) nor call the API (its `Origin: null` is refused).
//!
//! The frame is served with a Content-Security-Policy header built here from `_meta.ui.csp`
//! (and the same policy, less `frame-ancestors`, in a `<meta http-equiv>` put at the start of
//! the document's head): every declared origin is checked first, and one that is not
//! `scheme://host[:port]` (http, https, ws or wss; the host possibly `*.`-prefixed) is left
//! out and reported, so that a server's string never reaches the policy as it is. What is not
//! declared is not allowed: no network, no nested frames, scripts and styles inline only
//! (as the extension's restrictive default, without `'self'`, which an opaque origin has no
//! use for). Of the permissions asked for (`_meta.ui.permissions`), the four the extension
//! names become the frame's `allow` attribute.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use parking_lot::Mutex;
use rand::RngCore;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use mcpwire_protocol::types::{
    csp_origin, CSP_BASE_URI_DOMAINS, CSP_CONNECT_DOMAINS, CSP_FRAME_DOMAINS, CSP_RESOURCE_DOMAINS, PERMISSION_CAMERA,
    PERMISSION_CLIPBOARD_WRITE, PERMISSION_GEOLOCATION, PERMISSION_MICROPHONE,
};

use crate::api::{AppState, Body};

/// How many frames are kept (the older ones answer 404).
const KEPT: usize = 16;
/// The most origins taken from one list of the CSP.
const MAX_ORIGINS: usize = 64;
/// The path of the frames, before their id.
pub(crate) const FRAME_PATH: &str = "/apps/frame/";

/// The frames the page asked for, newest last.
#[derive(Default)]
pub(crate) struct Views(Mutex<VecDeque<(String, Arc<View>)>>);

/// One app's document and the policy it is served with.
pub(crate) struct View {
    html: String,
    policy: String,
}

impl Views {
    fn keep(&self, view: View) -> String {
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut views = self.0.lock();
        while views.len() >= KEPT {
            views.pop_front();
        }
        views.push_back((id.clone(), Arc::new(view)));
        id
    }

    fn get(&self, id: &str) -> Option<Arc<View>> {
        self.0.lock().iter().find(|(of, _)| of == id).map(|(_, view)| view.clone())
    }

    /// Forgets every frame (the connection ended).
    pub(crate) fn clear(&self) {
        self.0.lock().clear();
    }
}

/// The policy of an app's frame, and what was made of its metadata.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Policy {
    /// The Content-Security-Policy header (with `frame-ancestors`).
    pub header: String,
    /// The same policy for a `<meta http-equiv>` (which cannot have `frame-ancestors`).
    pub meta: String,
    /// The frame's `allow` attribute (`camera; microphone; …`), maybe empty.
    pub allow: String,
    /// The origins taken, by list (`connectDomains`, …), as the extension writes them.
    pub approved: Value,
    /// The permissions granted, as the extension writes them (`{"camera": {}}`).
    pub permissions: Value,
    /// What was left out, and why: `{list, value, reason}`.
    pub dropped: Vec<Value>,
}

/// The lists of `_meta.ui.csp`.
const LISTS: [&str; 4] = [CSP_CONNECT_DOMAINS, CSP_RESOURCE_DOMAINS, CSP_FRAME_DOMAINS, CSP_BASE_URI_DOMAINS];

/// The frame's directives besides `default-src 'none'`: each one's own sources, and the list
/// whose origins it adds (if any).
const DIRECTIVES: [(&str, &str, Option<&str>); 10] = [
    ("script-src", "'unsafe-inline'", Some(CSP_RESOURCE_DOMAINS)),
    ("style-src", "'unsafe-inline'", Some(CSP_RESOURCE_DOMAINS)),
    ("img-src", "data:", Some(CSP_RESOURCE_DOMAINS)),
    ("font-src", "data:", Some(CSP_RESOURCE_DOMAINS)),
    ("media-src", "data:", Some(CSP_RESOURCE_DOMAINS)),
    ("connect-src", "", Some(CSP_CONNECT_DOMAINS)),
    ("frame-src", "", Some(CSP_FRAME_DOMAINS)),
    ("base-uri", "", Some(CSP_BASE_URI_DOMAINS)),
    ("object-src", "", None),
    ("form-action", "", None),
];

/// The permissions the extension names, with their Permissions Policy feature.
const PERMISSIONS: [(&str, &str); 4] = [
    (PERMISSION_CAMERA, "camera"),
    (PERMISSION_MICROPHONE, "microphone"),
    (PERMISSION_GEOLOCATION, "geolocation"),
    (PERMISSION_CLIPBOARD_WRITE, "clipboard-write"),
];

/// Builds the policy of a frame from an app resource's `_meta.ui` (`ui`, maybe absent or not
/// an object); `ancestors` are the origins that may frame it (the inspector's).
pub(crate) fn policy(ui: Option<&Value>, ancestors: &[String]) -> Policy {
    let mut dropped = Vec::new();
    let csp = ui.and_then(|ui| ui.get("csp"));
    if csp.is_some_and(|c| !c.is_object() && !c.is_null()) {
        dropped.push(json!({"list": "csp", "value": csp, "reason": "it is not an object"}));
    }
    let mut approved = Map::new();
    let mut taken: Vec<(&str, Vec<String>)> = Vec::new();
    for list in LISTS {
        let mut origins: Vec<String> = Vec::new();
        match csp.and_then(|c| c.get(list)) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let checked = match item.as_str() {
                        Some(text) => csp_origin(text),
                        None => Err("it is not a string"),
                    };
                    match checked {
                        Ok(_) if origins.len() >= MAX_ORIGINS => {
                            dropped.push(json!({"list": list, "value": item, "reason": "too many origins in the list"}))
                        }
                        Ok(origin) if !origins.contains(&origin) => origins.push(origin),
                        Ok(_) => {}
                        Err(reason) => dropped.push(json!({"list": list, "value": item, "reason": reason})),
                    }
                }
            }
            Some(other) => dropped.push(json!({"list": list, "value": other, "reason": "it is not a list"})),
        }
        if !origins.is_empty() {
            approved.insert(list.to_owned(), json!(origins));
        }
        taken.push((list, origins));
    }
    let of = |list: &str| taken.iter().find(|(l, _)| *l == list).map(|(_, o)| o.join(" ")).unwrap_or_default();
    let directives: Vec<String> = std::iter::once("default-src 'none'".to_owned())
        .chain(DIRECTIVES.iter().map(|(name, base, list)| {
            let extra = list.map(of).unwrap_or_default();
            let sources = [*base, extra.as_str()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
            format!("{name} {}", if sources.is_empty() { "'none'" } else { &sources })
        }))
        .collect();
    let meta = directives.join("; ");
    let ancestors: Vec<String> = ancestors.iter().map(|h| format!("http://{h}")).collect();
    let header = format!(
        "{meta}; frame-ancestors {}",
        if ancestors.is_empty() { "'none'".to_owned() } else { ancestors.join(" ") }
    );
    let asked = ui.and_then(|ui| ui.get("permissions"));
    let mut features = Vec::new();
    let mut granted = Map::new();
    if let Some(Value::Object(asked)) = asked {
        for (name, value) in asked {
            match PERMISSIONS.iter().find(|(known, _)| known == name) {
                Some((known, feature)) if !value.is_null() && value != &Value::Bool(false) => {
                    features.push(*feature);
                    granted.insert((*known).to_owned(), json!({}));
                }
                Some(_) => {}
                None => dropped.push(
                    json!({"list": "permissions", "value": name, "reason": "not a permission the extension names"}),
                ),
            }
        }
    } else if asked.is_some_and(|a| !a.is_null()) {
        dropped.push(json!({"list": "permissions", "value": asked, "reason": "it is not an object"}));
    }
    Policy {
        header,
        meta,
        allow: features.join("; "),
        approved: Value::Object(approved),
        permissions: Value::Object(granted),
        dropped,
    }
}

/// `html` with `<meta http-equiv="Content-Security-Policy">` at the start of its head (made
/// after `<html>` or the doctype when there is no `<head>`).
pub(crate) fn with_meta(html: &str, policy: &str) -> String {
    let tag = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">", policy.replace('"', "&quot;"));
    let lower = html.to_ascii_lowercase();
    let after_open = |name: &str| -> Option<usize> {
        let mut from = 0;
        while let Some(at) = lower[from..].find(name).map(|i| i + from) {
            let next = lower.as_bytes().get(at + name.len()).copied();
            if matches!(next, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')) {
                return lower[at..].find('>').map(|end| at + end + 1);
            }
            from = at + name.len();
        }
        None
    };
    let at = after_open("<head").or_else(|| after_open("<html")).or_else(|| {
        let trimmed = lower.trim_start();
        trimmed
            .starts_with("<!doctype")
            .then(|| lower.len() - trimmed.len())
            .and_then(|start| lower[start..].find('>').map(|end| start + end + 1))
    });
    match at {
        Some(at) => format!("{}{tag}{}", &html[..at], &html[at..]),
        None => format!("{tag}{html}"),
    }
}

/// The body of `POST /api/apps/frame`.
#[derive(Deserialize)]
pub(crate) struct FrameBody {
    /// The app's HTML (a read item's `text`, or its `blob` decoded).
    html: String,
    /// The read item's `_meta.ui` (or the resource's, as listed).
    #[serde(default)]
    ui: Option<Value>,
}

/// `POST /api/apps/frame` `{html, ui?}`: keeps the document and answers `{url, csp, allow,
/// permissions, approved, dropped}`.
pub(crate) async fn frame(State(state): State<AppState>, Body(body): Body<FrameBody>) -> Json<Value> {
    let FrameBody { html, ui } = body;
    let policy = policy(ui.as_ref(), state.allowed_hosts());
    let document = with_meta(&html, &policy.meta);
    let id = state.views().keep(View { html: document, policy: policy.header.clone() });
    Json(json!({
        "url": format!("{FRAME_PATH}{id}"),
        "csp": policy.header,
        "allow": policy.allow,
        "permissions": policy.permissions,
        "approved": policy.approved,
        "dropped": policy.dropped,
    }))
}

/// `GET /apps/frame/{id}`: an app's document, with its policy (no token: the id is the key).
pub(crate) async fn serve(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let Some(view) = state.views().get(&id) else {
        return (StatusCode::NOT_FOUND, "no such app frame (it may have been replaced)\n").into_response();
    };
    let mut response = view.html.clone().into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    match HeaderValue::from_str(&view.policy) {
        Ok(value) => {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
        Err(_) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "the frame's policy is not a header value\n").into_response()
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy() {
        let p = policy(None, &["127.0.0.1:9".into()]);
        assert!(p.header.starts_with("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"));
        assert!(p.header.contains("connect-src 'none'"));
        assert!(p.header.contains("frame-src 'none'"));
        assert!(p.header.contains("base-uri 'none'"));
        assert!(p.header.ends_with("frame-ancestors http://127.0.0.1:9"));
        assert!(!p.meta.contains("frame-ancestors"));
        assert!(p.dropped.is_empty());
        assert_eq!(p.allow, "");
    }

    #[test]
    fn declared_and_hostile() {
        let ui = json!({
            "csp": {
                "connectDomains": ["https://api.example.com", "https://a.com; script-src *", 7],
                "resourceDomains": ["https://*.cdn.example.com"],
                "frameDomains": "https://x.com",
            },
            "permissions": {"camera": {}, "clipboardWrite": {}, "usb": {}},
        });
        let p = policy(Some(&ui), &[]);
        assert!(p.header.contains("connect-src https://api.example.com;"), "{}", p.header);
        assert!(p.header.contains("script-src 'unsafe-inline' https://*.cdn.example.com;"), "{}", p.header);
        assert!(p.header.contains("img-src data: https://*.cdn.example.com;"), "{}", p.header);
        assert!(p.header.contains("frame-src 'none'"));
        assert!(!p.header.contains("a.com;"), "{}", p.header);
        assert!(!p.header.contains("script-src *"), "{}", p.header);
        assert_eq!(p.dropped.len(), 4, "{:?}", p.dropped);
        assert_eq!(p.allow, "camera; clipboard-write");
        assert_eq!(p.permissions, json!({"camera": {}, "clipboardWrite": {}}));
        assert_eq!(p.approved["connectDomains"], json!(["https://api.example.com"]));
    }

    #[test]
    fn meta_goes_first_in_the_head() {
        let m = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">";
        assert_eq!(
            with_meta("<!doctype html><html><HEAD><title>x</title></head></html>", "default-src 'none'"),
            format!("<!doctype html><html><HEAD>{m}<title>x</title></head></html>")
        );
        assert_eq!(with_meta("<header></header>", "default-src 'none'"), format!("{m}<header></header>"));
        assert_eq!(with_meta("<html lang=en><p>", "default-src 'none'"), format!("<html lang=en>{m}<p>"));
        assert_eq!(with_meta(" <!DOCTYPE html><p>", "default-src 'none'"), format!(" <!DOCTYPE html>{m}<p>"));
    }
}
