//! Fuzz targets: each takes arbitrary bytes, feeds them to one parser of untrusted input (or
//! to the server engine), and checks what must hold whatever the input. A target panics
//! only on a broken invariant (or a bug that panics on its own).
//!
//! `fuzz/` runs them under libFuzzer (`cargo +nightly fuzz run <target>`); the
//! `smoke` test runs each on its seeds and on mutations of them, briefly, on stable.

pub mod targets;

/// A fuzz target: arbitrary bytes in; it panics only on a broken invariant.
pub type Target = fn(&[u8]);

/// Every target, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("jsonrpc_decode", targets::jsonrpc_decode),
    ("codec_read", targets::codec_read),
    ("header_value", targets::header_value),
    ("sse_parser", targets::sse_parser),
    ("uri_template", targets::uri_template),
    ("cursor", targets::cursor),
    ("request_state", targets::request_state),
    ("bearer_challenge", targets::bearer_challenge),
    ("server_engine", targets::server_engine),
];

/// Inputs each target starts from: valid messages and values of its kind.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    let texts: &[&str] = match target {
        "jsonrpc_decode" | "codec_read" | "server_engine" => &[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":7}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no"}}"#,
        ],
        "header_value" => &["tools/call", "=?base64?4pyT?=", " leading", "=?base64?!!?=", "plain-ascii"],
        "sse_parser" => {
            &["event: message\ndata: {}\nid: 1\n\n", "data: a\r\ndata: b\r\n\r\nretry: 10\n\n", ": comment\n\n"]
        }
        "uri_template" => {
            &["notes://{id}\nnotes://7", "file:///{+path}{?q,limit}\nfile:///a/b?q=1", "x://{/a*}{.b:3}\nx:///1/2.abc"]
        }
        "cursor" => &["MTIz.abc", "", "AAAAAAAAAAAAAAAA.AAAA"],
        "request_state" => &["e30.AAAA", "not-a-state", ""],
        "bearer_challenge" => &[
            r#"Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="a b""#,
            r#"Bearer error="insufficient_scope", scope="x""#,
            "Basic realm=x, Bearer",
        ],
        _ => &[],
    };
    let mut seeds: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
    if target == "server_engine" {
        // Whole sessions, one message per line: calls, a repeated id, cancellations, and a
        // batch (2025-03-26) one of whose requests is cancelled.
        seeds.extend(SESSIONS.iter().map(|lines| lines.join("\n").into_bytes()));
    }
    seeds
}

/// Sessions the engine target starts from.
const SESSIONS: &[&[&str]] = &[
    &[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{},"_meta":{"progressToken":"p"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"no"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ],
    &[
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}},{"jsonrpc":"2.0","id":3,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
        r#"[{"jsonrpc":"2.0","id":4,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}]"#,
    ],
];
