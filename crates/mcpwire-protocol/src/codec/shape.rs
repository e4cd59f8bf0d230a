//! Shaping neutral JSON for one revision: what it lacks is dropped or turned into what it has,
//! what it requires is added.

use std::cell::RefCell;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, RequestId};
use crate::message::ServerResult;
use crate::method::Method;
use crate::revision::ProtocolVersion as V;
use crate::types::{
    meta_keys, result_type, CacheHint, CacheScope, CallToolResult, ContentBlock, Implementation, Meta, TASKS_EXTENSION,
};
use crate::ErrorObject;

type Object = Map<String, Value>;

/// Removes the members of `obj` that `rev` does not have: each rule is (member, first
/// revision that has it, last revision that has it).
fn strip(obj: &mut Object, rev: V, rules: &[(&str, V, V)]) {
    for (key, since, until) in rules {
        if rev < *since || rev > *until {
            obj.remove(*key);
        }
    }
}

const ANY: V = V::V2024_11_05;
/// The member of a request's params that asks for a task (2025-11-25).
const TASK: &str = "task";
const NOW: V = V::V2026_07_28;

fn for_each_object(value: Option<&mut Value>, mut f: impl FnMut(&mut Object)) {
    if let Some(Value::Array(items)) = value {
        for item in items {
            if let Value::Object(o) = item {
                f(o);
            }
        }
    }
}

fn shape_annotations(obj: &mut Object, rev: V) {
    if let Some(Value::Object(a)) = obj.get_mut("annotations") {
        strip(a, rev, &[("lastModified", V::V2025_06_18, NOW)]);
    }
}

/// Shapes an `Implementation` (client or server info).
pub fn shape_implementation(obj: &mut Object, rev: V) {
    strip(
        obj,
        rev,
        &[
            ("title", V::V2025_06_18, NOW),
            ("description", V::V2025_11_25, NOW),
            ("icons", V::V2025_11_25, NOW),
            ("websiteUrl", V::V2025_11_25, NOW),
        ],
    );
}

/// Shapes `ServerCapabilities`. `extensions` is 2026-07-28's member, yet it is written in every
/// revision: hosts of the legacy era negotiate extensions (MCP Apps) through it all the same
/// (the engine's `initialize` leaves it out for a client that declared none). The tasks
/// extension stays 2026-07-28's (before, tasks are the `tasks` capability).
pub fn shape_server_capabilities(obj: &mut Object, rev: V) {
    strip(obj, rev, &[("completions", V::V2025_03_26, NOW), ("tasks", V::V2025_11_25, V::V2025_11_25)]);
    if rev < NOW {
        if let Some(Value::Object(extensions)) = obj.get_mut("extensions") {
            extensions.remove(TASKS_EXTENSION);
        }
        if obj.get("extensions").is_some_and(|e| e.as_object().is_none_or(Map::is_empty)) {
            obj.remove("extensions");
        }
    }
}

fn shape_resource_contents(obj: &mut Object, rev: V) {
    strip(obj, rev, &[("_meta", V::V2025_06_18, NOW)]);
}

/// Describes a content block a revision cannot carry, as text it can.
fn downgrade_to_text(obj: &Object) -> Object {
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("content");
    let text = match kind {
        "audio" => format!(
            "[audio content ({}) not representable in this protocol revision]",
            obj.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type")
        ),
        "resource_link" => format!("[resource link: {}]", obj.get("uri").and_then(Value::as_str).unwrap_or("")),
        other => format!("[{other} content not representable in this protocol revision]"),
    };
    Object::from_iter([("type".into(), "text".into()), ("text".into(), text.into())])
}

