//! The suite's list of servers (`bench/servers.toml`).
//!
//! ```toml
//! [[server]]
//! name = "mcp"
//! version = "mcp 0.1.0"
//! http_sessions = ["target/release/mcp", "serve", "--http", "127.0.0.1:{port}"]
//! http_stateless = ["target/release/mcp", "serve", "--http", "127.0.0.1:{port}"]
//! stateless_protocol = "2026-07-28"
//! stdio = ["target/release/mcp", "serve"]
//! ```
//!
//! Commands are argv arrays relative to the repository root; `{port}` is replaced by a free
//! port. `path` (default `/mcp`) is the endpoint's path; `tool` (default `echo`) the name of
//! the echo tool in HTTP calls (a gateway prefixes it); `setup` is a note for humans.

use crate::process;
use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use std::path::Path;

/// The whole file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// The servers, in the order they are measured and shown.
    #[serde(rename = "server", default)]
    pub servers: Vec<ServerSpec>,
}

/// One server under test.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Short name (a column in the report; `--only` selects by it).
    pub name: String,
    /// What it is, free text (e.g. `rmcp 0.8`).
    pub version: String,
    /// Command serving legacy sessions over Streamable HTTP on `{port}`.
    #[serde(default)]
    pub http_sessions: Option<Vec<String>>,
    /// Command serving stateless Streamable HTTP on `{port}`.
    #[serde(default)]
    pub http_stateless: Option<Vec<String>>,
    /// Revision of the stateless calls: `2026-07-28` (modern) or a legacy one.
    #[serde(default)]
    pub stateless_protocol: Option<String>,
    /// Command serving stdio.
    #[serde(default)]
    pub stdio: Option<Vec<String>>,
    /// Path of the MCP endpoint.
    #[serde(default = "default_path")]
    pub path: String,
    /// The name of the echo tool the HTTP measurements call (default `echo`; a gateway
    /// serves it under a prefix, `s_echo`). stdio measurements always call `echo`.
    #[serde(default)]
    pub tool: Option<String>,
    /// How to prepare it (a note shown in the report).
    #[serde(default)]
    pub setup: Option<String>,
}

fn default_path() -> String {
    "/mcp".into()
}

/// Parses and checks the text of a config file.
pub fn parse(text: &str) -> Result<BenchConfig> {
    let config: BenchConfig = toml::from_str(text).context("bad servers file")?;
    let mut names = std::collections::HashSet::new();
    for s in &config.servers {
        if s.name.is_empty() || s.name.contains(',') {
            bail!("server name {:?}: must be non-empty and without commas", s.name);
        }
        if !names.insert(s.name.as_str()) {
            bail!("server {:?} is listed twice", s.name);
        }
        for (kind, cmd) in s.commands() {
            if cmd.is_empty() {
                bail!("server {:?}: the {kind} command is empty", s.name);
            }
            if kind != "stdio" && !cmd.iter().any(|a| a.contains("{port}")) {
                bail!("server {:?}: the {kind} command has no {{port}}", s.name);
            }
        }
        if let Some(p) = &s.stateless_protocol {
            if !is_revision(p) {
                bail!("server {:?}: stateless_protocol {p:?} is not a revision like 2026-07-28", s.name);
            }
        }
        if let Some(tool) = &s.tool {
            if tool.is_empty() {
                bail!("server {:?}: tool must not be empty", s.name);
            }
            if tool != crate::mcp::TOOL && s.stdio.is_some() {
                bail!("server {:?}: tool {tool:?} applies to HTTP only; stdio measurements call echo", s.name);
            }
        }
        if !s.path.starts_with('/') {
            bail!("server {:?}: path {:?} must start with /", s.name, s.path);
        }
    }
    Ok(config)
}

/// Reads and parses a config file.
pub fn load(path: &Path) -> Result<BenchConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text).with_context(|| format!("in {}", path.display()))
}

