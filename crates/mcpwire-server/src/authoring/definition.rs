//! A tool, resource or prompt ready to register, and the traits by which typed handlers
//! (what the macros make) become one.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use mcpwire_protocol::types::{
    CallToolResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};

use crate::apps::{AppError, AppTool};
use crate::context::Context;
use crate::error::HandlerResult;
use crate::scopes::Scopes;
use crate::server::registry::{boxed1, Completer, PromptHandler, ResourceHandler, TemplateHandler, ToolHandler};

/// A tool and its handler, ready to register ([`crate::ServerBuilder::tool`],
/// [`crate::Server::register_tool`]).
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: ToolHandler,
    pub(crate) scopes: Scopes,
    /// What makes it an app tool ([`ToolDef::app`]), written into `_meta` when registered.
    pub(crate) app: Option<AppTool>,
}

impl ToolDef {
    /// A tool with a handler of its raw arguments. Arguments are validated against
    /// `tool.input_schema` before the handler runs.
    pub fn new<F, Fut>(tool: Tool, handler: F) -> Self
    where
        F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CallToolResult>> + Send + 'static,
    {
        Self { tool, handler: boxed1(handler), scopes: Scopes::default(), app: None }
    }

    /// The OAuth scopes a caller's token must grant, all of them, to see the tool listed and
    /// to call it (see [`Scopes`]).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// The scopes the tool needs.
    pub fn scopes(&self) -> &[String] {
        self.scopes.as_slice()
    }

    /// The tool's definition.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }

    /// The tool's definition, to change (a name prefix, say) before it is registered.
    pub fn definition_mut(&mut self) -> &mut Tool {
        &mut self.tool
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish_non_exhaustive()
    }
}

/// Something that is a tool: a [`ToolDef`], such as `add_tool()` returns (the function that
/// `#[tool]` adds beside `fn add`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "`#[tool] fn add` is registered by the function the macro adds beside it: `.tool(add_tool())`; the methods of a `#[tools]` impl block are registered with `.tools(value)`"
)]
pub trait IntoToolDef {
    /// The tool and its handler.
    fn into_tool_def(self) -> ToolDef;
}

impl IntoToolDef for ToolDef {
    fn into_tool_def(self) -> ToolDef {
        self
    }
}

/// A value whose methods are tools: what `#[tools]` implements for the type of an impl
/// block. The handlers share the value.
pub trait ToolSet: Send + Sync + 'static {
    /// Every tool of the set, each calling its method on `self`.
    fn tool_defs(self: Arc<Self>) -> Vec<ToolDef>;
}

/// A [`ToolSet`], owned or shared (`T` or `Arc<T>`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a set of tools",
    label = "not a `#[tools]` type",
    note = "put `#[tools]` on an impl block of the type whose methods are marked `#[tool]`"
)]
pub trait IntoToolSet<Marker> {
    /// The tools.
    fn into_tool_defs(self) -> Vec<ToolDef>;
}

#[doc(hidden)]
pub enum Owned {}
#[doc(hidden)]
pub enum Shared {}

impl<T: ToolSet> IntoToolSet<Owned> for T {
    fn into_tool_defs(self) -> Vec<ToolDef> {
        Arc::new(self).tool_defs()
    }
}

impl<T: ToolSet> IntoToolSet<Shared> for Arc<T> {
    fn into_tool_defs(self) -> Vec<ToolDef> {
        self.tool_defs()
    }
}

/// A resource (fixed URI) or a resource template, and its handler, ready to register.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) kind: ResourceKind,
    pub(crate) scopes: Scopes,
    /// For an app resource, what its build-time checks found.
    pub(crate) app_check: Option<Result<(), AppError>>,
}

#[derive(Clone)]
pub(crate) enum ResourceKind {
    Fixed(Resource, ResourceHandler),
    Template(ResourceTemplate, TemplateHandler, HashMap<String, Completer>),
}

