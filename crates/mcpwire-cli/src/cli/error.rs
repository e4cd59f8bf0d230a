//! How a client command fails: one line for the user and an exit code from a fixed table.
//!
//! | Code | Meaning |
//! |------|---------|
//! | 0 | success |
//! | 1 | the tool reported an error (`isError: true`) |
//! | 2 | usage: a bad command line, an unknown server name, tool or prompt, an argument that does not fit the schema, input the server asked for that the command line did not provide |
//! | 3 | connection: the server could not be started or reached, or it exited or closed the connection |
//! | 4 | protocol: the server answered with a JSON-RPC error or with something that is not MCP |
//! | 5 | timeout: the server did not answer in time (`--timeout`) |
//! | 130 | interrupted (Ctrl-C) |

use std::fmt;
use std::process::ExitCode;

use mcpwire_client::ClientError;
use mcpwire_protocol::error::MISSING_REQUIRED_CLIENT_CAPABILITY;
use serde_json::Value;

/// The exit codes of the client commands (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Ok = 0,
    /// 1: the tool reported an error.
    ToolError = 1,
    /// 2: usage or a bad argument.
    Usage = 2,
    /// 3: the server could not be started or reached, or went away.
    Connection = 3,
    /// 4: the server answered with an error or with something that is not MCP.
    Protocol = 4,
    /// 5: no answer in time.
    Timeout = 5,
    /// 130: interrupted.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// A failed client command: what to tell the user (one line) and how to exit.
#[derive(Debug, Clone)]
pub struct CliError {
    /// The exit code.
    pub exit: Exit,
    /// The message, without the `mcp: ` prefix.
    pub message: String,
}

impl CliError {
    /// An error with an exit code and a message.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self { exit, message: message.into() }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, message)
    }

    /// A connection error (exit 3).
    pub fn connection(message: impl Into<String>) -> Self {
        Self::new(Exit::Connection, message)
    }

    /// A protocol error (exit 4).
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::new(Exit::Protocol, message)
    }

    /// Prefixes the message with what was being done.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Folds a message onto one line: newlines and runs of blanks become single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub use mcpwire_protocol::error::chain;

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        let exit = match &e {
            ClientError::Closed | ClientError::Spawn(_) | ClientError::Io(_) => Exit::Connection,
            _ if e.code() == Some(mcpwire_transport::http::TRANSPORT_ERROR) => Exit::Connection,
            ClientError::Timeout { .. } => Exit::Timeout,
            ClientError::InvalidArguments(_) => Exit::Usage,
            // The server asked for input the command line was not told how to give.
            ClientError::Handler { .. } => Exit::Usage,
            _ if e.code() == Some(MISSING_REQUIRED_CLIENT_CAPABILITY) => Exit::Usage,
            _ => Exit::Protocol,
        };
        let message = match &e {
            ClientError::Protocol { method, error } if error.code == MISSING_REQUIRED_CLIENT_CAPABILITY => {
                let needed: Vec<String> = match error.data.as_ref().and_then(|d| d.get("requiredCapabilities")) {
                    Some(Value::Object(o)) => o.keys().cloned().collect(),
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    _ => Vec::new(),
                };
                let hint = if needed.iter().any(|n| n == "roots") || error.message.contains("roots") {
                    "; pass --root PATH to offer roots"
                } else {
                    ""
                };
                format!("{method}: {}{hint}", one_line(&error.message))
            }
            ClientError::Closed => "the server closed the connection".to_owned(),
            ClientError::Timeout { method, timeout } => {
                format!("{method}: no answer within {} (--timeout)", human_duration(*timeout))
            }
            ClientError::Protocol { method, error } if error.code == mcpwire_transport::http::TRANSPORT_ERROR => {
                format!("{method}: {}", one_line(&error.message))
            }
            ClientError::Protocol { method, error } => {
                format!("{method}: the server answered with an error: {}", one_line(&error.to_string()))
            }
            ClientError::Handler { method, error } => {
                format!("could not answer the server's {method}: {}", one_line(&error.message))
            }
            other => one_line(&chain(other)),
        };
        Self::new(exit, message)
    }
}

/// A duration as people write it: `500ms`, `3s`, `1.5s`.
pub fn human_duration(d: std::time::Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn client_errors_map_to_the_table() {
        assert_eq!(CliError::from(ClientError::Closed).exit, Exit::Connection);
        let t = CliError::from(ClientError::Timeout { method: "tools/call".into(), timeout: Duration::from_secs(2) });
        assert_eq!(t.exit, Exit::Timeout);
        assert_eq!(t.message, "tools/call: no answer within 2s (--timeout)");
        let p = CliError::from(ClientError::Protocol {
            method: "tools/call".into(),
            error: mcpwire_client::ErrorObject::invalid_params("Unknown tool:\n nope"),
        });
        assert_eq!(p.exit, Exit::Protocol);
        assert!(!p.message.contains('\n'));
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(human_duration(Duration::from_millis(200)), "200ms");
    }

    #[test]
    fn a_client_error_is_told_with_its_sources() {
        // The client error's text says what failed, its source why: the line has both.
        let json = serde_json::from_str::<u32>(r#""x""#).unwrap_err();
        let expected = format!("cannot decode the answer to tools/list: {json}");
        let d = CliError::from(ClientError::Decode { method: "tools/list".into(), detail: None, source: Some(json) });
        assert_eq!((d.exit, d.message.as_str()), (Exit::Protocol, expected.as_str()));
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let expected = format!("cannot start ./server: {io}");
        let child = mcpwire_transport::child::ChildError::Spawn { program: "./server".into(), source: io };
        let s = CliError::from(ClientError::from(child));
        assert_eq!((s.exit, s.message.as_str()), (Exit::Connection, expected.as_str()));
        // Without a source, the text alone.
        let n = CliError::from(ClientError::Negotiation("the server answered 1999-01-01".into()));
        assert_eq!(n.message, "protocol negotiation failed: the server answered 1999-01-01");
    }
}
