//! What a server offers: tools, resources, templates, prompts, each with its handler.
//!
//! Registries are changed at runtime as freely as at start-up: a dynamic set is the normal
//! case. Every change is announced on a broadcast channel whose changes each connection's
//! engine turns into what its client is to hear.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use mcpwire_protocol::engine::cursor::{CursorCodec, CursorError};
use mcpwire_protocol::types::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool,
};
use mcpwire_protocol::uri_template::UriTemplate;
use parking_lot::RwLock;

use super::validation::ToolSchemas;
use crate::context::Context;
use crate::error::{AskError, HandlerError, HandlerResult};
use crate::scopes::Scopes;
use mcpwire_protocol::ProtocolVersion;

/// A tool handler: arguments in, result out.
pub type ToolHandler =
    Arc<dyn Fn(JsonObject, Context) -> BoxFuture<'static, HandlerResult<CallToolResult>> + Send + Sync>;
/// A resource handler: the URI in, contents out.
pub type ResourceHandler =
    Arc<dyn Fn(String, Context) -> BoxFuture<'static, HandlerResult<ReadResourceResult>> + Send + Sync>;
/// A template handler: the URI and its variables in, contents out.
pub type TemplateHandler = Arc<
    dyn Fn(String, HashMap<String, String>, Context) -> BoxFuture<'static, HandlerResult<ReadResourceResult>>
        + Send
        + Sync,
>;
/// A prompt handler: argument values in, messages out.
pub type PromptHandler =
    Arc<dyn Fn(BTreeMap<String, String>, Context) -> BoxFuture<'static, HandlerResult<GetPromptResult>> + Send + Sync>;
/// Completes one argument of a prompt or variable of a template: the partial value and the
/// other arguments already chosen in, candidate values out.
pub type CompleterFn = Arc<
    dyn Fn(String, BTreeMap<String, String>, Context) -> BoxFuture<'static, HandlerResult<Vec<String>>> + Send + Sync,
>;

/// How one argument is completed.
#[derive(Clone)]
pub enum Completer {
    /// From fixed values: those that start with the partial value.
    Values(Vec<String>),
    /// By a function, which chooses (and filters) the values itself.
    Handler(CompleterFn),
}

impl Completer {
    /// The candidates for `value` (`others`: the other arguments already chosen).
    pub(crate) async fn complete(
        &self,
        value: &str,
        others: BTreeMap<String, String>,
        ctx: Context,
    ) -> HandlerResult<Vec<String>> {
        match self {
            Self::Values(values) => Ok(values.iter().filter(|v| v.starts_with(value)).cloned().collect()),
            Self::Handler(f) => f(value.to_owned(), others, ctx).await,
        }
    }
}

/// A completion handler.
pub type CompletionHandler =
    Arc<dyn Fn(CompleteParams, Context) -> BoxFuture<'static, HandlerResult<CompleteResult>> + Send + Sync>;