fn is_revision(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

impl ServerSpec {
    /// Every command given, with its kind (`http_sessions`, `http_stateless`, `stdio`).
    pub fn commands(&self) -> Vec<(&'static str, &Vec<String>)> {
        [("http_sessions", &self.http_sessions), ("http_stateless", &self.http_stateless), ("stdio", &self.stdio)]
            .into_iter()
            .filter_map(|(k, c)| c.as_ref().map(|c| (k, c)))
            .collect()
    }

    /// The name of the echo tool HTTP calls use (`echo` when not given).
    pub fn tool(&self) -> &str {
        self.tool.as_deref().unwrap_or(crate::mcp::TOOL)
    }

    /// The revision stateless calls use (2026-07-28 when not given).
    pub fn stateless_protocol(&self) -> &str {
        self.stateless_protocol.as_deref().unwrap_or(crate::mcp::MODERN_VERSION)
    }

    /// What is missing to run this server's commands (a program not found, or a file argument
    /// that does not exist under `root`), or `None` when everything is there.
    pub fn missing(&self, root: &Path) -> Option<String> {
        for (kind, cmd) in self.commands() {
            let Some((program, args)) = cmd.split_first() else { continue };
            if !process::program_exists(program, root) {
                return Some(format!("{kind}: {program} not found"));
            }
            for a in args {
                if a.contains('/') && !a.starts_with('-') && !a.contains("://") && !root.join(a).exists() {
                    return Some(format!("{kind}: {a} not found"));
                }
            }
        }
        None
    }
}

/// `argv` with `{port}` replaced.
pub fn with_port(argv: &[String], port: u16) -> Vec<String> {
    argv.iter().map(|a| a.replace("{port}", &port.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
        [[server]]
        name = "mcp"
        version = "mcp 0.1"
        http_sessions = ["target/release/mcp", "serve", "--http", "127.0.0.1:{port}"]
        http_stateless = ["target/release/mcp", "serve", "--http", "127.0.0.1:{port}"]
        stateless_protocol = "2026-07-28"
        stdio = ["target/release/mcp", "serve"]

        [[server]]
        name = "pipe"
        version = "baseline"
        stdio = ["sh", "-c", "cat"]
        setup = "nothing"
    "#;

    #[test]
    fn parses_servers() {
        let c = parse(SAMPLE).unwrap();
        assert_eq!(c.servers.len(), 2);
        let mcp = &c.servers[0];
        assert_eq!(mcp.path, "/mcp");
        assert_eq!(mcp.commands().len(), 3);
        assert_eq!(with_port(mcp.http_sessions.as_ref().unwrap(), 4000)[3], "127.0.0.1:4000");
        let pipe = &c.servers[1];
        assert_eq!(pipe.stateless_protocol(), "2026-07-28");
        assert_eq!(pipe.setup.as_deref(), Some("nothing"));
        assert_eq!(pipe.tool(), "echo");
        assert_eq!(pipe.missing(Path::new("/")), None);
        assert_eq!(mcp.missing(Path::new("/nonexistent")).unwrap(), "http_sessions: target/release/mcp not found");
    }

    #[test]
    fn rejects_bad_configs() {
        let dup = "[[server]]\nname='a'\nversion='1'\n[[server]]\nname='a'\nversion='2'\n";
        assert!(format!("{:#}", parse(dup).unwrap_err()).contains("twice"));
        let no_port = "[[server]]\nname='a'\nversion='1'\nhttp_sessions=['x']\n";
        assert!(format!("{:#}", parse(no_port).unwrap_err()).contains("{port}"));
        let bad_rev = "[[server]]\nname='a'\nversion='1'\nstateless_protocol='latest'\n";
        assert!(format!("{:#}", parse(bad_rev).unwrap_err()).contains("revision"));
        let tool_over_stdio = "[[server]]\nname='a'\nversion='1'\ntool='s_echo'\nstdio=['x']\n";
        assert!(format!("{:#}", parse(tool_over_stdio).unwrap_err()).contains("HTTP only"));
        let gateway = "[[server]]\nname='g'\nversion='1'\ntool='s_echo'\nhttp_stateless=['x','{port}']\n";
        assert_eq!(parse(gateway).unwrap().servers[0].tool(), "s_echo");
        let unknown = "[[server]]\nname='a'\nversion='1'\ncolour='red'\n";
        assert!(parse(unknown).is_err());
    }
}
