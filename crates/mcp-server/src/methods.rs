//! The MCP methods a server answers, each from the registries, gated by capability.

use std::sync::Arc;

use mcp_protocol::types::{
    CallToolResult, CompleteParams, CompleteResult, Completion, CompletionReference, DiscoverResult, GetPromptParams,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ListenParams,
    PaginatedParams, ResourceParams, SetLevelParams, TaskMetadata,
};
use mcp_protocol::{ErrorObject, ProtocolVersion, Request};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::connection::{ConnectionState, RequestScope};
use crate::context::Context;
use crate::error::{HandlerError, HandlerResult};
use crate::registry::ToolEntry;

type MethodResult = Result<Value, ErrorObject>;

fn params<T: DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    // Read in place: the params (a tool's arguments, say) are not copied first.
    let parsed = match &req.params {
        Some(v) => T::deserialize(v),
        None => T::deserialize(&Value::Object(serde_json::Map::new())),
    };
    parsed.map_err(|e| ErrorObject::invalid_params(format!("{}: {e}", req.method)))
}

fn to_value<T: Serialize>(v: T) -> MethodResult {
    serde_json::to_value(v).map_err(ErrorObject::internal)
}

fn not_offered(method: &str) -> ErrorObject {
    ErrorObject::method_not_found(method)
}

/// Maps a handler's error to the protocol error of the request's revision.
pub(crate) fn protocol_error(e: HandlerError, rev: ProtocolVersion) -> ErrorObject {
    match e {
        HandlerError::Protocol(e) => e,
        HandlerError::InputRequired => ErrorObject::internal("input required outside a multi-round request"),
        HandlerError::Tool(message) => ErrorObject::internal(message),
        HandlerError::ResourceNotFound(uri) => {
            ErrorObject::new(rev.resource_not_found_code(), format!("Resource not found: {uri}"))
                .with_data(json!({"uri": uri}))
        }
    }
}

/// The answer to a handler's outcome: its result, the `input_required` result of a
/// 2026-07-28 multi-round request, or the protocol error.
pub(crate) fn outcome<T: Serialize>(
    state: &ConnectionState,
    req: &Request,
    ctx: &Context,
    r: HandlerResult<T>,
    rev: ProtocolVersion,
) -> MethodResult {
    match r {
        Ok(v) => to_value(v),
        Err(HandlerError::InputRequired) => {
            let config = &state.server.inner.config;
            let expires = std::time::SystemTime::now()
                .checked_add(config.request_state_ttl)
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64)
                .unwrap_or(u64::MAX);
            let request = mcp_protocol::engine::request_state::request_fingerprint(&req.method, req.params.as_ref());
            ctx.input_required(&state.server.inner.sealer, expires, request)
                .ok_or_else(|| protocol_error(HandlerError::InputRequired, rev))
        }
        Err(e) => Err(protocol_error(e, rev)),
    }
}

fn page_error(e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::invalid_params(e)
}

/// What a method answered, before it is shaped for the revision and encoded.
pub(crate) enum Answer {
    /// Any result, in neutral JSON.
    Value(Value),
    /// A `tools/call` result, kept typed: most can be written out without a `Value` tree.
    ToolResult(CallToolResult),
}

/// `tools/call` params as dispatch needs them: `_meta` was read with the request's scope
/// and is not copied again.
#[derive(serde::Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(default)]
    task: Option<TaskMetadata>,
}

/// Answers one request whose scope has been established.
pub(crate) async fn dispatch(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
    ctx: &Context,
) -> Result<Answer, ErrorObject> {
    if req.method == "tools/call" {
        return call_tool(state, req, scope, ctx).await;
    }
    dispatch_value(state, req, scope, ctx).await.map(Answer::Value)
}

async fn call_tool(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
    ctx: &Context,
) -> Result<Answer, ErrorObject> {
    let inner = &state.server.inner;
    if !state.server.offers_tools() {
        return Err(not_offered(&req.method));
    }
    let p: CallParams = params(req)?;
    let entry =
        inner.tools.get(&p.name).ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {}", p.name)))?;
    let arguments = p.arguments.unwrap_or_default();
    use crate::tasks::ToolPlan;
    match crate::tasks::plan_tool_call(inner.tasks.as_ref(), scope, &entry.tool, p.task.as_ref())? {
        ToolPlan::Inline => match call_tool_handler(entry, arguments, ctx.clone()).await {
            Ok(result) => Ok(Answer::ToolResult(result)),
            Err(e) => outcome::<CallToolResult>(state, req, ctx, Err(e), scope.revision).map(Answer::Value),
        },
        ToolPlan::LegacyTask(ttl) => {
            crate::tasks::start_tool_task(state, req, scope, ctx, entry, arguments, ttl).await.map(Answer::Value)
        }
        ToolPlan::Modern(support) => {
            crate::tasks::run_modern_tool(state, req, scope, ctx, entry, arguments, support).await.map(Answer::Value)
        }
    }
}

