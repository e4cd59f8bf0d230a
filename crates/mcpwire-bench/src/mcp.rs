//! The JSON-RPC messages the harness sends, and the checks on what comes back: the `echo`
//! tool call in both protocol eras, the legacy handshake, and Server-Sent Events parsing.

use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;

/// The legacy revision the harness asks for in `initialize` (rmcp and the other SDKs accept it).
pub const LEGACY_VERSION: &str = "2025-06-18";
/// The modern, stateless revision.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The `clientInfo` name the harness sends.
pub const CLIENT_NAME: &str = "mcpwire-bench";
/// The tool every benchmark calls.
pub const TOOL: &str = "echo";

/// Whether `version` is a modern (stateless, 2026-07-28 or later) revision. Revisions are
/// ISO dates, so they compare as strings.
pub fn is_modern(version: &str) -> bool {
    version >= MODERN_VERSION
}

/// The text a call sends: unique per client and call, so a stale or crossed answer is caught.
pub fn echo_text(client: usize, seq: u64) -> String {
    format!("bench-{client}-{seq}")
}

/// An `initialize` request asking for `version`.
pub fn initialize(id: u64, version: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        }
    })
    .to_string()
}

/// The `notifications/initialized` notification.
pub fn initialized() -> &'static str {
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
}

/// A legacy-era `tools/call` of the echo tool `tool` (no `_meta`).
pub fn echo_call_legacy(id: u64, text: &str, tool: &str) -> String {
    let text = json_string(text);
    let tool = json_string(tool);
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{tool},"arguments":{{"text":{text}}}}}}}"#
    )
}

/// A modern-era `tools/call` of `echo`: `params._meta` carries the protocol version, the
/// client's capabilities and its `clientInfo`, as `mcpwire-client` sends them on 2026-07-28.
pub fn echo_call_modern(id: u64, text: &str, version: &str, tool: &str) -> String {
    let text = json_string(text);
    let tool = json_string(tool);
    let version = json_string(version);
    let client = json_string(CLIENT_NAME);
    let client_version = json_string(env!("CARGO_PKG_VERSION"));
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{tool},"arguments":{{"text":{text}}},"#,
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":{version},"#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}},"#,
            r#""io.modelcontextprotocol/clientInfo":{{"name":{client},"version":{client_version}}}}}}}}}"#
        ),
        id = id,
        tool = tool,
        text = text,
        version = version,
        client = client,
        client_version = client_version
    )
}

/// `tools/call` of `echo` in the shape `version` wants.
pub fn echo_call(id: u64, text: &str, version: &str) -> String {
    echo_call_of(id, text, version, TOOL)
}