/// Wraps an async closure as a boxed handler.
pub(crate) fn boxed1<A, T, F, Fut>(
    f: F,
) -> Arc<dyn Fn(A, Context) -> BoxFuture<'static, HandlerResult<T>> + Send + Sync>
where
    F: Fn(A, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<T>> + Send + 'static,
{
    Arc::new(move |a, ctx| Box::pin(f(a, ctx)))
}

/// A registered tool.
pub struct ToolEntry {
    /// Its definition.
    pub tool: Tool,
    /// Its handler.
    pub handler: ToolHandler,
    /// The scopes a principal needs to see and call it.
    pub scopes: Scopes,
    /// Its schemas, compiled.
    schemas: ToolSchemas,
}

impl ToolEntry {
    /// A tool and its handler; its schemas are compiled now.
    pub(crate) fn new(tool: Tool, handler: ToolHandler, scopes: Scopes) -> Self {
        let schemas = ToolSchemas::compile(&tool);
        Self { tool, handler, scopes, schemas }
    }

    /// Runs the handler on arguments that fit the input schema, and checks its structured
    /// result against the output schema. Invalid arguments and the tool's own failures become
    /// results with `isError` (the model sees them; invalid arguments are `-32602` before
    /// 2025-11-25); a result that breaks the output schema is replaced by a tool error and
    /// logged; protocol errors stay errors.
    pub(crate) async fn call(
        self: Arc<Self>,
        mut arguments: JsonObject,
        ctx: Context,
    ) -> HandlerResult<CallToolResult> {
        let rev = ctx.revision();
        let name = &self.tool.name;
        if let Err(problems) = self.schemas.check_input(&mut arguments) {
            return invalid_arguments(rev, format!("Invalid arguments for tool {name}: {problems}"));
        }
        match (self.handler)(arguments, ctx).await {
            Ok(result) => match self.schemas.check_output(&result) {
                Ok(()) => Ok(result),
                Err(problems) => {
                    tracing::error!(tool = %name, "the tool's result does not fit its output schema, so a tool error is sent instead: {problems}");
                    Ok(CallToolResult::error(format!(
                        "Tool {name} returned a result that does not fit its output schema: {problems}"
                    )))
                }
            },
            Err(HandlerError::Tool(message)) => Ok(CallToolResult::error(message)),
            Err(HandlerError::InvalidArguments(message)) => invalid_arguments(rev, message),
            // A question the client cannot be asked is the tool's failure: the model sees it.
            Err(HandlerError::Ask(e @ AskError::Unsupported(_))) => Ok(CallToolResult::error(e.to_string())),
            // So is a task the client ran for a question and never ended, or cancelled.
            Err(HandlerError::Ask(e)) if e.is_client_task_expired() || e.is_client_task_cancelled() => {
                Ok(CallToolResult::error(e.to_string()))
            }
            Err(other) => Err(other),
        }
    }
}

/// Invalid tool arguments, as the request's revision answers them.
fn invalid_arguments(rev: ProtocolVersion, message: String) -> HandlerResult<CallToolResult> {
    match rev.tool_input_errors_are_results() {
        true => Ok(CallToolResult::error(message)),
        false => Err(HandlerError::InvalidArguments(message)),
    }
}

/// A registered resource.
#[derive(Clone)]
pub struct ResourceEntry {
    /// Its definition.
    pub resource: Resource,
    /// Its handler.
    pub handler: ResourceHandler,
    /// The scopes a principal needs to see and read it.
    pub scopes: Scopes,
}

/// A registered resource template.
#[derive(Clone)]
pub struct TemplateEntry {
    /// Its definition.
    pub template: ResourceTemplate,
    /// The parsed URI template.
    pub parsed: UriTemplate,
    /// Its handler.
    pub handler: TemplateHandler,
    /// Completers of its variables, by variable name.
    pub completions: HashMap<String, Completer>,
    /// The scopes a principal needs to see it and read what it matches.
    pub scopes: Scopes,
}

/// A registered prompt.
#[derive(Clone)]
pub struct PromptEntry {
    /// Its definition.
    pub prompt: Prompt,
    /// Its handler.
    pub handler: PromptHandler,
    /// Completers of its arguments, by argument name.
    pub completions: HashMap<String, Completer>,
    /// The scopes a principal needs to see and get it.
    pub scopes: Scopes,
}

/// The entries of a [`Registry`], by name. Hashed with foldhash rather than SipHash: the keys
/// are the names the server registered (its code's, or in a gateway those of the upstream
/// servers it was configured with), not its clients'. A lookup by a name a client chose cannot
/// make entries collide: resistance to chosen keys buys nothing here, where every call looks
/// a name up.
pub type Entries<T> = IndexMap<String, T, foldhash::fast::RandomState>;

/// An ordered, concurrently readable map of entries by name (insertion order is list order).
pub struct Registry<T> {
    entries: RwLock<Entries<T>>,
}

impl<T: Clone> Default for Registry<T> {
    fn default() -> Self {
        Self { entries: RwLock::new(Entries::default()) }
    }
}

impl<T: Clone> Registry<T> {
    /// Adds or replaces an entry; returns whether the list changed.
    pub fn insert(&self, key: String, entry: T) -> bool {
        let mut map = self.entries.write();
        map.insert(key, entry);
        true
    }

    /// Removes an entry; returns whether it was there.
    pub fn remove(&self, key: &str) -> bool {
        let mut map = self.entries.write();
        map.shift_remove(key).is_some()
    }

    /// One entry.
    pub fn get(&self, key: &str) -> Option<T> {
        self.entries.read().get(key).cloned()
    }

    /// Runs `f` over the entries in order, under the read lock.
    pub fn with_all<R>(&self, f: impl FnOnce(&Entries<T>) -> R) -> R {
        f(&self.entries.read())
    }

    /// One page of the entries, mapped by `f`, and the cursor of the next page.
    pub fn page<R>(
        &self,
        cursors: &CursorCodec,
        cursor: Option<&str>,
        page_size: usize,
        f: impl Fn(&T) -> R,
    ) -> Result<(Vec<R>, Option<String>), CursorError> {
        self.with_all(|map| {
            let (range, next) = cursors.page(map.keys().map(String::as_str), map.len(), cursor, page_size)?;
            Ok((map[range].values().map(f).collect(), next))
        })
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.read().len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
