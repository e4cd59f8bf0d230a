//! The output schemas of the server's tools, compiled when the tools are listed, against
//! which structured results are checked (the specification: clients SHOULD validate
//! structured results against the tool's output schema).

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::Validator;
use mcpwire_protocol::types::{CallToolResult, Tool};

use crate::error::ClientError;

/// What the client knows of the tools' output schemas.
#[derive(Default)]
pub(crate) struct OutputSchemas {
    /// Every tool was listed since the list last changed.
    listed: bool,
    /// The compiled output schema of each listed tool that has one.
    by_tool: HashMap<String, Arc<Validator>>,
}

impl OutputSchemas {
    /// Learns the output schemas of `tools`; `complete` when they are every tool.
    pub(crate) fn learn(&mut self, tools: &[Tool], complete: bool) {
        for tool in tools {
            let compiled = tool.output_schema.as_ref().and_then(|schema| {
                let schema = serde_json::Value::Object(schema.clone());
                jsonschema::validator_for(&schema)
                    .inspect_err(|e| {
                        tracing::warn!(tool = %tool.name, "the tool's output schema does not compile, so its results are not checked: {e}")
                    })
                    .ok()
            });
            match compiled {
                Some(v) => self.by_tool.insert(tool.name.clone(), Arc::new(v)),
                None => self.by_tool.remove(&tool.name),
            };
        }
        self.listed |= complete;
    }

    /// The tool list changed: what was learned may be stale.
    pub(crate) fn forget(&mut self) {
        self.listed = false;
        self.by_tool.clear();
    }

    /// Whether every tool was listed since the list last changed.
    pub(crate) fn is_listed(&self) -> bool {
        self.listed
    }

    /// The compiled output schema of `tool`, if it has one.
    pub(crate) fn get(&self, tool: &str) -> Option<Arc<Validator>> {
        self.by_tool.get(tool).cloned()
    }
}

/// Checks a tool's result against its output schema: a successful result must carry
/// `structuredContent` that fits it.
pub(crate) fn check(tool: &str, schema: &Validator, result: &CallToolResult) -> Result<(), ClientError> {
    if result.is_error == Some(true) {
        return Ok(());
    }
    let Some(value) = &result.structured_content else {
        return Err(ClientError::InvalidOutput {
            tool: tool.to_owned(),
            detail: "the tool has an output schema but its result has no structuredContent".to_owned(),
        });
    };
    if schema.is_valid(value) {
        return Ok(());
    }
    let problems: Vec<String> = schema
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().to_string();
            match path.trim_start_matches('/') {
                "" => e.to_string(),
                p => format!("`{}`: {e}", p.replace('/', ".")),
            }
        })
        .collect();
    Err(ClientError::InvalidOutput { tool: tool.to_owned(), detail: problems.join("; ") })
}