impl ResourceDef {
    /// A resource with a fixed URI; the handler gets the URI.
    pub fn fixed<F, Fut>(resource: Resource, handler: F) -> Self
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        Self { kind: ResourceKind::Fixed(resource, boxed1(handler)), scopes: Scopes::default(), app_check: None }
    }

    /// A resource template; the handler gets the URI and its variables.
    pub fn template<F, Fut>(template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, HashMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        let handler: TemplateHandler = Arc::new(move |uri, vars, ctx| Box::pin(handler(uri, vars, ctx)));
        Self {
            kind: ResourceKind::Template(template, handler, HashMap::new()),
            scopes: Scopes::default(),
            app_check: None,
        }
    }

    /// Completion values of a template variable (`completion/complete`: those that start
    /// with what the user typed); nothing for a fixed resource.
    pub fn with_completions(self, variable: &str, values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.with_completer(variable, Completer::Values(values.into_iter().map(Into::into).collect()))
    }

    /// Completes a template variable with `complete(value, others, ctx)`: the partial value,
    /// the other variables already chosen; it returns the candidates (filtered by itself).
    pub fn complete_with<F, Fut>(self, variable: &str, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<Vec<String>>> + Send + 'static,
    {
        self.with_completer(variable, completer(complete))
    }

    fn with_completer(mut self, variable: &str, completer: Completer) -> Self {
        if let ResourceKind::Template(_, _, completions) = &mut self.kind {
            completions.insert(variable.to_owned(), completer);
        }
        self
    }

    /// The OAuth scopes a client's token must grant, all of them, to see the resource (or
    /// template) listed and to read it (see [`Scopes`]).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// The scopes the resource needs.
    pub fn scopes(&self) -> &[String] {
        self.scopes.as_slice()
    }

    /// Marks an app resource, with what its checks found.
    pub(crate) fn with_app_check(mut self, check: Result<(), AppError>) -> Self {
        self.app_check = Some(check);
        self
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &str {
        match &self.kind {
            ResourceKind::Fixed(r, _) => &r.uri,
            ResourceKind::Template(t, _, _) => &t.uri_template,
        }
    }
}

impl fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceDef").field("uri", &self.uri()).finish_non_exhaustive()
    }
}

/// Something that is a resource: a [`ResourceDef`], such as `note_resource()` returns (the
/// function that `#[resource(..)]` adds beside `fn note`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource",
    label = "not a resource",
    note = "`#[resource(\"uri or template\")] fn note` is registered by the function the macro adds beside it: `.resource(note_resource())`"
)]
pub trait IntoResourceDef {
    /// The resource and its handler.
    fn into_resource_def(self) -> ResourceDef;
}

impl IntoResourceDef for ResourceDef {
    fn into_resource_def(self) -> ResourceDef {
        self
    }
}

/// A prompt and its handler, ready to register.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: PromptHandler,
    pub(crate) completions: HashMap<String, Completer>,
    pub(crate) scopes: Scopes,
}

impl PromptDef {
    /// A prompt with a handler of its raw arguments (required ones are checked before).
    pub fn new<F, Fut>(prompt: Prompt, handler: F) -> Self
    where
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<GetPromptResult>> + Send + 'static,
    {
        Self { prompt, handler: boxed1(handler), completions: HashMap::new(), scopes: Scopes::default() }
    }

    /// Completion values of an argument (`completion/complete`: those that start with what
    /// the user typed).
    pub fn with_completions(mut self, argument: &str, values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let values = values.into_iter().map(Into::into).collect();
        self.completions.insert(argument.to_owned(), Completer::Values(values));
        self
    }

    /// Completes an argument with `complete(value, others, ctx)`: the partial value, the
    /// other arguments already chosen; it returns the candidates (filtered by itself).
    pub fn complete_with<F, Fut>(mut self, argument: &str, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<Vec<String>>> + Send + 'static,
    {
        self.completions.insert(argument.to_owned(), completer(complete));
        self
    }

    /// The OAuth scopes a client's token must grant, all of them, to see the prompt listed
    /// and to get it (see [`Scopes`]).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// The scopes the prompt needs.
    pub fn scopes(&self) -> &[String] {
        self.scopes.as_slice()
    }

    /// The prompt's definition.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef").field("prompt", &self.prompt).finish_non_exhaustive()
    }
}

fn completer<F, Fut>(complete: F) -> Completer
where
    F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Vec<String>>> + Send + 'static,
{
    Completer::Handler(Arc::new(move |value, others, ctx| Box::pin(complete(value, others, ctx))))
}

/// Something that is a prompt: a [`PromptDef`], such as `review_prompt()` returns (the
/// function that `#[prompt]` adds beside `fn review`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt",
    label = "not a prompt",
    note = "`#[prompt] fn review` is registered by the function the macro adds beside it: `.prompt(review_prompt())`"
)]
pub trait IntoPromptDef {
    /// The prompt and its handler.
    fn into_prompt_def(self) -> PromptDef;
}

impl IntoPromptDef for PromptDef {
    fn into_prompt_def(self) -> PromptDef {
        self
    }
}
