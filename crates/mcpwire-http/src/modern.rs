//! 2026-07-28 requests: stateless POSTs, their headers checked against the body.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use mcpwire_protocol::error::{HEADER_MISMATCH, INVALID_PARAMS};
use mcpwire_protocol::message::{ClientRequest, Decoded, FromClient, Received};
use mcpwire_protocol::types::meta_keys;
use mcpwire_protocol::ErrorObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Caller};
use crate::reply::{self, Expect, Incoming, Plan};
use crate::{accepts_sse, error_response, headers, Inner};

/// Frames of one request that may wait for its HTTP response to take them.
const FRAMES_AHEAD: usize = 64;

pub(crate) async fn post(
    inner: &Arc<Inner>,
    headers_in: &HeaderMap,
    frame: Decoded<FromClient>,
    caller: Caller,
) -> Response {
    let req = match frame {
        Decoded::Single(Received::Request(r)) => r,
        // No notification is defined for clients over HTTP in this revision; accept and ignore.
        Decoded::Single(Received::Notification(_)) => {
            return reply::json_response(StatusCode::ACCEPTED, String::new(), &[])
        }
        Decoded::Single(Received::Response(_)) => {
            let e = ErrorObject::invalid_request("clients do not send responses in protocol revision 2026-07-28");
            return error_response(StatusCode::BAD_REQUEST, None, &e);
        }
        Decoded::Batch(_) => {
            let e = ErrorObject::invalid_request("JSON-RPC batches are not part of protocol revision 2026-07-28");
            return error_response(StatusCode::BAD_REQUEST, None, &e);
        }
    };
    let reject = |code: i64, message: String| {
        let status = reply::modern_status(code);
        error_response(status, Some(&req.id), &ErrorObject::new(code, message))
    };
    let header_version = match headers::value(headers_in, &headers::names::PROTOCOL_VERSION) {
        Ok(v) => v,
        Err(why) => return reject(HEADER_MISMATCH, why),
    };
    // The order matters to clients: the body's `_meta` is judged before the header is compared with it.
    let Some(header_version) = header_version else {
        return reject(HEADER_MISMATCH, "missing MCP-Protocol-Version header".into());
    };
    let Some(meta_version) = &req.meta.protocol_version else {
        return reject(INVALID_PARAMS, format!("missing _meta[\"{}\"]", meta_keys::PROTOCOL_VERSION));
    };
    if req.meta.client_capabilities.is_none() {
        return reject(INVALID_PARAMS, format!("missing _meta[\"{}\"]", meta_keys::CLIENT_CAPABILITIES));
    }
    if req.meta.protocol_version_str() != Some(header_version) {
        return reject(
            HEADER_MISMATCH,
            format!("MCP-Protocol-Version {header_version:?} does not match _meta {}", meta_version.get()),
        );
    }
    let expected = headers::Expected::of(&req);
    let check = |schema: Option<&mcpwire_protocol::types::JsonObject>| headers::check(headers_in, &expected, schema);
    // The tool's schema is read in place (it names the `x-mcp-header` parameters).
    let checked = match &req.body {
        Ok(ClientRequest::CallTool(call)) => inner.server.with_tool(&call.name, |t| check(Some(&t.input_schema))),
        _ => None,
    };
    if let Err(why) = checked.unwrap_or_else(|| check(None)) {
        return reject(HEADER_MISMATCH, why);
    }
    if let Ok(request) = &req.body {
        if let Some(refused) = auth::refuse_scopes(inner, &caller, request) {
            return refused;
        }
    }
    // A listen stream lasts until the client leaves: at shutdown it ends, with a hint.
    let listens = matches!(req.body, Ok(ClientRequest::Listen(_)));
    let ends_at_shutdown = listens.then(|| (inner.shutdown.clone(), inner.config.sse_retry.as_millis() as u64));
    let cancel = CancellationToken::new();
    let plan = Plan {
        expect: Expect::Response(req.id.clone()),
        sse: accepts_sse(headers_in),
        modern: true,
        cancel_on_close: Some(cancel.clone()),
        keep_alive: inner.config.keep_alive,
        first_frame_timeout: inner.config.request_timeout,
        headers: Vec::new(),
        ends_at_shutdown,
    };
    let server = inner.server.clone();
    // A listen stream lasts: its frames go through a queue that keeps no buffer while none
    // waits (a tokio channel keeps a block of 32 frames, about 3 KiB, for its whole life).
    let (work, rx) = if listens {
        let (tx, rx) = mcpwire_server::stream_channel(FRAMES_AHEAD);
        let work = reply::Inline::new(async move { server.serve_stateless_for(req, caller, tx, cancel).await });
        (work, Incoming::Stream(rx))
    } else {
        let (tx, rx) = mpsc::channel(FRAMES_AHEAD);
        let work = reply::Inline::new(async move { server.serve_stateless_for(req, caller, tx, cancel).await });
        (work, Incoming::Channel(rx))
    };
    reply::respond(work, rx, plan).await
}