/// Answers every method but `tools/call`.
async fn dispatch_value(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
    ctx: &Context,
) -> MethodResult {
    let server = &state.server;
    let inner = &server.inner;
    // Each method checks only the capability it needs: building them all is not free.
    let offered = |yes: bool| if yes { Ok(()) } else { Err(not_offered(&req.method)) };
    let rev = scope.revision;
    let page_size = inner.config.page_size;
    match req.method.as_str() {
        "ping" => Ok(json!({})),
        "server/discover" => {
            let modern_only = inner.config.modern_only;
            let supported = ProtocolVersion::ALL
                .iter()
                .rev()
                .filter(|v| v.is_modern() || !modern_only)
                .map(|v| v.as_str().to_owned())
                .collect();
            to_value(DiscoverResult {
                supported_versions: supported,
                capabilities: server.capabilities(),
                instructions: inner.instructions.clone(),
                extra: JsonObject::new(),
            })
        }
        "tools/list" => {
            offered(server.offers_tools())?;
            let p: PaginatedParams = params(req)?;
            let (tools, next_cursor) = inner
                .tools
                .page(&inner.cursors, p.cursor.as_deref(), page_size, |e| e.tool.clone())
                .map_err(page_error)?;
            to_value(ListToolsResult { tools, next_cursor })
        }
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" | "tasks/update" => {
            crate::tasks::dispatch(state, req, scope).await
        }
        "resources/list" => {
            offered(server.offers_resources())?;
            let p: PaginatedParams = params(req)?;
            let (resources, next_cursor) = inner
                .resources
                .page(&inner.cursors, p.cursor.as_deref(), page_size, |e| e.resource.clone())
                .map_err(page_error)?;
            to_value(ListResourcesResult { resources, next_cursor })
        }
        "resources/templates/list" => {
            offered(server.offers_resources())?;
            let p: PaginatedParams = params(req)?;
            let (resource_templates, next_cursor) = inner
                .templates
                .page(&inner.cursors, p.cursor.as_deref(), page_size, |e| e.template.clone())
                .map_err(page_error)?;
            to_value(ListResourceTemplatesResult { resource_templates, next_cursor })
        }
        "resources/read" => {
            offered(server.offers_resources())?;
            let p: ResourceParams = params(req)?;
            let read = if let Some(entry) = inner.resources.get(&p.uri) {
                (entry.handler)(p.uri.clone(), ctx.clone()).await
            } else {
                let found = inner.templates.with_all(|items| {
                    items.values().find_map(|t| t.parsed.matches(&p.uri).map(|vars| (t.handler.clone(), vars)))
                });
                match found {
                    Some((handler, vars)) => handler(p.uri.clone(), vars, ctx.clone()).await,
                    None => Err(HandlerError::ResourceNotFound(p.uri.clone())),
                }
            };
            outcome(state, req, ctx, read, rev)
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            // Subscriptions come with resources (see Server::capabilities).
            offered(server.offers_resources())?;
            let p: ResourceParams = params(req)?;
            let mut subs = state.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
            if req.method == "resources/subscribe" {
                subs.insert(p.uri);
            } else {
                subs.remove(&p.uri);
            }
            Ok(json!({}))
        }
        "prompts/list" => {
            offered(server.offers_prompts())?;
            let p: PaginatedParams = params(req)?;
            let (prompts, next_cursor) = inner
                .prompts
                .page(&inner.cursors, p.cursor.as_deref(), page_size, |e| e.prompt.clone())
                .map_err(page_error)?;
            to_value(ListPromptsResult { prompts, next_cursor })
        }
        "prompts/get" => {
            offered(server.offers_prompts())?;
            let p: GetPromptParams = params(req)?;
            let entry = inner
                .prompts
                .get(&p.name)
                .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {}", p.name)))?;
            let arguments = p.arguments.unwrap_or_default();
            let missing: Vec<&str> = entry
                .prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
                .map(|a| a.name.as_str())
                .collect();
            if !missing.is_empty() {
                return Err(ErrorObject::invalid_params(format!(
                    "prompt {} is missing required argument(s): {}",
                    p.name,
                    missing.join(", ")
                )));
            }
            let got = (entry.handler)(arguments, ctx.clone()).await;
            outcome(state, req, ctx, got, rev)
        }
        "completion/complete" => {
            // 2024-11-05 had no `completions` capability: there, having completions suffices.
            offered(server.offers_completions())?;
            let p: CompleteParams = params(req)?;
            let custom = inner.completion.read().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(handler) = custom {
                return handler(p, ctx.clone()).await.map_err(|e| protocol_error(e, rev)).and_then(to_value);
            }
            let candidates = match &p.reference {
                CompletionReference::Prompt { name } => inner
                    .prompts
                    .get(name)
                    .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?
                    .completions
                    .get(&p.argument.name)
                    .cloned(),
                CompletionReference::Resource { uri } => inner
                    .templates
                    .get(uri)
                    .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown resource template: {uri}")))?
                    .completions
                    .get(&p.argument.name)
                    .cloned(),
            };
            let values =
                candidates.unwrap_or_default().into_iter().filter(|v| v.starts_with(&p.argument.value)).collect();
            to_value(CompleteResult { completion: Completion::from_values(values) })
        }
        "logging/setLevel" => {
            offered(server.offers_logging())?;
            let p: SetLevelParams = params(req)?;
            *state.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(p.level);
            Ok(json!({}))
        }
        "subscriptions/listen" => {
            let p: ListenParams = params(req)?;
            Ok(state.listen(&req.id, p.notifications, &ctx.parts.outbound).await)
        }
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// Runs a tool's handler: arguments missing from its schema and the tool's own failures
/// become results with `isError` (the model sees them); protocol errors stay errors.
pub(crate) async fn call_tool_handler(
    entry: std::sync::Arc<ToolEntry>,
    arguments: JsonObject,
    ctx: Context,
) -> HandlerResult<CallToolResult> {
    if let Some(missing) = missing_required(&entry.tool.input_schema, &arguments) {
        return Ok(CallToolResult::error(format!(
            "Invalid arguments for tool {}: missing required argument(s): {missing}",
            entry.tool.name
        )));
    }
    match (entry.handler)(arguments, ctx).await {
        Err(HandlerError::Tool(message)) => Ok(CallToolResult::error(message)),
        other => other,
    }
}

/// Names the schema's required properties missing from the arguments, if any.
fn missing_required(schema: &JsonObject, arguments: &JsonObject) -> Option<String> {
    let missing: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| !arguments.contains_key(*name))
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}