/// Shapes one content block; blocks a revision lacks become text.
pub fn shape_content(obj: &mut Object, rev: V) {
    /// The kinds of content that need more than the common rules.
    enum Kind {
        Resource,
        ResourceLink,
        ToolResult,
        Other,
    }
    // Read once, without copying the tag: this runs for every content block sent.
    let (since, kind) = match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "audio" => (V::V2025_03_26, Kind::Other),
        "resource_link" => (V::V2025_06_18, Kind::ResourceLink),
        "tool_use" => (V::V2025_11_25, Kind::Other),
        "tool_result" => (V::V2025_11_25, Kind::ToolResult),
        "resource" => (ANY, Kind::Resource),
        _ => (ANY, Kind::Other),
    };
    if rev < since {
        *obj = downgrade_to_text(obj);
        return;
    }
    strip(obj, rev, &[("_meta", V::V2025_06_18, NOW)]);
    shape_annotations(obj, rev);
    match kind {
        Kind::Resource => {
            if let Some(Value::Object(r)) = obj.get_mut("resource") {
                shape_resource_contents(r, rev);
            }
        }
        Kind::ResourceLink => strip(obj, rev, &[("icons", V::V2025_11_25, NOW)]),
        Kind::ToolResult => for_each_object(obj.get_mut("content"), |c| shape_content(c, rev)),
        Kind::Other => {}
    }
}

fn shape_content_list(value: Option<&mut Value>, rev: V) {
    for_each_object(value, |c| shape_content(c, rev));
}

/// Shapes a `Tool`.
pub fn shape_tool(obj: &mut Object, rev: V) {
    strip(
        obj,
        rev,
        &[
            ("title", V::V2025_06_18, NOW),
            ("outputSchema", V::V2025_06_18, NOW),
            ("_meta", V::V2025_06_18, NOW),
            ("annotations", V::V2025_03_26, NOW),
            ("icons", V::V2025_11_25, NOW),
            ("execution", V::V2025_11_25, V::V2025_11_25),
        ],
    );
}

/// Shapes a `Task` (tasks exist in 2025-11-25, and in 2026-07-28 as the
/// `io.modelcontextprotocol/tasks` extension): 2025-11-25 names the timing members `ttl`
/// and `pollInterval` and has no inline outcome or questions; 2026-07-28 keeps the neutral
/// `ttlMs`/`pollIntervalMs` and the inline `result`, `error` and `inputRequests`.
pub fn shape_task(obj: &mut Object, rev: V) {
    if rev.is_modern() {
        return;
    }
    for (neutral, legacy) in [("ttlMs", "ttl"), ("pollIntervalMs", "pollInterval")] {
        if let Some(v) = obj.remove(neutral) {
            obj.insert(legacy.into(), v);
        }
    }
    for member in ["result", "error", "inputRequests"] {
        obj.remove(member);
    }
}

/// Shapes the content of a `CallToolResult` (also the payload of `tasks/result`).
fn shape_call_tool_result(obj: &mut Object, rev: V) {
    if rev < V::V2025_06_18 {
        if let Some(structured) = obj.remove("structuredContent") {
            let empty = obj.get("content").and_then(Value::as_array).is_none_or(|c| c.is_empty());
            if empty {
                // The structured value is the whole answer: keep it as text.
                let block =
                    Object::from_iter([("type".into(), "text".into()), ("text".into(), structured.to_string().into())]);
                obj.insert("content".into(), Value::Array(vec![Value::Object(block)]));
            }
        }
    }
    shape_content_list(obj.get_mut("content"), rev);
}

/// Shapes a `CreateTaskResult` (`{task}` in neutral form): nested for 2025-11-25, inline
/// with `resultType: "task"` for 2026-07-28.
fn shape_create_task_result(obj: &mut Object, rev: V) {
    if rev.is_modern() {
        if let Some(Value::Object(task)) = obj.remove("task") {
            for (k, v) in task {
                obj.entry(k).or_insert(v);
            }
        }
        obj.insert(result_type::MEMBER.into(), result_type::TASK.into());
        shape_task(obj, rev);
    } else if let Some(Value::Object(task)) = obj.get_mut("task") {
        shape_task(task, rev);
    }
}

