//! Typed calls for every client-to-server method.

use std::collections::{BTreeMap, HashSet};

use mcp_protocol::jsonrpc;
use mcp_protocol::types::{
    CallToolResult, CompleteParams, CompleteResult, DiscoverResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ProgressParams, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, Tool,
};
use mcp_protocol::Era;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::error::ClientError;
use crate::notification::ServerNotification;
use crate::session::{result_type, ClientSession};

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

fn cursor_params(cursor: Option<String>) -> Option<Value> {
    cursor.map(|c| json!({ "cursor": c }))
}

impl ClientSession {
    fn require_era(&self, method: &str, era: Era) -> Result<(), ClientError> {
        if self.era() == era {
            Ok(())
        } else {
            Err(ClientError::Unsupported { method: method.to_owned(), version: self.protocol_version() })
        }
    }

    async fn list_all<P: Page>(&self, method: &str) -> Result<Vec<P::Item>, ClientError> {
        let max_pages = self.shared().config.max_pages;
        let mut items = Vec::new();
        let mut cursor = None;
        let mut seen = HashSet::new();
        for _ in 0..max_pages {
            let page: P = self.call(method, cursor_params(cursor.take())).await?;
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
        self.call("tools/list", cursor_params(cursor)).await
    }

    /// Every tool, following `nextCursor` to the end (at most the client's page bound).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListToolsResult>("tools/list").await
    }

    /// Calls a tool. `arguments` is a JSON object, or `null` for none. A tool's own failure
    /// is a result with `is_error: Some(true)`, not an error. In the modern era,
    /// `input_required` rounds are answered with the registered handlers.
    pub async fn call_tool(&self, name: impl Into<String>, arguments: Value) -> Result<CallToolResult, ClientError> {
        let mut params = json!({ "name": name.into() });
        match arguments {
            Value::Null => {}
            Value::Object(args) => params["arguments"] = Value::Object(args),
            other => {
                return Err(ClientError::InvalidArguments(format!("tool arguments must be a JSON object, not {other}")))
            }
        }
        let result = self.call_with_input_value("tools/call", params).await?;
        // A 2026-07-28 server may answer with a task (the client declared the extension):
        // followed to its end here, so that the caller gets the tool's result either way.
        self.finish_tool_call(result).await
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
        self.call("resources/list", cursor_params(cursor)).await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResourcesResult>("resources/list").await
    }

    /// One page of resource templates (`resources/templates/list`).
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.call("resources/templates/list", cursor_params(cursor)).await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplatesResult>("resources/templates/list").await
    }

    /// Reads a resource (`resources/read`), answering `input_required` rounds.
    pub async fn read_resource(&self, uri: impl Into<String>) -> Result<ReadResourceResult, ClientError> {
        self.call_with_input("resources/read", json!({ "uri": uri.into() })).await
    }

    /// Subscribes to a resource's updates (`resources/subscribe`, legacy era; in the modern
    /// era use [`Self::listen`]). Updates arrive as [`ServerNotification::ResourceUpdated`].
    pub async fn subscribe(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.require_era("resources/subscribe", Era::Legacy)?;
        let _: Value = self.call("resources/subscribe", Some(json!({ "uri": uri.into() }))).await?;
        Ok(())
    }

    /// Ends a subscription (`resources/unsubscribe`, legacy era).
    pub async fn unsubscribe(&self, uri: impl Into<String>) -> Result<(), ClientError> {
        self.require_era("resources/unsubscribe", Era::Legacy)?;
        let _: Value = self.call("resources/unsubscribe", Some(json!({ "uri": uri.into() }))).await?;
        Ok(())
    }

    /// One page of prompts (`prompts/list`).
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, ClientError> {
        self.call("prompts/list", cursor_params(cursor)).await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPromptsResult>("prompts/list").await
    }

    /// Gets a prompt filled with `arguments` (`prompts/get`), answering `input_required`
    /// rounds.
    pub async fn get_prompt(
        &self,
        name: impl Into<String>,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = json!({ "name": name.into() });
        if !arguments.is_empty() {
            params["arguments"] = json!(arguments);
        }
        self.call_with_input("prompts/get", params).await
    }

    /// Asks for completions of an argument (`completion/complete`).
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        let params = serde_json::to_value(params).map_err(|e| ClientError::InvalidArguments(e.to_string()))?;
        self.call("completion/complete", Some(params)).await
    }

    /// Checks that the server answers: `ping` in the legacy era; in the modern era, where
    /// `ping` no longer exists, a `server/discover` round trip.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            self.discover().await.map(|_| ())
        } else {
            let _: Value = self.call("ping", None).await?;
            Ok(())
        }
    }

    /// Asks a modern server what it supports (`server/discover`); the session's view of
    /// the server's capabilities and instructions is refreshed from the answer.
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        self.require_era("server/discover", Era::Modern)?;
        let discovered: DiscoverResult = self.call("server/discover", None).await?;
        let mut refreshed = discovered.clone();
        refreshed.extra.retain(|k, _| k == "_meta");
        self.adopt_modern(self.protocol_version(), refreshed);
        Ok(discovered)
    }

    /// Sends any request and returns its raw result. In the modern era `_meta` is added
    /// (the caller's own `_meta` members are kept) and `-32022` is retried once; the
    /// result is returned as is, `resultType` included (no `input_required` handling).
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        let shared = self.shared();
        let progress = self.options.progress.clone().map(|cb| shared.register_progress(cb));
        let result = self.send_request(method, params, progress.as_ref().map(|g| g.token())).await?;
        // Validates resultType: an unknown value is an invalid result (a task is known when
        // the client declared the tasks extension).
        let declared_task = shared.config.tasks && crate::tasks::is_task_result(&result);
        if self.era() == Era::Modern && !declared_task {
            result_type(method, &result)?;
        }
        Ok(result)
    }

    /// Sends any notification, as is.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.shared().send(jsonrpc::encode_notification(method, params.as_ref())).await
    }

    /// Tells a legacy server that the client's roots changed
    /// (`notifications/roots/list_changed`; removed in 2026-07-28).
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        self.require_era("notifications/roots/list_changed", Era::Legacy)?;
        self.notify("notifications/roots/list_changed", None).await
    }

    /// A receiver of the server's notifications from now on: log messages, list changes,
    /// resource updates, progress of calls without a progress callback, and anything
    /// unknown. Notifications of a listen stream go to that stream instead. A receiver
    /// that falls more than 1024 notifications behind loses the oldest (it is told so).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.shared().notifications.subscribe()
    }
}
