//! Our `subscriptions/listen` streams (2026-07-28): which requests of ours are open streams,
//! whose notifications (tagged with the request id as `subscriptionId`) are theirs, and how
//! a stream ends (its result, a failure, our cancellation, or, over stdio, the server's
//! `notifications/cancelled` naming it).

use std::collections::HashSet;

use super::{ClientNews, ClientPeer, Waiting};
use crate::engine::peer::{Event, Failure};
use crate::jsonrpc::RequestId;
use crate::message::{Notified, ServerNotification};

/// The ids of our open listen requests.
#[derive(Debug, Default)]
pub(super) struct Listens(HashSet<RequestId>);

impl Listens {
    /// A listen request was sent.
    pub(super) fn open(&mut self, id: RequestId) {
        self.0.insert(id);
    }

    /// The request ended (or was no listen stream); whether it was one.
    pub(super) fn end(&mut self, id: &RequestId) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let ended = self.0.remove(id);
        if self.0.is_empty() {
            // An idle connection keeps no table.
            self.0 = HashSet::new();
        }
        ended
    }

    fn contains(&self, id: &RequestId) -> bool {
        !self.0.is_empty() && self.0.contains(id)
    }
}

impl<W, H: Clone + Default> ClientPeer<W, H> {
    /// Routes a notification of a listen stream of ours to it ([`ClientNews::Listened`]);
    /// any other is given back.
    pub(super) fn listened(&mut self, n: Notified<ServerNotification>) -> Option<Notified<ServerNotification>> {
        match &n.meta.subscription_id {
            Some(id) if self.listens.contains(id) => {
                let id = id.clone();
                self.events.push_back(Event::Role(ClientNews::Listened { id, notification: n.body }));
                None
            }
            _ => Some(n),
        }
    }

    /// The server ended the listen stream `id` with `notifications/cancelled` (how a stream
    /// ends over stdio, where it has no HTTP response of its own): the request is over, and
    /// its waiter is told the stream closed.
    pub(super) fn listen_ended(&mut self, id: &RequestId) {
        if !self.listens.end(id) {
            return;
        }
        if let Some(Waiting::App(waiter, _)) = self.core.forget(id) {
            self.events.push_back(Event::Response { id: id.clone(), waiter, outcome: Err(Failure::Closed) });
        }
    }
}
