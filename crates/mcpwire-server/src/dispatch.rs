//! The requests the application serves, each from the registries. (Whether a method exists
//! in the request's revision and is offered was decided by the engine before; `ping`,
//! `server/discover`, `logging/setLevel`, subscriptions and listen streams it answers itself.)

use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::{
    CompleteParams, CompleteResult, Completion, CompletionReference, GetPromptParams, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedParams, ResourceParams,
};

use crate::answer::Answer;
use crate::context::Context;
use crate::error::HandlerError;
use crate::refusal::Refusal;
use crate::scopes::Scopes;
use crate::server::Server;
use crate::tasks::{self, ToolPlan};

/// Serves one request. A tool's arguments are taken out of `request` unless `keep` says the
/// request may be needed afterwards (a multi-round request is fingerprinted when it asks the
/// client).
pub(crate) async fn dispatch(server: &Server, request: &mut ClientRequest, ctx: &Context, keep: bool) -> Answer {
    let inner = &server.inner;
    let page_size = inner.config.page_size;
    let answer = |r: Result<ServerResult, Refusal>| Answer::from(r);
    let principal = ctx.principal();
    // Lists show what the principal may use; a page may come out short (its cursor leads on).
    let permitted = |scopes: &Scopes| scopes.permit(principal);
    if let Some(refused) = server.refuse_scope(request, principal) {
        return Answer::Refused(refused);
    }
    match request {
        ClientRequest::CallTool(call) => {
            let Some(entry) = inner.tools.get(&call.name) else {
                return Answer::Refused(Refusal::UnknownTool(call.name.clone()));
            };
            let arguments = match keep {
                true => call.arguments.clone(),
                false => call.arguments.take(),
            };
            let arguments = arguments.unwrap_or_default();
            let plan = tasks::plan_tool_call(inner.tasks.as_ref(), ctx.scope(), &entry.tool, call.task.as_ref());
            match plan {
                Err(e) => Answer::Refused(e),
                Ok(ToolPlan::Inline) => {
                    Answer::of(entry.call(arguments, ctx.clone()).await.map(ServerResult::CallTool))
                }
                // The task paths are boxed: their futures are large, and the common path of a
                // plain call should not carry (and move) their size.
                Ok(ToolPlan::LegacyTask(ttl)) => match &inner.tasks {
                    Some(runtime) => {
                        answer(Box::pin(tasks::start_tool_task(runtime, ctx, entry, arguments, ttl)).await)
                    }
                    None => Answer::Refused(Refusal::TasksDisabled),
                },
                Ok(ToolPlan::Modern(support)) => match &inner.tasks {
                    Some(runtime) => Box::pin(tasks::run_modern_tool(runtime, ctx, entry, arguments, support)).await,
                    None => Answer::Refused(Refusal::TasksDisabled),
                },
            }
        }
        ClientRequest::ListTools(PaginatedParams { cursor }) => answer(
            inner
                .tools
                .page(&inner.cursors, cursor.as_deref(), page_size, |e| permitted(&e.scopes).then(|| e.tool.clone()))
                .map(|(tools, next_cursor)| {
                    let tools = tools.into_iter().flatten().collect();
                    ServerResult::ListTools(ListToolsResult { tools, next_cursor })
                })
                .map_err(Refusal::Cursor),
        ),
        ClientRequest::ListResources(PaginatedParams { cursor }) => answer(
            inner
                .resources
                .page(&inner.cursors, cursor.as_deref(), page_size, |e| {
                    permitted(&e.scopes).then(|| e.resource.clone())
                })
                .map(|(resources, next_cursor)| {
                    let resources = resources.into_iter().flatten().collect();
                    ServerResult::ListResources(ListResourcesResult { resources, next_cursor })
                })
                .map_err(Refusal::Cursor),
        ),
        ClientRequest::ListResourceTemplates(PaginatedParams { cursor }) => answer(
            inner
                .templates
                .page(&inner.cursors, cursor.as_deref(), page_size, |e| {
                    permitted(&e.scopes).then(|| e.template.clone())
                })
                .map(|(resource_templates, next_cursor)| {
                    let resource_templates = resource_templates.into_iter().flatten().collect();
                    ServerResult::ListResourceTemplates(ListResourceTemplatesResult { resource_templates, next_cursor })
                })
                .map_err(Refusal::Cursor),
        ),
        ClientRequest::ReadResource(ResourceParams { uri }) => {
            let read = if let Some(entry) = inner.resources.get(uri) {
                (entry.handler)(uri.clone(), ctx.clone()).await
            } else {
                let found = inner.templates.with_all(|items| {
                    items.values().find_map(|t| t.parsed.matches(uri).map(|vars| (t.handler.clone(), vars)))
                });
                match found {
                    Some((handler, vars)) => handler(uri.clone(), vars, ctx.clone()).await,
                    None => Err(HandlerError::ResourceNotFound(uri.clone())),
                }
            };
            Answer::of(read.map(ServerResult::ReadResource))
        }
        ClientRequest::ListPrompts(PaginatedParams { cursor }) => answer(
            inner
                .prompts
                .page(&inner.cursors, cursor.as_deref(), page_size, |e| permitted(&e.scopes).then(|| e.prompt.clone()))
                .map(|(prompts, next_cursor)| {
                    let prompts = prompts.into_iter().flatten().collect();
                    ServerResult::ListPrompts(ListPromptsResult { prompts, next_cursor })
                })
                .map_err(Refusal::Cursor),
        ),
        ClientRequest::GetPrompt(GetPromptParams { name, arguments }) => {
            let Some(entry) = inner.prompts.get(name) else {
                return Answer::Refused(Refusal::UnknownPrompt(name.clone()));
            };
            let arguments = arguments.clone().unwrap_or_default();
            let missing: Vec<String> = entry
                .prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
                .map(|a| a.name.clone())
                .collect();
            if !missing.is_empty() {
                return Answer::Refused(Refusal::MissingArguments { prompt: name.clone(), missing });
            }
            Answer::of((entry.handler)(arguments, ctx.clone()).await.map(ServerResult::GetPrompt))
        }
        ClientRequest::Complete(params) => Box::pin(complete(server, params, ctx)).await,
        ClientRequest::GetTask(_)
        | ClientRequest::TaskResult(_)
        | ClientRequest::ListTasks(_)
        | ClientRequest::CancelTask(_)
        | ClientRequest::UpdateTask(_) => answer(Box::pin(tasks::dispatch(server, &*request, ctx)).await),
        ClientRequest::Initialize(_)
        | ClientRequest::Ping
        | ClientRequest::Discover
        | ClientRequest::SetLevel(_)
        | ClientRequest::Subscribe(_)
        | ClientRequest::Unsubscribe(_)
        | ClientRequest::Listen(_) => Answer::Refused(Refusal::EngineMethod(request.method())),
    }
}

