//! Which server the inspector talks to, and opening a connection to it.
//!
//! A minimal reading of TARGET: an `http(s)://` URL is a server over HTTP (Streamable HTTP,
//! falling back to HTTP+SSE, unless told which); anything else is a command line run as a
//! child process over stdio. An embedder resolves names of its own (configured servers)
//! with [`crate::InspectorBuilder::resolver`] and hands a resolved [`Target`]: a target of
//! [`mcpwire_client::target`] (`Target::from`), with the HTTP transport the page chose.

use std::sync::Arc;

use mcpwire_client::target::Target as ClientTarget;
use mcpwire_transport::child::{ChildCommand, ChildProcess, StderrMode};
use mcpwire_transport::http::{AuthProvider, HttpMode, HttpObserver, HttpOptions};
use mcpwire_transport::Connection;
use serde_json::{json, Map, Value};

/// Reads a target typed in the page.
pub type Resolver = Arc<dyn Fn(&str, TransportChoice) -> Result<Target, String> + Send + Sync>;

/// Which transport the page asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportChoice {
    /// From the target: a URL is HTTP (Streamable HTTP, then HTTP+SSE), the rest stdio.
    #[default]
    Auto,
    /// A command line over stdio.
    Stdio,
    /// Streamable HTTP only.
    Http,
    /// The HTTP+SSE transport of 2024-11-05 (the URL is the SSE endpoint).
    Sse,
}

impl TransportChoice {
    /// Reads `auto`, `stdio`, `http` or `sse`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "" | "auto" => Self::Auto,
            "stdio" => Self::Stdio,
            "http" | "streamable-http" => Self::Http,
            "sse" => Self::Sse,
            _ => return None,
        })
    }
}

/// A server to connect to: a target of the client library ([`mcpwire_client::target`]: a
/// command line or a URL, perhaps named in an `mcpServers` file) and, for an HTTP server,
/// the transport the page asked for.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server.
    pub spec: ClientTarget,
    /// For an HTTP server: Streamable HTTP with HTTP+SSE fallback, or one of them only
    /// (ignored for stdio).
    pub mode: HttpMode,
}

impl From<ClientTarget> for Target {
    /// The target as resolved: HTTP+SSE when its config entry says so, else Streamable HTTP
    /// with the HTTP+SSE fallback.
    fn from(spec: ClientTarget) -> Self {
        let mode = match &spec {
            ClientTarget::Http { sse: true, .. } => HttpMode::Sse,
            _ => HttpMode::Auto,
        };
        Self { spec, mode }
    }
}

