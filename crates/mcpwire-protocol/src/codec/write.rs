//! Writing typed messages as a revision defines them.

use serde::Serialize;
use serde_json::{Map, Value};

use super::shape::{self, ResultContext, ResultKind};
use crate::error::ErrorObject;
use crate::jsonrpc::{self, RequestId};
use crate::message::{
    ClientNotification, ClientRequest, ClientResult, RequestMeta, RoundInput, ServerNotification, ServerRequest,
    ServerResult, WireMeta, WireParams,
};
use crate::method::Method;
use crate::revision::ProtocolVersion;
use crate::types::Meta;

#[derive(Serialize)]
struct WireRequest<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'static str,
    params: P,
}

#[derive(Serialize)]
struct WireNotification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
}

fn to_string<T: Serialize>(v: &T) -> String {
    // Every member of these envelopes serializes (strings, JSON values, plain data).
    serde_json::to_string(v).unwrap_or_default()
}

/// A request of the client's, written for `rev`: its params, then `inputResponses` and
/// `requestState` when retrying a multi-round request, then `_meta`.
pub fn write_client_request(
    id: &RequestId,
    request: &ClientRequest,
    meta: &RequestMeta,
    round: &RoundInput,
    rev: ProtocolVersion,
) -> String {
    write_client_request_with(id, request, WireMeta::Members(meta), round, rev)
}

/// [`write_client_request`] with `_meta` as given: from its members, or written before.
pub(crate) fn write_client_request_with(
    id: &RequestId,
    request: &ClientRequest,
    meta: WireMeta<'_>,
    round: &RoundInput,
    rev: ProtocolVersion,
) -> String {
    let method = request.method().as_str();
    if let ClientRequest::Initialize(params) = request {
        // The client's info is written as the revision offered defines it.
        let mut value = serde_json::to_value(params).unwrap_or(Value::Null);
        if let Some(Value::Object(info)) = value.get_mut("clientInfo") {
            shape::shape_implementation(info, rev);
        }
        let params = WireParams::new(&value, meta, round);
        return to_string(&WireRequest { jsonrpc: "2.0", id, method, params });
    }
    let own = request.params();
    let params = WireParams::new(&own, meta, round);
    to_string(&WireRequest { jsonrpc: "2.0", id, method, params })
}

/// A request of the server's to the client, written for `rev` (what a revision lacks, such as
/// sampling tools before 2025-11-25, left out). `meta` goes in its `_meta` (a related task,
/// say).
pub fn write_server_request(
    id: &RequestId,
    request: &ServerRequest,
    meta: Option<&Meta>,
    rev: ProtocolVersion,
) -> String {
    let mut params = serde_json::to_value(request.params()).unwrap_or_else(|_| Value::Object(Map::new()));
    shape::shape_server_request(request.method(), &mut params, rev);
    if let (Some(meta), Value::Object(obj)) = (meta, &mut params) {
        obj.insert("_meta".into(), Value::Object(meta.clone()));
    }
    to_string(&WireRequest { jsonrpc: "2.0", id, method: request.method().as_str(), params })
}

/// A notification of the server's, written for `rev`, with `meta` in its `_meta` (a listen
/// stream's id, a related task).
pub fn write_server_notification(
    notification: &ServerNotification,
    meta: Option<&Meta>,
    rev: ProtocolVersion,
) -> String {
    let mut params = notification.params_value();
    if let Some(method) = notification.known_method() {
        shape::shape_notification(method, &mut params, rev);
    }
    if let (Some(meta), Value::Object(obj)) = (meta, &mut params) {
        let entry = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(existing) = entry {
            existing.extend(meta.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    to_string(&WireNotification { jsonrpc: "2.0", method: notification.method(), params: Some(&params) })
}

/// A notification of the client's.
pub fn write_client_notification(notification: &ClientNotification) -> String {
    let params = match notification {
        ClientNotification::Initialized | ClientNotification::RootsListChanged => None,
        ClientNotification::Cancelled(p) => serde_json::to_value(p).ok(),
        ClientNotification::Progress(p) => serde_json::to_value(p).ok(),
        ClientNotification::Other(n) => {
            return to_string(&WireNotification { jsonrpc: "2.0", method: &n.method, params: n.params.as_ref() })
        }
    };
    let method = notification.method().map_or("", Method::as_str);
    to_string(&WireNotification { jsonrpc: "2.0", method, params: params.as_ref() })
}

/// The server's answer to request `id`, written for `rev`: what the revision lacks dropped,
/// what the modern era requires added (`resultType`, caching hints, the server's info).
pub fn write_server_result(
    id: &RequestId,
    result: &ServerResult,
    rev: ProtocolVersion,
    ctx: &ResultContext<'_>,
) -> String {
    if let ServerResult::CallTool(r) = result {
        return shape::encode_call_tool_result(id, r, rev, ctx);
    }
    match result.to_value() {
        Ok(mut value) => {
            if let Value::Object(obj) = &mut value {
                shape::shape_kind(ResultKind::of(result), obj, rev, ctx);
            }
            jsonrpc::encode_result(id, &value)
        }
        Err(e) => jsonrpc::encode_error(Some(id), &ErrorObject::internal(e)),
    }
}

/// The client's answer to the server's request `id`, written for `rev` (a task's members
/// spelled as that revision spells them).
pub fn write_client_result(id: &RequestId, result: &ClientResult, rev: ProtocolVersion) -> String {
    let shape_task: fn(&mut Value, ProtocolVersion) = match result {
        ClientResult::Task(_) => |v, rev| {
            if let Value::Object(task) = v {
                shape::shape_task(task, rev);
            }
        },
        ClientResult::CreateTask(_) => |v, rev| {
            if let Some(Value::Object(task)) = v.get_mut("task") {
                shape::shape_task(task, rev);
            }
        },
        ClientResult::ListTasks(_) => |v, rev| {
            if let Some(Value::Array(tasks)) = v.get_mut("tasks") {
                for task in tasks.iter_mut().filter_map(Value::as_object_mut) {
                    shape::shape_task(task, rev);
                }
            }
        },
        _ => return jsonrpc::encode_result_of(id, result),
    };
    let mut value = serde_json::to_value(result).unwrap_or_else(|_| Value::Object(Map::new()));
    shape_task(&mut value, rev);
    jsonrpc::encode_result_of(id, &value)
}

/// An error response (`id` null when the request's id could not be read).
pub fn write_error(id: Option<&RequestId>, error: &ErrorObject) -> String {
    jsonrpc::encode_error(id, error)
}
