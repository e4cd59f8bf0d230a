//! `mcpServers` config files: the format Claude Desktop, Cursor, Claude Code and VS Code use
//! to name servers, so that a server is run as the editor would run it (`mcp list
//! my-server`, the gateway's `mcp proxy --config FILE`).
//!
//! A file is a JSON object (comments and trailing commas allowed, as VS Code writes them)
//! with the servers under `mcpServers` (Claude Desktop, Cursor, Claude Code) or `servers`
//! (VS Code). Each server is either a process:
//!
//! ```json
//! { "mcpServers": { "everything": {
//!     "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
//!     "env": { "DEBUG": "1" }, "cwd": "/tmp" } } }
//! ```
//!
//! or a remote server: `{"url": "https://example.com/mcp", "headers": {"X-Key": "…"}}`
//! (`type`: `http`, `streamable-http`, `sse`). Strings may use `${VAR}`, `${env:VAR}`,
//! `${VAR:-default}`, `${userHome}` and `${workspaceFolder}`.
//!
//! [`load`] reads one file, and [`ConfigFile::server`] decodes one of its entries into a
//! [`NamedServer`]. Without a file given, a name is looked up ([`lookup`]) in these files,
//! in order, and the first that has it wins (see [`search_paths`]): `./.mcp.json`,
//! `./mcp.json`, `$XDG_CONFIG_HOME/mcp/mcp.json` (`~/.config/mcp/mcp.json`), Claude
//! Desktop's `claude_desktop_config.json` (`~/.config/Claude/` on Linux,
//! `~/Library/Application Support/Claude/` on macOS, `%APPDATA%\Claude\` on Windows),
//! `~/.cursor/mcp.json`, and VS Code's `./.vscode/mcp.json`.
//!
//! ```
//! use mcpwire_client::config::{self, ServerSpec};
//!
//! let file = config::parse(
//!     std::path::Path::new("mcp.json"),
//!     r#"{"mcpServers": {"everything": {"command": "npx -y @modelcontextprotocol/server-everything"}}}"#,
//! )
//! .unwrap();
//! for (name, entry) in &file.servers {
//!     let server = file.server(name, entry).unwrap();
//!     assert!(matches!(server.spec, ServerSpec::Stdio { ref command, .. } if command == "npx"));
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A server named in a config file.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerSpec {
    /// A process spoken to over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it.
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// A remote server.
    Http {
        /// Its URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
        /// `sse` when the file says the server speaks the old HTTP+SSE transport.
        sse: bool,
    },
}

/// A server found in a config file.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedServer {
    /// Its name in the file.
    pub name: String,
    /// The file.
    pub file: PathBuf,
    /// What to run or reach.
    pub spec: ServerSpec,
}

/// The outcome of looking a name up.
#[derive(Debug, Default)]
pub struct Lookup {
    /// The server, if a file names it.
    pub found: Option<NamedServer>,
    /// The files that were read.
    pub searched: Vec<PathBuf>,
    /// Files that exist but could not be used, with why.
    pub broken: Vec<(PathBuf, String)>,
    /// Names the files offer (when nothing was found), to suggest.
    pub names: Vec<String>,
}

/// The files searched for server names when no file is given, in order.
pub fn search_paths() -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from(".mcp.json"), PathBuf::from("mcp.json")];
    let home = dirs::home_dir();
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    if let Some(xdg) = &xdg {
        paths.push(xdg.join("mcp").join("mcp.json"));
    }
    if let Some(config) = dirs::config_dir() {
        paths.push(config.join("Claude").join("claude_desktop_config.json"));
    }
    if let Some(home) = &home {
        paths.push(home.join(".cursor").join("mcp.json"));
    }
    paths.push(PathBuf::from(".vscode").join("mcp.json"));
    paths
}

/// Looks `name` up in `explicit` (which must exist and parse), or else in the default
/// search path (where missing files are skipped and broken ones reported).
pub fn lookup(name: &str, explicit: Option<&Path>) -> Result<Lookup, String> {
    let Some(path) = explicit else { return lookup_in(name, &search_paths()) };
    let file = load(path).map_err(|e| format!("config file {}: {e}", path.display()))?;
    let mut lookup = Lookup { searched: vec![path.to_path_buf()], ..Lookup::default() };
    match file.servers.get(name) {
        Some(entry) => lookup.found = Some(file.server(name, entry)?),
        None => lookup.names = file.servers.keys().cloned().collect(),
    }
    Ok(lookup)
}

