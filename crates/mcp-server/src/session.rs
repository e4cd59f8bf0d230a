//! A legacy session with no connection of its own.
//!
//! Over HTTP each message of a session arrives in its own request. Rather than keep a task
//! and channels per session (memory that idle sessions would hold), the transport hands each
//! decoded message to the session here, in the request's own task, and the session's own
//! messages (notifications, requests to the client) go to a function the transport gave,
//! which files them for whoever reads the session's stream.

use std::sync::Arc;

use mcp_protocol::jsonrpc::Incoming;
use mcp_protocol::ProtocolVersion;
use mcp_protocol::Request;
use tokio::sync::mpsc;

use crate::connection::{handle_incoming, request_work, ConnectionState, Tasks};
use crate::outbound::{Outbound, Sink};
use crate::registry::Change;
use crate::server::Server;

/// One legacy session of a [`Server`], fed message by message (see the module docs).
#[derive(Clone)]
pub struct ServerSession {
    state: Arc<ConnectionState>,
}

impl Server {
    /// Opens a session whose own messages go to `sink` (which returns `false` once nobody
    /// can read them any more). Changes are announced by calling [`ServerSession::announce`]
    /// for each one heard on [`Server::changes`].
    pub fn session(&self, sink: impl Fn(String) -> bool + Send + Sync + 'static) -> ServerSession {
        let outbound = Outbound::to_sink(Sink::Function(Arc::new(sink)));
        ServerSession { state: Arc::new(ConnectionState::new(self.clone(), outbound)) }
    }

    /// The changes of this server's lists and resources, as they happen.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }
}

impl ServerSession {
    /// Handles one decoded message (or batch). A request runs here until it first waits
    /// (most are answered before this returns), then as a task of its own; its response and
    /// related messages go to `reply` when given (one HTTP request's stream), else to the
    /// session's sink. `initialize` is handled before this returns.
    pub async fn receive(&self, incoming: Incoming, reply: Option<mpsc::Sender<String>>) {
        let outbound = self.state.outbound_for(reply);
        handle_incoming(&self.state, incoming, outbound, Tasks::Detached).await;
    }

    /// The work of answering one request (anything but `initialize`, which [`Self::receive`]
    /// answers), for the transport to run where it likes: in the task that received it,
    /// say, saving a hand-over. Its answer and related messages go to `reply`. The request
    /// counts as in flight (cancellable) from this call on.
    pub fn request(
        &self,
        request: Request,
        reply: mpsc::Sender<String>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let outbound = self.state.outbound_for(Some(reply));
        request_work(&self.state, request, outbound)
    }

    /// Cancels a request of this session that is in flight (the transport gave up on it).
    pub fn cancel(&self, id: &mcp_protocol::RequestId) {
        self.state.cancel(id);
    }

    /// Tells the session's client about a change, if its revision and subscriptions call for it.
    pub async fn announce(&self, change: &Change) {
        self.state.announce(change).await;
    }

    /// The negotiated revision, once `initialize` has been answered.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.state.legacy_version()
    }

    /// Ends the session: requests to the client fail, listen streams and task handlers end,
    /// and requests still running are cancelled after the shutdown grace period.
    pub fn close(&self) {
        self.state.close();
    }
}
