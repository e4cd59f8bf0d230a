//! Typed calls for every client-to-server method.

use std::collections::{BTreeMap, HashSet};

use mcpwire_protocol::codec::answer::{self, AnswerError, ResultType};
use mcpwire_protocol::engine::Reply;
use mcpwire_protocol::message::{ClientNotification, ClientRequest, ServerNotification};
use mcpwire_protocol::mismatch::{self, Mismatch};
use mcpwire_protocol::types::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, DiscoverResult, GetPromptParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedParams,
    ProgressParams, Prompt, ReadResourceResult, Resource, ResourceParams, ResourceTemplate, Tool, WRAPPED_RESULT,
};
use mcpwire_protocol::{Era, Method, Sender};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::driver::Outgoing;
use crate::error::ClientError;
use crate::mrtr::Ended;
use crate::reply::CallResult;
use crate::session::{unreadable, ClientSession};

/// A page of a list result.
pub(crate) trait Page: DeserializeOwned {
    type Item;
    fn into_parts(self) -> (Vec<Self::Item>, Option<String>);
}

impl Page for ListToolsResult {
    type Item = Tool;
    fn into_parts(self) -> (Vec<Tool>, Option<String>) {
        (self.tools, self.next_cursor)
    }
}

impl Page for ListResourcesResult {
    type Item = Resource;
    fn into_parts(self) -> (Vec<Resource>, Option<String>) {
        (self.resources, self.next_cursor)
    }
}

impl Page for ListResourceTemplatesResult {
    type Item = ResourceTemplate;
    fn into_parts(self) -> (Vec<ResourceTemplate>, Option<String>) {
        (self.resource_templates, self.next_cursor)
    }
}

impl Page for ListPromptsResult {
    type Item = Prompt;
    fn into_parts(self) -> (Vec<Prompt>, Option<String>) {
        (self.prompts, self.next_cursor)
    }
}

/// A list request's params.
fn page(cursor: Option<String>) -> PaginatedParams {
    PaginatedParams { cursor }
}

impl ClientSession {
    async fn list_all<P: Page + CallResult>(
        &self,
        list: fn(PaginatedParams) -> ClientRequest,
    ) -> Result<Vec<P::Item>, ClientError> {
        let max_pages = self.shared().config.max_pages;
        let method = list(page(None)).method().as_str();
        let mut items = Vec::new();
        let mut cursor = None;
        let mut seen = HashSet::new();
        for _ in 0..max_pages {
            let page: P = self.call(&list(page(cursor.take()))).await?;
            let (page_items, next) = page.into_parts();
            items.extend(page_items);
            match next {
                None => return Ok(items),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Pagination {
                            method: method.to_owned(),
                            detail: "the server repeated a cursor".into(),
                        });
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Pagination { method: method.to_owned(), detail: format!("more than {max_pages} pages") })
    }