fn shape_listed(obj: &mut Object, rev: V) {
    strip(obj, rev, &[("title", V::V2025_06_18, NOW), ("_meta", V::V2025_06_18, NOW), ("icons", V::V2025_11_25, NOW)]);
    shape_annotations(obj, rev);
}

fn shape_prompt(obj: &mut Object, rev: V) {
    shape_listed(obj, rev);
    for_each_object(obj.get_mut("arguments"), |a| strip(a, rev, &[("title", V::V2025_06_18, NOW)]));
}

/// Is this method's result cacheable (it carries `ttlMs`/`cacheScope` from 2026-07-28)?
pub fn is_cacheable(method: &str) -> bool {
    Method::parse(method).is_some_and(Method::is_cacheable)
}

/// What a result is, as far as shaping it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultKind {
    Initialize,
    Discover,
    ListTools,
    CallTool,
    CreateTask,
    TaskPayload,
    Task,
    ListTasks,
    ListPrompts,
    GetPrompt,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Other,
}

impl ResultKind {
    pub(crate) fn of(result: &ServerResult) -> Self {
        match result {
            ServerResult::Initialize(_) => Self::Initialize,
            ServerResult::Discover(_) => Self::Discover,
            ServerResult::ListTools(_) => Self::ListTools,
            ServerResult::CallTool(_) => Self::CallTool,
            ServerResult::CreateTask(_) => Self::CreateTask,
            ServerResult::TaskPayload(_) => Self::TaskPayload,
            ServerResult::Task(_) => Self::Task,
            ServerResult::ListTasks(_) => Self::ListTasks,
            ServerResult::ListPrompts(_) => Self::ListPrompts,
            ServerResult::GetPrompt(_) => Self::GetPrompt,
            ServerResult::ListResources(_) => Self::ListResources,
            ServerResult::ListResourceTemplates(_) => Self::ListResourceTemplates,
            ServerResult::ReadResource(_) => Self::ReadResource,
            ServerResult::Empty(_) | ServerResult::InputRequired(_) | ServerResult::Complete(_) => Self::Other,
        }
    }

    fn of_method(method: Method, result: &Object) -> Self {
        match method {
            Method::Initialize => Self::Initialize,
            Method::Discover => Self::Discover,
            Method::ListTools => Self::ListTools,
            Method::CallTool if result.get("task").is_some_and(Value::is_object) => Self::CreateTask,
            Method::CallTool => Self::CallTool,
            Method::TaskResult => Self::TaskPayload,
            Method::GetTask | Method::CancelTask => Self::Task,
            Method::ListTasks => Self::ListTasks,
            Method::ListPrompts => Self::ListPrompts,
            Method::GetPrompt => Self::GetPrompt,
            Method::ListResources => Self::ListResources,
            Method::ListResourceTemplates => Self::ListResourceTemplates,
            Method::ReadResource => Self::ReadResource,
            _ => Self::Other,
        }
    }

    fn is_cacheable(self) -> bool {
        matches!(
            self,
            Self::Discover
                | Self::ListTools
                | Self::ListPrompts
                | Self::ListResources
                | Self::ListResourceTemplates
                | Self::ReadResource
        )
    }
}

/// What the modern era adds to every result.
#[derive(Debug, Clone, Copy)]
pub struct ResultContext<'a> {
    /// The server's info, put in `_meta` of every modern result.
    pub server_info: Option<&'a Implementation>,
    /// Caching hints for cacheable results.
    pub cache: CacheHint,
}

/// Shapes the result of `method` for `rev`, in place.
pub fn shape_result(method: &str, result: &mut Value, rev: V, ctx: &ResultContext<'_>) {
    let Value::Object(obj) = result else { return };
    let kind = Method::parse(method).map_or(ResultKind::Other, |m| ResultKind::of_method(m, obj));
    shape_kind(kind, obj, rev, ctx);
}