/// `tools/call` of the echo tool named `tool` (a gateway's prefixed one, say) in the shape
/// `version` wants.
pub fn echo_call_of(id: u64, text: &str, version: &str, tool: &str) -> String {
    if is_modern(version) {
        echo_call_modern(id, text, version, tool)
    } else {
        echo_call_legacy(id, text, tool)
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    result: Option<EchoResult<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct EchoResult<'a> {
    #[serde(default, borrow)]
    content: Vec<Block<'a>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// Checks one JSON-RPC message against the `echo` call `id` that sent `text`:
/// `Ok(true)` it is that call's correct answer, `Ok(false)` it is another message (a
/// notification, or an answer to another id), `Err` it is that call's answer but wrong.
pub fn check_echo(message: &str, id: u64, text: &str) -> Result<bool, String> {
    let reply: Reply = serde_json::from_str(message).map_err(|e| format!("not JSON-RPC ({e}): {}", clip(message)))?;
    if reply.method.is_some() || reply.id.as_ref().and_then(Value::as_u64) != Some(id) {
        return Ok(false);
    }
    if let Some(error) = reply.error {
        return Err(format!("JSON-RPC error: {}", clip(&error.to_string())));
    }
    let Some(result) = reply.result else { return Err(format!("no result: {}", clip(message))) };
    if result.is_error == Some(true) {
        return Err(format!("tool error: {}", clip(message)));
    }
    match result.content.first().and_then(|b| b.text.as_deref()) {
        Some(t) if t == text => Ok(true),
        _ => Err(format!("wrong echo (expected {text:?}): {}", clip(message))),
    }
}

/// Finds the answer to request `id` in a message: `Ok(Some(result))` for a success,
/// `Ok(None)` for another message, `Err` for an error answer.
pub fn find_result(message: &str, id: u64) -> Result<Option<Value>, String> {
    let value: Value = serde_json::from_str(message).map_err(|e| format!("not JSON ({e}): {}", clip(message)))?;
    if value.get("method").is_some() || value.get("id").and_then(Value::as_u64) != Some(id) {
        return Ok(None);
    }
    if let Some(error) = value.get("error") {
        return Err(format!("JSON-RPC error: {}", clip(&error.to_string())));
    }
    value.get("result").cloned().map(Some).ok_or_else(|| format!("no result: {}", clip(message)))
}

/// At most 300 characters of `s`, for error messages.
pub fn clip(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// An incremental Server-Sent Events parser that yields the `data` of each complete event.
/// Events with empty data (such as the priming event of 2025-11-25 servers) are dropped.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
}

impl SseParser {
    /// A parser with nothing buffered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the data of every event they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(nl) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let end = start + nl;
            let mut line = &self.pending[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            if line.is_empty() {
                self.dispatch(&mut out);
            } else if let Some(rest) = line.strip_prefix(b"data:") {
                let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(rest));
                self.has_data = true;
            } else if let Some(rest) = line.strip_prefix(b"id:") {
                let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                self.last_id = Some(String::from_utf8_lossy(rest).into_owned());
            } // `event:`, `retry:` and comments do not matter here.
            start = end + 1;
        }
        self.pending.drain(..start);
        out
    }

    /// The last event id seen (`id:`), for a resumption with `Last-Event-ID`.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Ends the stream: the data of an event left without its blank line, if any.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            out = self.push(b"\n");
        }
        self.dispatch(&mut out);
        out
    }

    fn dispatch(&mut self, out: &mut Vec<String>) {
        if self.has_data && !self.data.trim().is_empty() {
            out.push(std::mem::take(&mut self.data));
        }
        self.data.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_across_chunks() {
        let mut p = SseParser::new();
        // A priming event (id, empty data), a notification, then the answer split in two.
        assert!(p.push(b"id: 0\ndata:\n\n").is_empty());
        assert_eq!(p.last_id(), Some("0"));
        assert_eq!(p.push(b"event: message\r\ndata: {\"a\":1}\r\n\r\ndata: {\"b\""), vec!["{\"a\":1}"]);
        assert!(p.push(b":2}\n").is_empty());
        assert_eq!(p.push(b"\n"), vec!["{\"b\":2}"]);
        // Multi-line data joins with a newline; an unterminated event is delivered by finish.
        assert_eq!(p.push(b"data: x\ndata: y\n\n: comment\ndata: z"), vec!["x\ny"]);
        assert_eq!(p.finish(), vec!["z"]);
        assert!(p.finish().is_empty());
    }

    #[test]
    fn echo_checks() {
        let ok = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(check_echo(ok, 7, "hi"), Ok(true));
        assert_eq!(check_echo(ok, 8, "hi"), Ok(false));
        assert!(check_echo(ok, 7, "ho").unwrap_err().contains("wrong echo"));
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#;
        assert_eq!(check_echo(note, 7, "hi"), Ok(false));
        let err = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#;
        assert!(check_echo(err, 7, "hi").unwrap_err().contains("-32602"));
        let tool_err = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":true}}"#;
        assert!(check_echo(tool_err, 7, "hi").is_err());
        let escaped = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"b"}]}}"#;
        assert_eq!(check_echo(escaped, 7, "a\"b"), Ok(true));
        assert!(check_echo("nope", 7, "hi").is_err());
    }

    #[test]
    fn calls_are_valid_json_of_each_era() {
        let legacy: Value = serde_json::from_str(&echo_call(3, "a\"b", "2025-06-18")).unwrap();
        assert_eq!(legacy["params"]["arguments"]["text"], "a\"b");
        assert!(legacy["params"].get("_meta").is_none());
        let modern: Value = serde_json::from_str(&echo_call(4, "x", MODERN_VERSION)).unwrap();
        assert_eq!(modern["id"], 4);
        assert_eq!(modern["params"]["name"], "echo");
        let meta = &modern["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], MODERN_VERSION);
        assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], json!({}));
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], CLIENT_NAME);
        let init: Value = serde_json::from_str(&initialize(0, LEGACY_VERSION)).unwrap();
        assert_eq!(init["params"]["protocolVersion"], LEGACY_VERSION);
        assert!(is_modern("2026-07-28") && !is_modern("2025-11-25"));
    }

    #[test]
    fn find_result_matches_id() {
        let m = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(find_result(m, 0).unwrap().unwrap()["protocolVersion"], "2025-06-18");
        assert_eq!(find_result(m, 1), Ok(None));
        assert!(find_result(r#"{"jsonrpc":"2.0","id":0,"error":{"code":1}}"#, 0).is_err());
    }
}