    /// One page of tools (`tools/list`); `None` for the first.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        let first = cursor.is_none();
        let mut result: ListToolsResult = self.call(&ClientRequest::ListTools(page(cursor))).await?;
        self.learn_tools(&mut result.tools, first && result.next_cursor.is_none());
        Ok(result)
    }

    /// Every tool, following `nextCursor` to the end (at most the client's page bound).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = self.list_all::<ListToolsResult>(ClientRequest::ListTools).await?;
        self.learn_tools(&mut tools, true);
        Ok(tools)
    }

    /// Learns the header parameters (see `Shared::learn_tools`) and the output schemas of
    /// listed tools; `complete` when they are all of them.
    fn learn_tools(&self, tools: &mut Vec<Tool>, complete: bool) {
        self.shared().learn_tools(tools, |t| &t.name, |t| Some(&t.input_schema));
        self.shared().outputs.lock().learn(tools, complete);
    }

    /// Checks a tool's result against the output schema listed for it, listing the tools
    /// first when they were not (a server that cannot list them is not checked).
    async fn check_output(&self, tool: &str, result: &CallToolResult) -> Result<(), ClientError> {
        if !self.shared().config.validate_outputs || result.is_error == Some(true) {
            return Ok(());
        }
        let listed = self.shared().outputs.lock().is_listed();
        if !listed {
            if let Err(e) = self.list_all_tools().await {
                tracing::debug!(tool, "the tools could not be listed, so the result is not checked: {e}");
                return Ok(());
            }
        }
        let schema = self.shared().outputs.lock().get(tool);
        match schema {
            Some(schema) => crate::outputs::check(tool, &schema, result),
            None => Ok(()),
        }
    }

    /// Calls a tool. `arguments` is a JSON object, or `null` for none. A tool's own failure
    /// is a result with `is_error: Some(true)`, not an error. In the modern era,
    /// `input_required` rounds are answered with the registered handlers.
    ///
    /// A structured result is checked against the tool's output schema (the tools are
    /// listed first if they were not): one that does not fit is [`ClientError::InvalidOutput`].
    /// [`crate::ClientBuilder::validate_outputs`] turns this off.
    pub async fn call_tool(&self, name: impl Into<String>, arguments: Value) -> Result<CallToolResult, ClientError> {
        let request = ClientRequest::CallTool(call_params(name.into(), arguments)?);
        // A 2026-07-28 server may answer with a task (the client declared the extension):
        // followed to its end here, so that the caller gets the tool's result either way.
        let result = match self.call_with_input_answer(&request).await? {
            Ended::Result(result) => result,
            Ended::Task(created) => self.task_result(&created.task.task_id).await?,
        };
        if let ClientRequest::CallTool(call) = &request {
            self.check_output(&call.name, &result).await?;
        }
        Ok(result)
    }

    /// Calls a tool and reads its structured result as a `T`, checked against the tool's
    /// output schema first. A result without `structuredContent` (a server of a revision
    /// before 2025-06-18) is read from its first text block as JSON. A value the server
    /// wrapped as `{"result": value}` (its type is not an object) is read from `result` when
    /// it does not read as `T` whole. A tool that failed is [`ClientError::ToolFailed`].
    pub async fn call_tool_as<T: DeserializeOwned>(
        &self,
        name: impl Into<String>,
        arguments: Value,
    ) -> Result<T, ClientError> {
        let name = name.into();
        let result = self.call_tool(name.clone(), arguments).await?;
        let text = || result.content.iter().find_map(|c| c.as_text()).unwrap_or_default().to_owned();
        if result.is_error == Some(true) {
            return Err(ClientError::ToolFailed { tool: name, message: text() });
        }
        let method = Method::CallTool.as_str();
        let value = match result.structured_content {
            Some(value) => value,
            None => serde_json::from_str(&text()).map_err(|e| {
                let detail = format!("the result of tool {name} has no structuredContent, and its text is not JSON");
                ClientError::decode_json(method, Some(detail), e)
            })?,
        };
        let refused = |e: Mismatch| {
            let detail = format!("the result of tool {name} does not read as `{}`", short_type_name::<T>());
            ClientError::decode_json(method, Some(detail), e.into_json_error())
        };
        match mismatch::from_value::<T>(value.clone()) {
            Ok(typed) => Ok(typed),
            Err(whole) => match value {
                Value::Object(mut map) if map.len() == 1 && map.contains_key(WRAPPED_RESULT) => {
                    let inner = map.remove(WRAPPED_RESULT).unwrap_or_default();
                    mismatch::from_value(inner).map_err(refused)
                }
                _ => Err(refused(whole)),
            },
        }
    }

    /// Calls a tool, handing its progress notifications to `on_progress`.
    pub async fn call_tool_with_progress<F>(
        &self,
        name: impl Into<String>,
        arguments: Value,
        on_progress: F,
    ) -> Result<CallToolResult, ClientError>
    where
        F: Fn(ProgressParams) + Send + Sync + 'static,
    {
        self.with_progress(on_progress).call_tool(name, arguments).await
    }

    /// One page of resources (`resources/list`).
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, ClientError> {
        self.call(&ClientRequest::ListResources(page(cursor))).await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResourcesResult>(ClientRequest::ListResources).await
    }

    /// One page of resource templates (`resources/templates/list`).
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.call(&ClientRequest::ListResourceTemplates(page(cursor))).await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplatesResult>(ClientRequest::ListResourceTemplates).await
    }

    /// Reads a resource (`resources/read`), answering `input_required` rounds.
    pub async fn read_resource(&self, uri: impl Into<String>) -> Result<ReadResourceResult, ClientError> {
        self.call_with_input(&ClientRequest::ReadResource(ResourceParams { uri: uri.into() })).await
    }

    /// Subscribes to a resource's updates (`resources/subscribe`, legacy era; in the modern
    /// era use [`Self::listen`]). Updates arrive as [`ServerNotification::ResourceUpdated`].
    pub async fn subscribe(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        let _: IgnoredAny = self.call(&ClientRequest::Subscribe(ResourceParams { uri: uri.into() })).await?;
        Ok(())
    }

    /// Ends a subscription (`resources/unsubscribe`, legacy era).
    pub async fn unsubscribe(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        let _: IgnoredAny = self.call(&ClientRequest::Unsubscribe(ResourceParams { uri: uri.into() })).await?;
        Ok(())
    }

    /// One page of prompts (`prompts/list`).
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, ClientError> {
        self.call(&ClientRequest::ListPrompts(page(cursor))).await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPromptsResult>(ClientRequest::ListPrompts).await
    }

    /// Gets a prompt filled with `arguments` (`prompts/get`), answering `input_required`
    /// rounds.
    pub async fn get_prompt(
        &self,
        name: impl Into<String>,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let arguments = (!arguments.is_empty()).then_some(arguments);
        self.call_with_input(&ClientRequest::GetPrompt(GetPromptParams { name: name.into(), arguments })).await
    }

    /// Asks for completions of an argument (`completion/complete`).
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        self.call(&ClientRequest::Complete(params)).await
    }

    /// Checks that the server answers: `ping` in the legacy era; in the modern era, where
    /// `ping` no longer exists, a `server/discover` round trip.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            self.discover().await.map(|_| ())
        } else {
            let _: IgnoredAny = self.call(&ClientRequest::Ping).await?;
            Ok(())
        }
    }

    /// Asks a modern server what it supports (`server/discover`); the session's view of
    /// the server's capabilities and instructions is refreshed from the answer.
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        let discovered: DiscoverResult = self.call(&ClientRequest::Discover).await?;
        let mut refreshed = discovered.clone();
        refreshed.extra.retain(|k, _| k == "_meta");
        self.adopt_modern(refreshed);
        Ok(discovered)
    }

    /// Sends any request and returns its raw result. In the modern era `_meta` is added
    /// (the caller's own `_meta` members are kept) and `-32022` is retried once; the
    /// result is returned as is, `resultType` included (no `input_required` handling).
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        let reply = self.send_direct(Outgoing::Custom(method, params), None, Default::default()).await?;
        // Sent by name, a request's answer is not read for its kind by the engine.
        let Reply::Complete(raw) = reply else {
            return Err(ClientError::decode(method, "a request sent by name is answered with its result as it came"));
        };
        // An unknown resultType is an invalid result (a task is known when the client
        // declared the tasks extension). Named as called: a custom method has no Method.
        if self.era() == Era::Modern {
            match answer::result_type(&raw) {
                Ok(ResultType::Task) if !self.shared().config.tasks => {
                    return Err(unreadable(method, AnswerError::UnknownResultType(ResultType::Task.as_str().into())));
                }
                Ok(_) => {}
                Err(e) => return Err(unreadable(method, e)),
            }
        }
        if Method::parse(method) == Some(Method::ListTools) {
            // The tools' header parameters are learned from the typed list; the result is
            // returned as it came (a tool whose annotations are invalid is not learned).
            match mismatch::from_str::<ListToolsResult>(raw.get()) {
                Ok(mut listed) => self.shared().learn_tools(&mut listed.tools, |t| &t.name, |t| Some(&t.input_schema)),
                Err(e) => tracing::debug!("tools/list sent by name did not read as a tools list: {e}"),
            }
        }
        serde_json::from_str(raw.get()).map_err(|e| ClientError::decode_json(method, None, e))
    }

    /// Sends any notification, as is.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let notification = mcpwire_protocol::jsonrpc::Notification { method: method.to_owned(), params };
        self.shared().notify(&ClientNotification::Other(notification)).await
    }

    /// Tells a legacy server that the client's roots changed
    /// (`notifications/roots/list_changed`; removed in 2026-07-28).
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        let version = self.protocol_version();
        if !version.has_notification(Method::RootsListChanged, Sender::Client) {
            return Err(ClientError::Unsupported { method: Method::RootsListChanged.as_str().to_owned(), version });
        }
        self.shared().notify(&ClientNotification::RootsListChanged).await
    }

    /// A receiver of the server's notifications from now on: log messages, list changes,
    /// resource updates, progress of calls without a progress callback, and anything
    /// unknown. Notifications of a listen stream go to that stream instead. A receiver
    /// that falls more than 1024 notifications behind loses the oldest (it is told so).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.shared().notifications.subscribe()
    }
}