/// Shapes a result of `kind` for `rev`, in place.
pub(crate) fn shape_kind(kind: ResultKind, obj: &mut Object, rev: V, ctx: &ResultContext<'_>) {
    match kind {
        ResultKind::Initialize => {
            if let Some(Value::Object(i)) = obj.get_mut("serverInfo") {
                shape_implementation(i, rev);
            }
            if let Some(Value::Object(c)) = obj.get_mut("capabilities") {
                shape_server_capabilities(c, rev);
            }
        }
        ResultKind::Discover => {
            if let Some(Value::Object(c)) = obj.get_mut("capabilities") {
                shape_server_capabilities(c, rev);
            }
        }
        ResultKind::ListTools => for_each_object(obj.get_mut("tools"), |t| shape_tool(t, rev)),
        ResultKind::CreateTask => shape_create_task_result(obj, rev),
        ResultKind::CallTool | ResultKind::TaskPayload => shape_call_tool_result(obj, rev),
        ResultKind::Task => {
            shape_task(obj, rev);
            if let Some(Value::Object(result)) = obj.get_mut("result") {
                shape_call_tool_result(result, rev);
            }
        }
        ResultKind::ListTasks => for_each_object(obj.get_mut("tasks"), |t| shape_task(t, rev)),
        ResultKind::ListPrompts => for_each_object(obj.get_mut("prompts"), |p| shape_prompt(p, rev)),
        ResultKind::GetPrompt => for_each_object(obj.get_mut("messages"), |m| {
            if let Some(Value::Object(c)) = m.get_mut("content") {
                shape_content(c, rev);
            }
        }),
        ResultKind::ListResources => for_each_object(obj.get_mut("resources"), |r| shape_listed(r, rev)),
        ResultKind::ListResourceTemplates => {
            for_each_object(obj.get_mut("resourceTemplates"), |r| shape_listed(r, rev))
        }
        ResultKind::ReadResource => for_each_object(obj.get_mut("contents"), |c| shape_resource_contents(c, rev)),
        ResultKind::Other => {}
    }
    finish_result(kind.is_cacheable(), obj, rev, ctx);
}

/// Adds or removes the era-specific members every result has.
fn finish_result(cacheable: bool, obj: &mut Object, rev: V, ctx: &ResultContext<'_>) {
    if !rev.has_result_type() {
        obj.remove(result_type::MEMBER);
        obj.remove("ttlMs");
        obj.remove("cacheScope");
        return;
    }
    let complete =
        obj.entry(result_type::MEMBER).or_insert_with(|| result_type::COMPLETE.into()) == result_type::COMPLETE;
    if complete && cacheable {
        obj.entry("ttlMs").or_insert_with(|| ctx.cache.ttl_ms.into());
        obj.entry("cacheScope").or_insert_with(|| {
            match ctx.cache.scope {
                CacheScope::Public => "public",
                CacheScope::Private => "private",
            }
            .into()
        });
    }
    if let Some(info) = ctx.server_info {
        let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Object::new()));
        if let Value::Object(meta) = meta {
            if !meta.contains_key(meta_keys::SERVER_INFO) {
                let mut info = serde_json::to_value(info).unwrap_or(Value::Null);
                if let Value::Object(i) = &mut info {
                    shape_implementation(i, rev);
                }
                meta.insert(meta_keys::SERVER_INFO.into(), info);
            }
        }
    }
}

