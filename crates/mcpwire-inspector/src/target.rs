//! Which server the inspector talks to, and opening a connection to it.
//!
//! A minimal reading of TARGET: an `http(s)://` URL is a server over HTTP (Streamable HTTP,
//! falling back to HTTP+SSE, unless told which); anything else is a command line run as a
//! child process over stdio. An embedder resolves names of its own (configured servers)
//! with [`crate::InspectorBuilder::resolver`] and hands a resolved [`Target`].

use std::sync::Arc;

use mcpwire_transport::child::{ChildCommand, ChildProcess, StderrMode};
use mcpwire_transport::http::{HttpMode, HttpOptions};
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

/// A server to connect to.
#[derive(Debug, Clone)]
pub enum Target {
    /// A server process spoken to over its stdin and stdout.
    Stdio {
        /// What to run.
        command: ChildCommand,
        /// Its name, when it came from a configuration.
        name: Option<String>,
    },
    /// A server reached over HTTP.
    Http {
        /// Its URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
        /// Streamable HTTP (with HTTP+SSE fallback), or one of them only.
        mode: HttpMode,
        /// Its name, when it came from a configuration.
        name: Option<String>,
    },
}

fn is_url(text: &str) -> bool {
    let lower = text.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

impl Target {
    /// Reads a target: an `http(s)://` URL, or a command line (quoted as a shell would, never
    /// run through one).
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_with(text, TransportChoice::Auto)
    }

    /// Reads a target with the transport asked for.
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
                return Ok(Self::Stdio { command, name: None });
            }
            (TransportChoice::Stdio, true) => {
                return Err("a URL is not a command line: choose an HTTP transport".into())
            }
            (TransportChoice::Http | TransportChoice::Sse, false) => {
                return Err(format!("{text:?} is not an http(s) URL"));
            }
        };
        Ok(Self::Http { url: text.to_owned(), headers: Vec::new(), mode, name: None })
    }

    /// Replaces the HTTP headers (for an HTTP target; ignored for stdio).
    pub fn with_headers(mut self, extra: Vec<(String, String)>) -> Self {
        if let Self::Http { headers, .. } = &mut self {
            for (name, value) in extra {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                headers.push((name, value));
            }
        }
        self
    }

    /// How the page names the target: the command line or the URL.
    pub fn label(&self) -> String {
        match self {
            Self::Stdio { command, .. } => command.display(),
            Self::Http { url, .. } => url.clone(),
        }
    }

    /// `stdio`, `streamable-http`, `sse` or `http` (either of the last two).
    pub fn transport(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { mode: HttpMode::Streamable, .. } => "streamable-http",
            Self::Http { mode: HttpMode::Sse, .. } => "sse",
            Self::Http { .. } => "http",
        }
    }

    /// The `mcpServers` entry of this target (for a configuration file), by its name.
    pub fn server_entry(&self) -> Value {
        let (name, entry) = match self {
            Self::Stdio { command, name } => {
                let args: Vec<String> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
                let program = command.get_program().to_string_lossy().into_owned();
                (name.clone().unwrap_or_else(|| default_name(&program)), json!({"command": program, "args": args}))
            }
            Self::Http { url, headers, mode, name } => {
                let mut entry = Map::new();
                if *mode == HttpMode::Sse {
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
                (name.clone().unwrap_or_else(|| "server".into()), Value::Object(entry))
            }
        };
        json!({ "mcpServers": { name: entry } })
    }

    /// Starts the process or opens the HTTP connection.
    pub(crate) fn open(&self) -> Result<(Connection, Option<ChildProcess>), String> {
        match self {
            Self::Stdio { command, .. } => {
                let (connection, child) = command
                    .clone()
                    .stderr(StderrMode::Log)
                    .spawn()
                    .map_err(|e| format!("cannot start `{}`: {}", command.display(), chain(&e)))?;
                Ok((connection, Some(child)))
            }
            Self::Http { url, headers, mode, .. } => {
                let options = HttpOptions { headers: headers.clone(), mode: *mode, ..Default::default() };
                let connection =
                    mcpwire_transport::http::connect(url, options).map_err(|e| format!("{url}: {}", chain(&e)))?;
                Ok((connection, None))
            }
        }
    }
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
}
