//! A reference server with a tool whose structured content does not fit the output schema it
//! lists, shared by the API and browser tests.

use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::middleware::McpResponse;
use serde_json::json;

/// The reference server, and `bad_sum`, which lists `{sum: number}` as its output schema and
/// answers `{sum: "three"}`.
///
/// The server checks a tool's structured content against the tool's own output schema (and
/// would answer a tool error), so the schema is added on the way out, to the `tools/list`
/// result, by a layer: the server never sees it, and the inspector alone checks it.
pub fn server_with_a_lying_tool() -> mcpwire_server::Server {
    let add_schema = tower::util::MapResponseLayer::new(|mut response: McpResponse| {
        if let Some(ServerResult::ListTools(list)) = response.result_mut() {
            for tool in list.tools.iter_mut().filter(|t| t.name == "bad_sum") {
                let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
                tool.output_schema = schema.as_object().cloned();
            }
        }
        response
    });
    let server = mcpwire_reference::server_from(mcpwire_reference::builder().layer(add_schema), false);
    let tool = Tool::new("bad_sum", "Says it gives a number, gives a string", json!({"type": "object"}));
    server.add_tool(tool, |_, _| async move {
        let mut result = CallToolResult::text("three");
        result.structured_content = Some(json!({"sum": "three"}));
        Ok(result)
    });
    server
}