/// Encodes the response to a `tools/call` answered with `result`, as `rev` defines it.
///
/// When `rev` takes the result as it is (from 2025-06-18, with content kinds the revision
/// knows: nearly every call), the typed result is written straight out with what the era
/// adds (`resultType`, the server info in `_meta`, merged into the result's own `_meta` when
/// it has one, as a result forwarded from another modern server does), sparing a `Value`
/// tree built, shaped and serialized per call. Anything else goes through [`shape_result`];
/// both give the same JSON.
pub fn encode_call_tool_result(id: &RequestId, result: &CallToolResult, rev: V, ctx: &ResultContext<'_>) -> String {
    if !passes_unchanged(result, rev) {
        return match serde_json::to_value(result) {
            Ok(mut value) => {
                shape_result(Method::CallTool.as_str(), &mut value, rev, ctx);
                jsonrpc::encode_result(id, &value)
            }
            Err(e) => jsonrpc::encode_error(Some(id), &ErrorObject::internal(e)),
        };
    }
    let complete = Some(result_type::COMPLETE);
    // [`shape_result`] appends `resultType` to the members of the result, then `_meta` when
    // the result had none: so `resultType` comes after a `_meta` of the result's own, and
    // before one made of the server info alone.
    let (meta, result_type, result_type_after_meta) = match (&result.meta, rev.has_result_type()) {
        (Some(given), true) => (Some(ResultMeta::Merged(given, ctx.server_info)), None, complete),
        (None, true) => (ctx.server_info.map(ResultMeta::ServerInfo), complete, None),
        (given, false) => (given.as_ref().map(ResultMeta::Given), None, None),
    };
    let wire = WireToolResult {
        content: &result.content,
        structured_content: result.structured_content.as_ref(),
        is_error: result.is_error,
        result_type,
        meta,
        result_type_after_meta,
    };
    jsonrpc::encode_result_of(id, &wire)
}

/// Whether shaping `result` for `rev` would leave it as it is (apart from what
/// [`finish_result`] adds, which [`encode_call_tool_result`] writes itself).
fn passes_unchanged(result: &CallToolResult, rev: V) -> bool {
    // Before 2025-06-18 structured content, content `_meta` and `lastModified` go; before
    // 2025-11-25 resource links lose their icons and sampling content kinds do not exist.
    let known = |c: &ContentBlock| {
        rev >= V::V2025_11_25
            || matches!(
                c,
                ContentBlock::Text(_)
                    | ContentBlock::Image(_)
                    | ContentBlock::Audio(_)
                    | ContentBlock::EmbeddedResource(_)
            )
    };
    rev >= V::V2025_06_18 && result.content.iter().all(known)
}

/// A `tools/call` result as it goes on the wire, members in the order [`shape_result`] leaves them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct WireToolResult<'a> {
    content: &'a [ContentBlock],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<ResultMeta<'a>>,
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type_after_meta: Option<&'static str>,
}

/// The `_meta` of a result: the handler's own (legacy), the server info (modern), or the
/// result's own with the server info added when it does not name one (modern).
enum ResultMeta<'a> {
    Given(&'a Meta),
    ServerInfo(&'a Implementation),
    Merged(&'a Meta, Option<&'a Implementation>),
}

impl Serialize for ResultMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Given(meta) => meta.serialize(serializer),
            Self::ServerInfo(info) => {
                let mut map = serializer.serialize_map(Some(1))?;
                with_info_text(info, |info| map.serialize_entry(meta_keys::SERVER_INFO, &info))?;
                map.end()
            }
            Self::Merged(meta, info) => {
                let info = info.filter(|_| !meta.contains_key(meta_keys::SERVER_INFO));
                let mut map = serializer.serialize_map(Some(meta.len() + usize::from(info.is_some())))?;
                for (key, value) in meta.iter() {
                    map.serialize_entry(key, value)?;
                }
                if let Some(info) = info {
                    with_info_text(info, |info| map.serialize_entry(meta_keys::SERVER_INFO, &info))?;
                }
                map.end()
            }
        }
    }
}

/// The server's info as it is written: its JSON text, or itself when that could not be made.
enum InfoText<'a> {
    Text(&'a RawValue),
    Value(&'a Implementation),
}

impl Serialize for InfoText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => text.serialize(serializer),
            Self::Value(info) => info.serialize(serializer),
        }
    }
}

thread_local! {
    /// The last server info written on this thread, and its text.
    static INFO_TEXT: RefCell<Option<(Implementation, Box<RawValue>)>> = const { RefCell::new(None) };
}

