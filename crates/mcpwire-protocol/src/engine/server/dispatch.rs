//! What comes from the client: requests (refused, answered here — `ping`, `server/discover`,
//! `logging/setLevel`, subscriptions, listen streams — or handed to the application with their
//! input round), notifications (cancellation, progress) and answers to our requests.

use super::listen::{honoured, subscription_meta};
use super::{LogSource, Offer, ServedRequest, ServerNews, ServerPeer, ServerServing};
use crate::codec::{self, ResultContext};
use crate::engine::peer::{Event, Failure, Now};
use crate::engine::rounds::InputRound;
use crate::error::ErrorObject;
use crate::jsonrpc::{RequestId, Response};
use crate::message::{ClientNotification, ClientRequest, Notified, Request, ServerNotification, ServerResult};
use crate::method::Method;
use crate::revision::{ProtocolVersion, Sender};
use crate::types::EmptyResult;

impl<W, H: Clone + Default> ServerPeer<W, H> {
    pub(super) fn answer_now(
        &mut self,
        id: &RequestId,
        batch: Option<u64>,
        rev: ProtocolVersion,
        outcome: Result<ServerResult, ErrorObject>,
    ) {
        let (text, error) = match outcome {
            Ok(result) => (codec::write_server_result(id, &result, rev, &self.settings.result_context()), None),
            Err(e) => (codec::write_error(Some(id), &e), Some(e.code)),
        };
        self.send_response(id, batch, text, error);
    }

    pub(super) fn handle_request(
        &mut self,
        request: Box<Request<ClientRequest>>,
        batch: Option<u64>,
        now: Now,
        offer: &dyn Offer,
    ) {
        let Request { id, method, meta, round, body } = *request;
        if method.known() == Some(Method::Initialize) {
            // A 2026-07-28 request cannot open a legacy session: the method does not exist
            // there, whatever its params.
            let outcome = match self.stateless {
                true => Err(ErrorObject::method_not_found(Method::Initialize.as_str())),
                false => body.and_then(|b| self.initialize(b, offer)),
            };
            let rev = self.session.as_ref().map_or(ProtocolVersion::LATEST_LEGACY, |s| s.revision);
            // A negotiated revision is written without the modern members: no server info in _meta.
            let (text, error) = match outcome {
                Ok(result) => {
                    let ctx = ResultContext { server_info: None, cache: self.settings.cache };
                    (codec::write_server_result(&id, &result, rev, &ctx), None)
                }
                Err(e) => (codec::write_error(Some(&id), &e), Some(e.code)),
            };
            self.send_response(&id, batch, text, error);
            if let Some(session) = self.session.clone().filter(|_| error.is_none()) {
                self.events.push_back(Event::Role(ServerNews::SessionBegan(session)));
            }
            return;
        }
        if self.core.serving.contains_key(&id) {
            let e = ErrorObject::invalid_request(format!("request id {id} is already in use by a request in flight"));
            let text = codec::write_error(Some(&id), &e);
            return self.send_response(&id, batch, text, Some(e.code));
        }
        let scope = match self.scope(&method, &meta) {
            Ok(scope) => scope,
            Err(e) => return self.answer_now(&id, batch, ProtocolVersion::LATEST, Err(e)),
        };
        let rev = scope.revision;
        let log = if rev.is_modern() {
            match self.request_log_level(&meta) {
                Ok(level) => LogSource::Fixed(level),
                Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
            }
        } else {
            LogSource::Session
        };
        let known = method.known().filter(|m| rev.has_request(*m, Sender::Client));
        let Some(known) = known else {
            return self.answer_now(&id, batch, rev, Err(ErrorObject::method_not_found(method.as_str())));
        };
        if let Err(e) = self.gate(known, &scope, offer) {
            return self.answer_now(&id, batch, rev, Err(e));
        }
        let body = match body {
            Ok(body) => body,
            Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
        };
        let serving = |listen| ServerServing { revision: rev, log, batch, listen };
        match &body {
            ClientRequest::Ping => {
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())))
            }
            ClientRequest::Discover => {
                let result = self.discover(offer);
                return self.answer_now(&id, batch, rev, Ok(result));
            }
            ClientRequest::SetLevel(p) => {
                self.log_level = Some(p.level);
                self.state_changes += 1;
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Subscribe(p) => {
                if self.subscriptions.insert(p.uri.clone()) {
                    self.state_changes += 1;
                }
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Unsubscribe(p) => {
                if self.subscriptions.remove(&p.uri) {
                    self.state_changes += 1;
                }
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Listen(p) => {
                let honoured = honoured(&p.notifications, &offer.capabilities());
                let ack = ServerNotification::SubscriptionsAcknowledged(honoured.clone());
                let text = codec::write_server_notification(&ack, Some(&subscription_meta(&id)), rev);
                self.core.notify(Some(id.clone()), Method::SubscriptionsAcknowledged.into(), text);
                self.core.begin(id.clone(), None, H::default(), serving(Some(Box::new(honoured))));
                self.events.push_back(Event::Role(ServerNews::Listening(id)));
                return;
            }
            _ => {}
        }
        let round = if rev.is_modern() && known.allows_input_rounds() {
            match InputRound::open(&body, &round, &self.settings.sealer, self.identity.as_deref(), now.unix_ms) {
                Ok(round) => Some(Box::new(round)),
                Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
            }
        } else {
            None
        };
        let handling = H::default();
        self.core.begin(id.clone(), meta.progress_token.clone(), handling.clone(), serving(None));
        let request = Box::new(ServedRequest { id, request: body, scope, meta, round });
        self.events.push_back(Event::Request { request, handling });
    }

    pub(super) fn handle_notification(&mut self, n: Notified<ClientNotification>) {
        match &n.body {
            ClientNotification::Cancelled(p) => {
                let Some(id) = &p.request_id else {
                    // A cancellation without a usable request id names nothing to cancel.
                    return;
                };
                self.cancelled_by_client(id, p.reason.clone());
            }
            ClientNotification::Initialized => {}
            ClientNotification::Progress(p) => {
                if let Some(id) = self.core.progress_of(&p.progress_token) {
                    self.events.push_back(Event::Progress { id, params: p.clone() });
                }
            }
            _ => self.events.push_back(Event::Notification(n)),
        }
    }

    pub(super) fn cancelled_by_client(&mut self, id: &RequestId, reason: Option<String>) {
        let Some(serving) = self.core.end(id) else { return };
        if serving.state.listen.is_some() {
            // A listen stream the client closed: nothing more to send on it.
            return;
        }
        if let Some(key) = serving.state.batch {
            // A batch still answers every request: this one with nothing.
            if let Some(b) = self.batches.get_mut(&key) {
                b.waiting = b.waiting.saturating_sub(1);
            }
            self.flush_batch(key);
        }
        self.events.push_back(Event::Cancelled { id: id.clone(), reason, handling: serving.handling });
    }

    pub(super) fn handle_response(&mut self, response: Response) {
        let Some(id) = response.id else {
            // An error response without an id answers nothing we can name.
            return;
        };
        let outcome = response.outcome.map_err(Failure::Error);
        if let Some((_, waiter, outcome)) = self.core.complete(&id, outcome) {
            self.events.push_back(Event::Response { id, waiter, outcome });
        }
    }
}
