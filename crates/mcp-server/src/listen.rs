//! `subscriptions/listen` (2026-07-28): a long-lived request whose stream carries the
//! change notifications the client asked for, each tagged with the stream's id.

use mcp_protocol::jsonrpc::{self, RequestId};
use mcp_protocol::types::{meta_keys, SubscriptionFilter};
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::outbound::Outbound;
use crate::registry::Change;
use crate::server::Server;

/// The notification a change means for a stream with this filter, if any.
fn notification_for(change: &Change, filter: &SubscriptionFilter) -> Option<(&'static str, Value)> {
    let wants = |flag: Option<bool>| flag == Some(true);
    match change {
        Change::Tools if wants(filter.tools_list_changed) => Some(("notifications/tools/list_changed", json!({}))),
        Change::Prompts if wants(filter.prompts_list_changed) => {
            Some(("notifications/prompts/list_changed", json!({})))
        }
        Change::Resources if wants(filter.resources_list_changed) => {
            Some(("notifications/resources/list_changed", json!({})))
        }
        Change::ResourceUpdated(uri)
            if filter.resource_subscriptions.as_ref().is_some_and(|s| s.iter().any(|u| u == uri)) =>
        {
            Some(("notifications/resources/updated", json!({"uri": uri})))
        }
        _ => None,
    }
}

/// Acknowledges the stream with the honoured subset of `filter`, then forwards matching
/// changes until `end` is cancelled; returns the final result.
pub(crate) async fn run(
    server: &Server,
    id: &RequestId,
    filter: SubscriptionFilter,
    outbound: &Outbound,
    end: CancellationToken,
) -> Value {
    // Subscribed before the acknowledgement, so nothing that happens after it is missed.
    let mut changes = server.inner.changes.subscribe();
    let caps = server.capabilities();
    let flag = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let honoured = SubscriptionFilter {
        tools_list_changed: flag(filter.tools_list_changed, caps.tools.is_some()),
        prompts_list_changed: flag(filter.prompts_list_changed, caps.prompts.is_some()),
        resources_list_changed: flag(filter.resources_list_changed, caps.resources.is_some()),
        resource_subscriptions: filter.resource_subscriptions.filter(|_| caps.resources.is_some()),
    };
    let tag = json!({meta_keys::SUBSCRIPTION_ID: id});
    let ack = json!({"notifications": honoured, "_meta": tag});
    outbound.send_frame(jsonrpc::encode_notification("notifications/subscriptions/acknowledged", Some(&ack))).await;
    loop {
        let change = tokio::select! {
            _ = end.cancelled() => break,
            change = changes.recv() => change,
        };
        let found: Vec<Change> = match change {
            Ok(change) => vec![change],
            // Missed some: say every list may have changed.
            Err(broadcast::error::RecvError::Lagged(_)) => vec![Change::Tools, Change::Prompts, Change::Resources],
            Err(broadcast::error::RecvError::Closed) => break,
        };
        for change in found {
            if let Some((method, mut params)) = notification_for(&change, &honoured) {
                params["_meta"] = tag.clone();
                if !outbound.send_frame(jsonrpc::encode_notification(method, Some(&params))).await {
                    return json!({"_meta": tag});
                }
            }
        }
    }
    json!({"_meta": tag})
}