impl Target {
    /// Reads a target: an `http(s)://` URL, or a command line (quoted as a shell would, never
    /// run through one).
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_with(text, TransportChoice::Auto)
    }

    /// Reads a target with the transport asked for (no name is looked up: see
    /// [`crate::InspectorBuilder::resolver`]).
    pub fn parse_with(text: &str, transport: TransportChoice) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the target is empty: give a command line or an http(s) URL".into());
        }
        let url = is_url(text);
        let mode = match (transport, url) {
            (TransportChoice::Auto, true) => HttpMode::Auto,
            (TransportChoice::Http, true) => HttpMode::Streamable,
            (TransportChoice::Sse, true) => HttpMode::Sse,
            (TransportChoice::Auto | TransportChoice::Stdio, false) => {
                let command = ChildCommand::parse(text).map_err(|e| format!("the command line {text:?}: {e}"))?;
                return Ok(ClientTarget::Stdio { command, named: None, searched: None }.into());
            }
            (TransportChoice::Stdio, true) => {
                return Err("a URL is not a command line: choose an HTTP transport".into())
            }
            (TransportChoice::Http | TransportChoice::Sse, false) => {
                return Err(format!("{text:?} is not an http(s) URL"));
            }
        };
        let spec = ClientTarget::Http {
            url: text.to_owned(),
            headers: Vec::new(),
            bearer: None,
            sse: mode == HttpMode::Sse,
            named: None,
        };
        Ok(Self { spec, mode })
    }

    /// Adds HTTP headers, each replacing one of the same name (for an HTTP target; ignored
    /// for stdio).
    pub fn with_headers(mut self, extra: Vec<(String, String)>) -> Self {
        if let ClientTarget::Http { headers, .. } = &mut self.spec {
            for (name, value) in extra {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                headers.push((name, value));
            }
        }
        self
    }

    /// How the page names the target: the command line or the URL.
    pub fn label(&self) -> String {
        match &self.spec {
            ClientTarget::Stdio { command, .. } => command.display(),
            ClientTarget::Http { url, .. } => url.clone(),
        }
    }

    /// `stdio`, `streamable-http`, `sse` or `http` (either of the last two).
    pub fn transport(&self) -> &'static str {
        match (&self.spec, self.mode) {
            (ClientTarget::Stdio { .. }, _) => "stdio",
            (_, HttpMode::Streamable) => "streamable-http",
            (_, HttpMode::Sse) => "sse",
            _ => "http",
        }
    }

    /// The configured name of the target, if it has one.
    fn name(&self) -> Option<String> {
        match &self.spec {
            ClientTarget::Stdio { named, .. } | ClientTarget::Http { named, .. } => {
                named.as_ref().map(|(n, _)| n.clone())
            }
        }
    }

    /// The `mcpServers` entry of this target (for a configuration file), by its name.
    pub fn server_entry(&self) -> Value {
        let (name, entry) = match &self.spec {
            ClientTarget::Stdio { command, .. } => {
                let args: Vec<String> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
                let program = command.get_program().to_string_lossy().into_owned();
                (self.name().unwrap_or_else(|| default_name(&program)), json!({"command": program, "args": args}))
            }
            ClientTarget::Http { url, headers, .. } => {
                let mut entry = Map::new();
                if self.mode == HttpMode::Sse {
                    entry.insert("type".into(), "sse".into());
                } else {
                    entry.insert("type".into(), "http".into());
                }
                entry.insert("url".into(), url.clone().into());
                if !headers.is_empty() {
                    let headers: Map<String, Value> =
                        headers.iter().map(|(n, v)| (n.clone(), Value::from(v.as_str()))).collect();
                    entry.insert("headers".into(), Value::Object(headers));
                }
                (self.name().unwrap_or_else(|| "server".into()), Value::Object(entry))
            }
        };
        json!({ "mcpServers": { name: entry } })
    }

    /// Starts the process (its stderr logged) or opens the HTTP connection.
    /// Whether the target is an HTTP server that was given no credentials (no
    /// `Authorization` header, no bearer token): one to authorize with OAuth on a 401.
    pub(crate) fn wants_oauth(&self) -> Option<&str> {
        match &self.spec {
            ClientTarget::Http { url, headers, bearer: None, .. }
                if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("authorization")) =>
            {
                Some(url)
            }
            _ => None,
        }
    }

    /// Over HTTP, `observer` is told of every exchange, and `auth` (an OAuth client)
    /// authorizes the requests.
    pub(crate) fn open(
        &self,
        observer: Option<HttpObserver>,
        auth: Option<Arc<dyn AuthProvider>>,
    ) -> Result<(Connection, Option<ChildProcess>), String> {
        match &self.spec {
            ClientTarget::Stdio { command, named, searched } => {
                let spec = ClientTarget::Stdio {
                    command: command.clone().stderr(StderrMode::Log),
                    named: named.clone(),
                    searched: searched.clone(),
                };
                let opened = spec.open().map_err(|e| e.to_string())?;
                Ok((opened.connection, opened.child))
            }
            // The client library opens Streamable HTTP with fallback or HTTP+SSE; the page may
            // also ask for Streamable HTTP only: the transport is told the mode itself.
            ClientTarget::Http { url, headers, bearer, .. } => {
                let options = HttpOptions {
                    headers: headers.clone(),
                    bearer: bearer.clone(),
                    mode: self.mode,
                    observer,
                    auth,
                    ..Default::default()
                };
                let connection =
                    mcpwire_transport::http::connect(url, options).map_err(|e| format!("{url}: {}", chain(&e)))?;
                Ok((connection, None))
            }
        }
    }
}

fn is_url(text: &str) -> bool {
    let lower = text.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A configuration name for a program: its file name without extension.
fn default_name(program: &str) -> String {
    let file = std::path::Path::new(program).file_stem().and_then(|s| s.to_str()).unwrap_or("server");
    if file.is_empty() {
        "server".into()
    } else {
        file.to_owned()
    }
}

/// An error and its sources, `: `-separated.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_command_lines() {
        let t = Target::parse("http://127.0.0.1:1/mcp").unwrap();
        assert_eq!(t.transport(), "http");
        let t = Target::parse_with("http://127.0.0.1:1/sse", TransportChoice::Sse).unwrap();
        assert_eq!(
            t.server_entry(),
            json!({"mcpServers": {"server": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}})
        );
        let t = Target::parse("mcp 'serve' --modern-only").unwrap();
        assert_eq!(t.transport(), "stdio");
        assert_eq!(
            t.server_entry(),
            json!({"mcpServers": {"mcp": {"command": "mcp", "args": ["serve", "--modern-only"]}}})
        );
        assert!(Target::parse("  ").is_err());
        assert!(Target::parse("'unterminated").is_err());
        assert!(Target::parse_with("mcp serve", TransportChoice::Http).is_err());
        assert!(Target::parse_with("https://x", TransportChoice::Stdio).is_err());
    }

    #[test]
    fn a_resolved_target_keeps_its_name_headers_and_transport() {
        let spec = ClientTarget::Http {
            url: "http://127.0.0.1:1/sse".into(),
            headers: vec![("X-A".into(), "1".into())],
            bearer: None,
            sse: true,
            named: Some(("remote".into(), "/tmp/mcp.json".into())),
        };
        let t = Target::from(spec).with_headers(vec![("x-a".into(), "2".into())]);
        assert_eq!(t.transport(), "sse");
        assert_eq!(t.label(), "http://127.0.0.1:1/sse");
        assert_eq!(
            t.server_entry(),
            json!({"mcpServers": {"remote": {"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"x-a": "2"}}}})
        );
        let t = Target::parse_with("http://127.0.0.1:1/mcp", TransportChoice::Http).unwrap();
        assert_eq!(t.transport(), "streamable-http");
    }
}