/// `tools/call` params from a tool's name and its arguments (a JSON object, or null for none).
pub(crate) fn call_params(name: String, arguments: Value) -> Result<CallToolParams, ClientError> {
    let arguments = match arguments {
        Value::Null => None,
        Value::Object(args) => Some(args),
        other => {
            return Err(ClientError::InvalidArguments(format!("tool arguments must be a JSON object, not {other}")))
        }
    };
    Ok(CallToolParams { name, arguments, task: None })
}

/// The name of `T` without its modules' paths: `Vec<Note>` for `alloc::vec::Vec<app::Note>`.
fn short_type_name<T: ?Sized>() -> String {
    let mut short = String::new();
    let mut word = String::new();
    let mut chars = std::any::type_name::<T>().chars().peekable();
    while let Some(c) = chars.next() {
        // `{{closure}}` is a segment too (a type declared in a closure or an async block).
        if c.is_alphanumeric() || matches!(c, '_' | '{' | '}') {
            word.push(c);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
        } else {
            short.push_str(&word);
            word.clear();
            short.push(c);
        }
    }
    short + &word
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn type_names_lose_their_paths() {
        struct Note;
        assert_eq!(short_type_name::<Note>(), "Note");
        assert_eq!(short_type_name::<Vec<(Note, String)>>(), "Vec<(Note, String)>");
        assert_eq!(short_type_name::<Option<u8>>(), "Option<u8>");
        let in_closure = || {
            struct Inside;
            short_type_name::<Inside>()
        };
        assert_eq!(in_closure(), "Inside");
    }
}