/// Calls `write` with the text of `info`, written once per value on each thread: every
/// 2026-07-28 result carries the server's info, the same on every result, and writing it
/// again each time cost about 700 instructions a result more than comparing its strings
/// does. A memo of a pure function, so a cache per thread is never stale.
fn with_info_text<R>(info: &Implementation, write: impl FnOnce(InfoText<'_>) -> R) -> R {
    INFO_TEXT.with_borrow_mut(|last| {
        if last.as_ref().is_none_or(|(kept, _)| kept != info) {
            *last = serde_json::value::to_raw_value(info).ok().map(|text| (info.clone(), text));
        }
        match last {
            Some((_, text)) => write(InfoText::Text(text)),
            None => write(InfoText::Value(info)),
        }
    })
}

/// Shapes the params of a notification the server sends, in place.
pub fn shape_notification_params(method: &str, params: &mut Value, rev: V) {
    if let Some(method) = Method::parse(method) {
        shape_notification(method, params, rev);
    }
}

pub(crate) fn shape_notification(method: Method, params: &mut Value, rev: V) {
    let Value::Object(obj) = params else { return };
    match method {
        Method::Progress => strip(obj, rev, &[("message", V::V2025_03_26, NOW)]),
        Method::TaskStatus => shape_task(obj, rev),
        _ => {}
    }
}

/// Shapes the params of a request the server sends to the client (legacy era), in place.
pub fn shape_server_request_params(method: &str, params: &mut Value, rev: V) {
    if let Some(method) = Method::parse(method) {
        shape_server_request(method, params, rev);
    }
}

pub(crate) fn shape_server_request(method: Method, params: &mut Value, rev: V) {
    let Value::Object(obj) = params else { return };
    match method {
        Method::CreateMessage => {
            strip(
                obj,
                rev,
                &[
                    ("tools", V::V2025_11_25, NOW),
                    ("toolChoice", V::V2025_11_25, NOW),
                    (TASK, V::V2025_11_25, V::V2025_11_25),
                ],
            );
            for_each_object(obj.get_mut("messages"), |m| {
                strip(m, rev, &[("_meta", V::V2025_11_25, NOW)]);
                match m.get_mut("content") {
                    Some(Value::Object(c)) => shape_content(c, rev),
                    Some(list @ Value::Array(_)) => shape_content_list(Some(list), rev),
                    _ => {}
                }
            });
        }
        Method::Elicit => {
            strip(
                obj,
                rev,
                &[
                    ("mode", V::V2025_11_25, NOW),
                    ("url", V::V2025_11_25, NOW),
                    ("elicitationId", V::V2025_11_25, NOW),
                    (TASK, V::V2025_11_25, V::V2025_11_25),
                ],
            );
            if rev < V::V2025_11_25 {
                if let Some(Value::Object(schema)) = obj.get_mut("requestedSchema") {
                    downgrade_form_schema(schema);
                }
            }
        }
        _ => {}
    }
}

/// Rewrites a form schema for 2025-06-18, whose primitive schemas lack what SEP-1330 and
/// SEP-1034 added in 2025-11-25: multi-select (array) fields are dropped (they cannot be
/// asked), titled single-select (`oneOf` of consts) becomes `enum` + `enumNames`, and
/// `default` stays only on booleans.
fn downgrade_form_schema(schema: &mut Object) {
    let mut dropped = Vec::new();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.retain(|name, prop| {
            let keep = prop.get("type").and_then(Value::as_str) != Some("array");
            if !keep {
                dropped.push(name.clone());
            }
            keep
        });
        for prop in properties.values_mut() {
            let Value::Object(prop) = prop else { continue };
            if let Some(Value::Array(options)) = prop.remove("oneOf") {
                let values: Vec<Value> = options.iter().filter_map(|o| o.get("const").cloned()).collect();
                let names: Vec<Value> =
                    options.iter().map(|o| o.get("title").cloned().unwrap_or(Value::Null)).collect();
                prop.insert("enum".into(), Value::Array(values));
                if names.iter().all(Value::is_string) {
                    prop.insert("enumNames".into(), Value::Array(names));
                }
            }
            if prop.get("type").and_then(Value::as_str) != Some("boolean") {
                prop.remove("default");
            }
        }
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|r| r.as_str().is_none_or(|r| !dropped.iter().any(|d| d == r)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_results_written_straight_out_match_the_shaped_value() {
        let results = [
            json!({"content": [{"type": "text", "text": "hi"}]}),
            json!({"content": [{"type": "text", "text": "x", "annotations": {"priority": 1.0, "lastModified": "2025-01-01T00:00:00Z"}, "_meta": {"k": 1}}],
                   "structuredContent": {"b": 1, "a": [2]}, "isError": false}),
            json!({"content": [], "structuredContent": {"only": true}}),
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}, {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}], "isError": true}),
            json!({"content": [{"type": "resource", "resource": {"uri": "file:///a", "text": "t", "_meta": {"m": 1}}}]}),
            json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a", "icons": [{"src": "https://e/i.png"}]}]}),
            json!({"content": [{"type": "tool_use", "id": "u", "name": "n", "input": {}}]}),
            json!({"content": [{"type": "text", "text": "m"}], "_meta": {"trace": "t1"}}),
            // A result forwarded from a modern server: its server info already in `_meta`.
            json!({"content": [{"type": "text", "text": "f"}], "structuredContent": {"x": 1}, "isError": false,
                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "0"}, "k": [1]}}),
        ];
        let info = Implementation::new("srv", "1.2");
        // The comparison below is of the direct path, not of the general path with itself.
        let plain: CallToolResult = serde_json::from_value(results[0].clone()).unwrap();
        assert!(passes_unchanged(&plain, V::V2025_06_18) && passes_unchanged(&plain, V::V2026_07_28));
        assert!(!passes_unchanged(&plain, V::V2025_03_26));
        for value in results {
            let result: CallToolResult = serde_json::from_value(value.clone()).expect("a CallToolResult");
            for rev in V::ALL {
                for server_info in [None, Some(&info)] {
                    let ctx = ResultContext { server_info, cache: CacheHint::default() };
                    let id = RequestId::Number(4);
                    let mut shaped = serde_json::to_value(&result).unwrap();
                    shape_result("tools/call", &mut shaped, rev, &ctx);
                    let expected = jsonrpc::encode_result(&id, &shaped);
                    assert_eq!(encode_call_tool_result(&id, &result, rev, &ctx), expected, "{rev} {value}");
                }
            }
        }
    }

    #[test]
    fn each_server_info_is_written_as_itself_when_several_alternate_on_one_thread() {
        let a = Implementation::new("a", "1");
        let mut b = Implementation::new("a", "1");
        b.title = Some("B".into());
        let result = CallToolResult::text("x");
        let id = RequestId::Number(1);
        for info in [&a, &b, &a, &a, &b] {
            let ctx = ResultContext { server_info: Some(info), cache: CacheHint::default() };
            let written: Value =
                serde_json::from_str(&encode_call_tool_result(&id, &result, V::V2026_07_28, &ctx)).unwrap();
            assert_eq!(written["result"]["_meta"][meta_keys::SERVER_INFO], serde_json::to_value(info).unwrap());
        }
    }

    #[test]
    fn drops_what_a_revision_lacks() {
        let ctx = ResultContext { server_info: None, cache: CacheHint::default() };
        let mut r = json!({"tools":[{"name":"t","title":"T","inputSchema":{"type":"object"},"annotations":{},"icons":[],"execution":{}}]});
        shape_result("tools/list", &mut r, V::V2024_11_05, &ctx);
        assert_eq!(r, json!({"tools":[{"name":"t","inputSchema":{"type":"object"}}]}));
    }

    #[test]
    fn extensions_in_every_revision_but_tasks_only_in_2026_07_28() {
        use crate::types::APPS_EXTENSION;
        let ctx = ResultContext { server_info: None, cache: CacheHint::default() };
        let caps = json!({"capabilities": {"extensions": {APPS_EXTENSION: {}, TASKS_EXTENSION: {}}}});
        for rev in [V::V2024_11_05, V::V2025_06_18, V::V2025_11_25] {
            let mut r = caps.clone();
            shape_result("initialize", &mut r, rev, &ctx);
            assert_eq!(r["capabilities"]["extensions"], json!({APPS_EXTENSION: {}}), "{rev:?}");
        }
        let mut r = caps.clone();
        shape_result("server/discover", &mut r, V::V2026_07_28, &ctx);
        assert_eq!(r["capabilities"]["extensions"], caps["capabilities"]["extensions"]);
        let mut only_tasks = json!({"capabilities": {"extensions": {TASKS_EXTENSION: {}}}});
        shape_result("initialize", &mut only_tasks, V::V2025_11_25, &ctx);
        assert!(only_tasks["capabilities"].get("extensions").is_none());
    }

    #[test]
    fn adds_what_modern_requires() {
        let info = Implementation::new("s", "1");
        let ctx = ResultContext { server_info: Some(&info), cache: CacheHint::default() };
        let mut r = json!({"tools":[]});
        shape_result("tools/list", &mut r, V::V2026_07_28, &ctx);
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["ttlMs"], 0);
        assert_eq!(r["cacheScope"], "private");
        assert_eq!(r["_meta"][meta_keys::SERVER_INFO]["name"], "s");
    }

    #[test]
    fn form_schemas_lose_what_2025_06_18_lacks() {
        let mut p = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "multi": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
            "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}]},
            "name": {"type": "string", "default": "x"},
            "ok": {"type": "boolean", "default": true}
        }, "required": ["multi", "name"]}});
        shape_server_request_params("elicitation/create", &mut p, V::V2025_06_18);
        let schema = &p["requestedSchema"];
        assert!(schema["properties"].get("multi").is_none());
        assert_eq!(schema["properties"]["titled"], json!({"type": "string", "enum": ["v1"], "enumNames": ["One"]}));
        assert!(schema["properties"]["name"].get("default").is_none());
        assert_eq!(schema["properties"]["ok"]["default"], true);
        assert_eq!(schema["required"], json!(["name"]));
    }

    #[test]
    fn tasks_per_revision() {
        let ctx = ResultContext { server_info: None, cache: CacheHint::default() };
        let task = json!({"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b",
            "ttlMs": 60000, "pollIntervalMs": 500, "result": {"content": []}});
        let mut created = json!({"task": task.clone()});
        shape_result("tools/call", &mut created, V::V2025_11_25, &ctx);
        assert_eq!(
            created,
            json!({"task": {"taskId": "t", "status": "completed", "createdAt": "a",
            "lastUpdatedAt": "b", "ttl": 60000, "pollInterval": 500}})
        );
        let mut created = json!({"task": task.clone()});
        shape_result("tools/call", &mut created, V::V2026_07_28, &ctx);
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["taskId"], "t");
        assert_eq!(created["ttlMs"], 60000);
        assert!(created.get("task").is_none());
        let mut got = task.clone();
        shape_result("tasks/get", &mut got, V::V2026_07_28, &ctx);
        assert_eq!(got["resultType"], "complete");
        assert_eq!(got["result"], json!({"content": []}));
        let mut note = task;
        shape_notification_params("notifications/tasks/status", &mut note, V::V2025_11_25);
        assert!(note.get("result").is_none() && note["ttl"] == 60000);
    }

    #[test]
    fn audio_becomes_text_before_2025_03_26() {
        let ctx = ResultContext { server_info: None, cache: CacheHint::default() };
        let mut r = json!({"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]});
        shape_result("tools/call", &mut r, V::V2024_11_05, &ctx);
        assert_eq!(r["content"][0]["type"], "text");
    }
}