fn lookup_in(name: &str, paths: &[PathBuf]) -> Result<Lookup, String> {
    let mut lookup = Lookup::default();
    for path in paths {
        if !path.is_file() {
            continue;
        }
        lookup.searched.push(path.clone());
        let file = match load(path) {
            Ok(f) => f,
            Err(e) => {
                lookup.broken.push((path.clone(), e));
                continue;
            }
        };
        if let Some(entry) = file.servers.get(name) {
            lookup.found = Some(file.server(name, entry)?);
            return Ok(lookup);
        }
        lookup.names.extend(file.servers.keys().cloned());
    }
    Ok(lookup)
}

/// A parsed config file.
#[derive(Debug)]
pub struct ConfigFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its servers, by name, as written.
    pub servers: Map<String, Value>,
}

/// Reads a config file: JSON with comments and trailing commas allowed, the servers under
/// `mcpServers` or `servers`.
pub fn load(path: &Path) -> Result<ConfigFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse(path, &text)
}

/// Parses a config file's text.
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, String> {
    let value: Value = serde_json::from_str(&strip_jsonc(text)).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(mut top) = value else { return Err("not a JSON object".into()) };
    let servers = match top.remove("mcpServers").or_else(|| top.remove("servers")) {
        Some(Value::Object(s)) => s,
        Some(_) => return Err("`mcpServers` is not an object".into()),
        None => return Err("no `mcpServers` (or VS Code `servers`) object".into()),
    };
    Ok(ConfigFile { path: path.to_path_buf(), servers })
}

impl ConfigFile {
    /// The directory `${workspaceFolder}` and relative `cwd`s are taken from: the directory
    /// of the file, or its parent for a file inside `.vscode`.
    fn base_dir(&self) -> PathBuf {
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        if dir.file_name().is_some_and(|n| n == ".vscode") {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        } else {
            dir
        }
    }

    /// Decodes the entry of server `name`.
    pub fn server(&self, name: &str, entry: &Value) -> Result<NamedServer, String> {
        let here = format!("config file {}, server `{name}`", self.path.display());
        let spec = self.spec(entry).map_err(|e| format!("{here}: {e}"))?;
        Ok(NamedServer { name: name.to_owned(), file: self.path.clone(), spec })
    }

    fn spec(&self, entry: &Value) -> Result<ServerSpec, String> {
        let Value::Object(entry) = entry else { return Err("not an object".into()) };
        let base = self.base_dir();
        let expand = |s: &str| expand_vars(s, &base);
        let string = |key: &str| -> Result<Option<String>, String> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => expand(s).map(Some),
                Some(_) => Err(format!("`{key}` is not a string")),
            }
        };
        let map = |key: &str| -> Result<Vec<(String, String)>, String> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => Ok((k.clone(), expand(s)?)),
                        Value::Number(n) => Ok((k.clone(), n.to_string())),
                        Value::Bool(b) => Ok((k.clone(), b.to_string())),
                        _ => Err(format!("`{key}.{k}` is not a string")),
                    })
                    .collect(),
                Some(_) => Err(format!("`{key}` is not an object")),
            }
        };
        let kind = string("type")?.or(string("transport")?).unwrap_or_default().to_ascii_lowercase();
        if let Some(url) = string("url")?.or(string("serverUrl")?) {
            return Ok(ServerSpec::Http { url, headers: map("headers")?, sse: kind == "sse" });
        }
        let Some(command) = string("command")? else {
            return Err("has neither `command` nor `url`".into());
        };
        let mut args = match entry.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    Value::String(s) => expand(s),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err("`args` holds something that is not a string".to_owned()),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`args` is not an array".into()),
        };
        // A whole command line written into `command` (no `args`), as some people do.
        let mut command = command;
        if args.is_empty() && command.contains(char::is_whitespace) && !Path::new(&command).exists() {
            let line = mcpwire_transport::child::ChildCommand::parse(&command)
                .map_err(|e| format!("`command`: {}", mcpwire_protocol::error::chain(&e)))?;
            args = line.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
            command = line.get_program().to_string_lossy().into_owned();
        }
        let cwd = string("cwd")?.map(|c| {
            let p = PathBuf::from(c);
            if p.is_relative() {
                base.join(p)
            } else {
                p
            }
        });
        Ok(ServerSpec::Stdio { command, args, env: map("env")?.into_iter().collect(), cwd })
    }
}

