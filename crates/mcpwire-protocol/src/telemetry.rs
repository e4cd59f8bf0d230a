//! The vocabulary of the OpenTelemetry semantic conventions for MCP, spelled once for the
//! server's and the client's spans and metrics: attribute names, metric names, bucket
//! boundaries, and a request's span name and target.

use std::fmt;

use crate::message::ClientRequest;
use crate::Method;

/// `mcp.method.name`: the request's method.
pub const METHOD_NAME: &str = "mcp.method.name";
/// `mcp.protocol.version`: the request's revision.
pub const PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// `gen_ai.tool.name`: the tool of `tools/call`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.prompt.name`: the prompt of `prompts/get`.
pub const PROMPT_NAME: &str = "gen_ai.prompt.name";
/// `gen_ai.operation.name`: [`EXECUTE_TOOL`] for `tools/call`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `error.type`: the JSON-RPC error code, or [`TOOL_ERROR`].
pub const ERROR_TYPE: &str = "error.type";
/// The `gen_ai.operation.name` of a tool call.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// The `error.type` of a tool call whose result is an error (`isError: true`).
pub const TOOL_ERROR: &str = "tool_error";

/// The server's operation-duration histogram.
pub const SERVER_DURATION: &str = "mcp.server.operation.duration";
/// The client's operation-duration histogram.
pub const CLIENT_DURATION: &str = "mcp.client.operation.duration";
/// The bucket boundaries the conventions advise for the duration histograms, in seconds.
pub const DURATION_BOUNDARIES: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The low-cardinality target of a request: its attribute and value (the tool of
/// `tools/call`, the prompt of `prompts/get`).
pub fn target(request: &ClientRequest) -> Option<(&'static str, &str)> {
    match request {
        ClientRequest::CallTool(call) => Some((TOOL_NAME, call.name.as_str())),
        ClientRequest::GetPrompt(get) => Some((PROMPT_NAME, get.name.as_str())),
        _ => None,
    }
}

/// A request's span name, `{mcp.method.name} {target}`, or the method alone without a target.
pub struct SpanName<'a> {
    method: Method,
    target: Option<&'a str>,
}

impl<'a> SpanName<'a> {
    /// The span name of `request`.
    pub fn of(request: &'a ClientRequest) -> Self {
        Self { method: request.method(), target: target(request).map(|(_, name)| name) }
    }
}

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {target}", self.method),
            None => f.write_str(self.method.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CallToolParams, PaginatedParams};

    #[test]
    fn span_names_have_a_target_for_tools_and_prompts_only() {
        let call = ClientRequest::CallTool(CallToolParams { name: "echo".into(), arguments: None, task: None });
        assert_eq!(SpanName::of(&call).to_string(), "tools/call echo");
        assert_eq!(target(&call), Some((TOOL_NAME, "echo")));
        let list = ClientRequest::ListTools(PaginatedParams { cursor: None });
        assert_eq!(SpanName::of(&list).to_string(), "tools/list");
        assert_eq!(target(&list), None);
    }
}
