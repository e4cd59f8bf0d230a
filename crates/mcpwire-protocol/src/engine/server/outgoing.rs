//! What the server sends of its own accord: progress, log messages, notifications on the
//! session, and requests to the client (legacy era).

use serde_json::Value;

use super::{LogSource, Scope, ServerPeer};
use crate::codec;
use crate::engine::peer::{Now, SendOptions, Written};
use crate::engine::progress::ProgressError;
use crate::jsonrpc::RequestId;
use crate::message::{ServerNotification, ServerRequest};
use crate::method::{Method, MethodName};
use crate::revision::ProtocolVersion;
use crate::types::{LoggingLevel, LoggingMessageParams, Meta};

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// Reports progress on a request being served. Values must increase; nothing is sent if
    /// the client did not ask for progress, or once the request is answered.
    pub fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<&Meta>,
    ) -> Result<(), ProgressError> {
        let params = self.core.progress(id, progress, total, message)?;
        let rev = self.core.serving.get(id).map_or(ProtocolVersion::LATEST, |s| s.state.revision);
        let text = codec::write_server_notification(&ServerNotification::Progress(params), meta, rev);
        self.core.notify(Some(id.clone()), Method::Progress.into(), text);
        Ok(())
    }

    /// Sends a log message, related to a request being served (or to the session), if its
    /// level passes the client's threshold; returns whether it was sent.
    pub fn log(
        &mut self,
        related: Option<&RequestId>,
        level: LoggingLevel,
        logger: Option<String>,
        data: Value,
        meta: Option<&Meta>,
    ) -> bool {
        if !self.settings.logging {
            return false;
        }
        let (source, rev) = match related.and_then(|id| self.core.serving.get(id)) {
            Some(s) => (s.state.log, s.state.revision),
            None => match &self.session {
                Some(session) => (LogSource::Session, session.revision),
                None => return false,
            },
        };
        let threshold = match source {
            LogSource::Session => self.log_level,
            LogSource::Fixed(level) => level,
        };
        if threshold.is_none_or(|t| level < t) {
            return false;
        }
        let message = ServerNotification::Log(LoggingMessageParams { level, logger, data });
        let text = codec::write_server_notification(&message, meta, rev);
        self.core.notify(related.cloned(), Method::LogMessage.into(), text);
        true
    }

    /// Sends a notification on the session (legacy era), written for its revision; `false`
    /// when there is no session.
    pub fn notify(&mut self, notification: &ServerNotification, meta: Option<&Meta>) -> bool {
        let Some(session) = &self.session else { return false };
        let text = codec::write_server_notification(notification, meta, session.revision);
        let method = MethodName::parse(notification.method());
        self.core.notify(None, method, text);
        true
    }

    /// Sends a request to the client (legacy era), while serving `related` if given; the
    /// answer comes as an [`Event::Response`](crate::engine::Event::Response) carrying
    /// `waiter`. Refused when there is no legacy session, or the client did not declare the
    /// capability the request needs.
    pub fn request(
        &mut self,
        question: &ServerRequest,
        meta: Option<&Meta>,
        options: SendOptions,
        waiter: W,
        now: Now,
    ) -> Result<RequestId, NotAsked> {
        let session = self.session.as_ref().ok_or(NotAsked::NoSession)?;
        let scope = Scope { revision: session.revision, capabilities: session.capabilities.clone(), client_info: None };
        if let Some(capability) = scope.lacks(question) {
            return Err(NotAsked::MissingCapability(capability));
        }
        let (id, _) = self.core.allocate(false);
        let text = codec::write_server_request(&id, question, meta, session.revision);
        let written =
            Written { id: id.clone(), method: question.method().into(), text, token: None, headers: Vec::new() };
        self.core.send(written, &options, waiter, now.instant);
        Ok(id)
    }

    /// Gives up on a request of ours: the client is told, and a late answer is ignored.
    /// Returns its waiter if it was still waiting.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) -> Option<W> {
        self.core.cancel(id, reason)
    }
}

/// Why a request to the client was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAsked {
    /// There is no legacy session to send it on (2026-07-28 asks in rounds instead).
    NoSession,
    /// The client did not declare the capability the request needs.
    MissingCapability(&'static str),
}
