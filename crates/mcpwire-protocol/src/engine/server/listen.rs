//! Changes and who is told about them: a legacy session by notification, each 2026-07-28 listen
//! stream (`subscriptions/listen`) as its honoured filter asks, and the end of listen streams.

use serde_json::Map;

use super::{Feature, Offer, ServerPeer};
use crate::codec;
use crate::jsonrpc::RequestId;
use crate::message::{ServerNotification, ServerResult};
use crate::method::MethodName;
use crate::revision::ProtocolVersion;
use crate::types::{meta_keys, EmptyResult, Meta, ServerCapabilities, SubscriptionFilter};

/// A change the server's clients may be told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool list changed.
    Tools,
    /// The prompt list changed.
    Prompts,
    /// The resource (or template) list changed.
    Resources,
    /// A resource's contents changed.
    ResourceUpdated(String),
}

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// Tells the client about a change: a legacy session by notification (if the server
    /// offers what changed, or the client subscribed to the resource), each open listen
    /// stream if its filter asks for it.
    pub fn announce(&mut self, change: &Change, offer: &dyn Offer) {
        if let Some(session) = &self.session {
            let notification = match change {
                Change::Tools if offer.offers(Feature::Tools) => Some(ServerNotification::ToolsListChanged),
                Change::Prompts if offer.offers(Feature::Prompts) => Some(ServerNotification::PromptsListChanged),
                Change::Resources if offer.offers(Feature::Resources) => Some(ServerNotification::ResourcesListChanged),
                Change::ResourceUpdated(uri) if self.subscriptions.contains(uri) => {
                    Some(ServerNotification::ResourceUpdated(crate::types::ResourceUpdatedParams { uri: uri.clone() }))
                }
                _ => None,
            };
            if let Some(n) = notification {
                let text = codec::write_server_notification(&n, None, session.revision);
                self.core.notify(None, MethodName::parse(n.method()), text);
            }
        }
        let streams: Vec<(RequestId, ProtocolVersion, ServerNotification)> = self
            .core
            .serving
            .iter()
            .filter_map(|(id, s)| {
                let filter = s.state.listen.as_ref()?;
                listen_notification(change, filter).map(|n| (id.clone(), s.state.revision, n))
            })
            .collect();
        for (id, rev, n) in streams {
            let text = codec::write_server_notification(&n, Some(&subscription_meta(&id)), rev);
            self.core.notify(Some(id), MethodName::parse(n.method()), text);
        }
    }

    /// Whether a listen stream is open.
    pub fn is_listening(&self) -> bool {
        self.core.serving.values().any(|s| s.state.listen.is_some())
    }

    /// Ends every listen stream with its final result (the connection or server is closing).
    pub fn end_listens(&mut self) {
        let listens: Vec<RequestId> =
            self.core.serving.iter().filter(|(_, s)| s.state.listen.is_some()).map(|(id, _)| id.clone()).collect();
        for id in listens {
            let result = ServerResult::Empty(EmptyResult { meta: Some(subscription_meta(&id)) });
            self.respond(&id, Ok(result));
        }
    }
}

pub(super) fn subscription_meta(id: &RequestId) -> Meta {
    Map::from_iter([(meta_keys::SUBSCRIPTION_ID.to_owned(), id.to_value())])
}

/// The subset of a listen filter the server honours.
pub(super) fn honoured(filter: &SubscriptionFilter, caps: &ServerCapabilities) -> SubscriptionFilter {
    let flag = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    SubscriptionFilter {
        tools_list_changed: flag(filter.tools_list_changed, caps.tools.is_some()),
        prompts_list_changed: flag(filter.prompts_list_changed, caps.prompts.is_some()),
        resources_list_changed: flag(filter.resources_list_changed, caps.resources.is_some()),
        resource_subscriptions: filter.resource_subscriptions.clone().filter(|_| caps.resources.is_some()),
    }
}

/// The notification a change means for a listen stream with this filter, if any.
fn listen_notification(change: &Change, filter: &SubscriptionFilter) -> Option<ServerNotification> {
    let wants = |flag: Option<bool>| flag == Some(true);
    match change {
        Change::Tools if wants(filter.tools_list_changed) => Some(ServerNotification::ToolsListChanged),
        Change::Prompts if wants(filter.prompts_list_changed) => Some(ServerNotification::PromptsListChanged),
        Change::Resources if wants(filter.resources_list_changed) => Some(ServerNotification::ResourcesListChanged),
        Change::ResourceUpdated(uri) if filter.resource_subscriptions.as_ref().is_some_and(|s| s.contains(uri)) => {
            Some(ServerNotification::ResourceUpdated(crate::types::ResourceUpdatedParams { uri: uri.clone() }))
        }
        _ => None,
    }
}