/// Expands `${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${userHome}` and
/// `${workspaceFolder}`; anything else in `${…}` (VS Code's `${input:…}`, say) is an error,
/// as is an unset variable without a default.
pub fn expand_vars(s: &str, workspace: &Path) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let value = match name {
            "workspaceFolder" => Some(workspace.display().to_string()),
            "userHome" => dirs::home_dir().map(|h| h.display().to_string()),
            _ => {
                let var = name.strip_prefix("env:").unwrap_or(name);
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("`${{{inner}}}` cannot be filled in by mcp (only environment variables)"));
                }
                std::env::var(var).ok()
            }
        };
        match value.or_else(|| default.map(str::to_owned)) {
            Some(v) => out.push_str(&v),
            None => return Err(format!("`${{{inner}}}` is used but {name} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Removes `//` and `/* */` comments and trailing commas from JSON text (JSONC, as VS Code
/// writes it), leaving strings alone.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                out.push(c);
                i += 1;
                while i < chars.len() {
                    out.push(chars[i]);
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        out.push(chars[i + 1]);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    if chars[i - 1] == '"' {
                        break;
                    }
                }
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
                out.push(' ');
            }
            ',' => {
                // A comma followed (after blanks and comments) by a closing bracket is dropped.
                let mut j = i + 1;
                loop {
                    while j < chars.len() && chars[j].is_whitespace() {
                        j += 1;
                    }
                    if chars.get(j) == Some(&'/') && chars.get(j + 1) == Some(&'/') {
                        while j < chars.len() && chars[j] != '\n' {
                            j += 1;
                        }
                    } else if chars.get(j) == Some(&'/') && chars.get(j + 1) == Some(&'*') {
                        j += 2;
                        while j < chars.len() && !(chars[j] == '*' && chars.get(j + 1) == Some(&'/')) {
                            j += 1;
                        }
                        j += 2;
                    } else {
                        break;
                    }
                }
                if !matches!(chars.get(j), Some('}') | Some(']')) {
                    out.push(c);
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let text = r#"{
            // a comment with "quotes"
            "servers": { /* block */ "a": {"command": "x // not a comment", "args": ["1", "2",],}, },
        }"#;
        let v: Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
        assert_eq!(v, json!({"servers": {"a": {"command": "x // not a comment", "args": ["1", "2"]}}}));
        assert_eq!(strip_jsonc(r#"{"a": "b\"//c"}"#), r#"{"a": "b\"//c"}"#);
    }

    #[test]
    fn entries_decode_in_every_dialect() {
        std::env::set_var("MCP_CLI_TEST_TOKEN", "t0k");
        let file = parse(
            Path::new("/proj/.vscode/mcp.json"),
            r#"{"servers": {
                "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${workspaceFolder}"],
                       "env": {"TOKEN": "${env:MCP_CLI_TEST_TOKEN}", "N": 3}, "cwd": "sub"},
                "remote": {"type": "sse", "url": "https://example.com/sse", "headers": {"Authorization": "Bearer ${MCP_CLI_TEST_TOKEN}"}},
                "line": {"command": "npx -y server-everything"},
                "bad": {"args": []},
                "unset": {"command": "x", "args": ["${MCP_CLI_SURELY_UNSET_VAR}"]},
                "defaulted": {"command": "x", "args": ["${MCP_CLI_SURELY_UNSET_VAR:-dflt}"]}
            }}"#,
        )
        .unwrap();
        let get = |n: &str| file.server(n, &file.servers[n]);
        assert_eq!(
            get("fs").unwrap().spec,
            ServerSpec::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-fs".into(), "/proj".into()],
                env: BTreeMap::from([("N".into(), "3".into()), ("TOKEN".into(), "t0k".into())]),
                cwd: Some(PathBuf::from("/proj/sub")),
            }
        );
        assert_eq!(
            get("remote").unwrap().spec,
            ServerSpec::Http {
                url: "https://example.com/sse".into(),
                headers: vec![("Authorization".into(), "Bearer t0k".into())],
                sse: true
            }
        );
        assert!(matches!(get("line").unwrap().spec, ServerSpec::Stdio { command, args, .. }
            if command == "npx" && args == ["-y", "server-everything"]));
        assert!(get("bad").unwrap_err().contains("neither `command` nor `url`"));
        assert!(get("unset").unwrap_err().contains("MCP_CLI_SURELY_UNSET_VAR is not set"));
        assert!(matches!(get("defaulted").unwrap().spec, ServerSpec::Stdio { args, .. } if args == ["dflt"]));
        assert!(expand_vars("${input:key}", Path::new("/")).is_err());
        assert!(parse(Path::new("x"), "[]").is_err());
        assert!(parse(Path::new("x"), "{}").unwrap_err().contains("mcpServers"));
    }
}
