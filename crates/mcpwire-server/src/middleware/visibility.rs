//! Visibility: which tools, resources and prompts a request may see and use, decided per
//! request (by the client, its revision, the application's state, later its principal).

use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures::future::{BoxFuture, FutureExt};
use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::{CompletionReference, Meta, Prompt, Resource, ResourceTemplate, Tool};
use tower::{Layer, Service};

use super::{McpRequest, McpResponse};
use crate::context::Context;
use crate::error::HandlerError;
use crate::refusal::{protocol_error, Refusal};
use crate::server::Server;

/// What a [`VisibilityLayer`] decides about.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Item<'a> {
    /// A tool.
    Tool(&'a Tool),
    /// A resource.
    Resource(&'a Resource),
    /// A resource template.
    Template(&'a ResourceTemplate),
    /// A prompt.
    Prompt(&'a Prompt),
}

impl Item<'_> {
    /// Its name (a template's and a resource's `name`, not their URI).
    pub fn name(&self) -> &str {
        match self {
            Self::Tool(t) => &t.name,
            Self::Resource(r) => &r.name,
            Self::Template(t) => &t.name,
            Self::Prompt(p) => &p.name,
        }
    }

    /// Its `_meta`: where tags of the application's own go.
    pub fn meta(&self) -> Option<&Meta> {
        match self {
            Self::Tool(t) => t.meta.as_ref(),
            Self::Resource(r) => r.meta.as_ref(),
            Self::Template(t) => t.meta.as_ref(),
            Self::Prompt(p) => p.meta.as_ref(),
        }
    }
}

/// The rule: whether `item` is shown to the request of this context.
type Rule = Arc<dyn Fn(&Context, Item<'_>) -> bool + Send + Sync>;

/// Shows each request only the tools, resources, templates and prompts a rule allows it,
/// and lets it use only those: the lists leave the others out, and a call of one that is
/// hidden is answered as if it did not exist (`tools/call`, `prompts/get`, `resources/read`,
/// `completion/complete`). The tools specification allows the list to vary with the
/// client, as it does with the authorization presented.
///
/// A list is filtered page by page: a page may hold fewer items than the page size, or none
/// (its `nextCursor` still leads on). `resources/subscribe` is answered by the engine, so
/// it does not reach the rule; what it subscribes to can still not be read.
///
/// ```
/// use mcpwire_server::middleware::{Item, VisibilityLayer};
///
/// // Tools tagged `"admin"` in their `_meta` only for clients that say they are the console.
/// let admin_only = VisibilityLayer::new(|ctx, item| {
///     let admin = item.meta().and_then(|m| m.get("tags")).is_some_and(|t| t.to_string().contains("\"admin\""));
///     !admin || ctx.client_info().is_some_and(|c| c.name == "console")
/// });
/// let server = mcpwire_server::Server::builder("demo", "1.0").layer(admin_only).build();
/// ```
#[derive(Clone)]
pub struct VisibilityLayer {
    rule: Rule,
}

impl VisibilityLayer {
    /// Shows what `rule` allows.
    pub fn new(rule: impl Fn(&Context, Item<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self { rule: Arc::new(rule) }
    }
}

impl std::fmt::Debug for VisibilityLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VisibilityLayer").finish_non_exhaustive()
    }
}

impl<S> Layer<S> for VisibilityLayer {
    type Service = Visibility<S>;

    fn layer(&self, inner: S) -> Visibility<S> {
        Visibility { inner, rule: self.rule.clone() }
    }
}

/// The service of a [`VisibilityLayer`].
#[derive(Clone)]
pub struct Visibility<S> {
    inner: S,
    rule: Rule,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Visibility<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Visibility").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl<S> Service<McpRequest> for Visibility<S>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let shown = |item: Item<'_>| (self.rule)(&request.context, item);
        if let Some(hidden) = hidden_target(&request.server, &request.message, shown) {
            let error = match hidden {
                Refusal::Handler(e) => protocol_error(e, request.revision()),
                other => other.into_error(request.revision()),
            };
            return futures::future::ready(Ok(McpResponse::Error(error))).boxed();
        }
        let (rule, context) = (self.rule.clone(), request.context.clone());
        self.inner
            .call(request)
            .map(move |answer| {
                let mut response = answer?;
                if let Some(result) = response.result_mut() {
                    filter(result, |item| rule(&context, item));
                }
                Ok(response)
            })
            .boxed()
    }
}

/// The refusal of a request that names something hidden: the one it would get if that did
/// not exist.
fn hidden_target(server: &Server, message: &ClientRequest, shown: impl Fn(Item<'_>) -> bool) -> Option<Refusal> {
    let inner = &server.inner;
    match message {
        ClientRequest::CallTool(call) => {
            let entry = inner.tools.get(&call.name)?;
            (!shown(Item::Tool(&entry.tool))).then(|| Refusal::UnknownTool(call.name.clone()))
        }
        ClientRequest::GetPrompt(p) => {
            let entry = inner.prompts.get(&p.name)?;
            (!shown(Item::Prompt(&entry.prompt))).then(|| Refusal::UnknownPrompt(p.name.clone()))
        }
        ClientRequest::ReadResource(r) => {
            let visible = match inner.resources.get(&r.uri) {
                Some(entry) => shown(Item::Resource(&entry.resource)),
                None => inner.templates.with_all(|items| {
                    items
                        .values()
                        .find(|t| t.parsed.matches(&r.uri).is_some())
                        .is_none_or(|t| shown(Item::Template(&t.template)))
                }),
            };
            (!visible).then(|| Refusal::Handler(HandlerError::ResourceNotFound(r.uri.clone())))
        }
        ClientRequest::Complete(c) => match &c.reference {
            CompletionReference::Prompt { name } => {
                let entry = inner.prompts.get(name)?;
                (!shown(Item::Prompt(&entry.prompt))).then(|| Refusal::UnknownPrompt(name.clone()))
            }
            CompletionReference::Resource { uri } => {
                let entry = inner.templates.get(uri)?;
                (!shown(Item::Template(&entry.template))).then(|| Refusal::UnknownTemplate(uri.clone()))
            }
        },
        _ => None,
    }
}

/// Leaves the hidden items out of a list result.
fn filter(result: &mut ServerResult, shown: impl Fn(Item<'_>) -> bool) {
    match result {
        ServerResult::ListTools(list) => list.tools.retain(|t| shown(Item::Tool(t))),
        ServerResult::ListResources(list) => list.resources.retain(|r| shown(Item::Resource(r))),
        ServerResult::ListResourceTemplates(list) => list.resource_templates.retain(|t| shown(Item::Template(t))),
        ServerResult::ListPrompts(list) => list.prompts.retain(|p| shown(Item::Prompt(p))),
        _ => {}
    }
}