/// `completion/complete`: the custom handler, or the values registered with the prompt or
/// template.
async fn complete(server: &Server, params: &CompleteParams, ctx: &Context) -> Answer {
    let inner = &server.inner;
    let custom = inner.completion.read().clone();
    if let Some(handler) = custom {
        return match handler(params.clone(), ctx.clone()).await {
            Ok(result) => Answer::Result(ServerResult::Complete(result)),
            Err(e) => Answer::Refused(Refusal::Handler(e)),
        };
    }
    let completer = match &params.reference {
        CompletionReference::Prompt { name } => match inner.prompts.get(name) {
            Some(p) => p.completions.get(&params.argument.name).cloned(),
            None => return Answer::Refused(Refusal::UnknownPrompt(name.clone())),
        },
        CompletionReference::Resource { uri } => match inner.templates.get(uri) {
            Some(t) => t.completions.get(&params.argument.name).cloned(),
            None => return Answer::Refused(Refusal::UnknownTemplate(uri.clone())),
        },
    };
    let values = match completer {
        None => Vec::new(),
        Some(completer) => {
            let others = params.context.as_ref().and_then(|c| c.arguments.clone()).unwrap_or_default();
            match completer.complete(&params.argument.value, others, ctx.clone()).await {
                Ok(values) => values,
                Err(e) => return Answer::Refused(Refusal::Handler(e)),
            }
        }
    };
    Answer::Result(ServerResult::Complete(CompleteResult { completion: Completion::from_values(values) }))
}
