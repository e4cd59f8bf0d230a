//! Serving without a connection of one's own: a legacy session fed message by message, and a
//! 2026-07-28 request that stands alone.
//!
//! Over HTTP each message of a session arrives in its own request. Rather than keep a task
//! and channels per session (memory that idle sessions would hold), the transport hands each
//! decoded message to the session here, in the request's own task, and the session's own
//! messages (notifications, requests to the client) go to a function the transport gave,
//! which files them for whoever reads the session's stream.

use std::sync::Arc;

use mcpwire_protocol::engine::{Change, SessionSnapshot, SnapshotRefused};
use mcpwire_protocol::frame::Outbound;
use mcpwire_protocol::message::{ClientRequest, Decoded, FromClient, Received, Request};
use mcpwire_protocol::{Principal, ProtocolVersion, RequestId};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::connection::{self, Tasks};
use crate::link::{now, Link, Peer, Sink};
use crate::server::Server;

/// One legacy session of a [`Server`], fed message by message (see the module docs).
#[derive(Clone)]
pub struct ServerSession {
    server: Server,
    link: Arc<Link>,
}

impl Server {
    /// Opens a session whose own messages go to `sink` (which returns `false` once nobody
    /// can read them any more). Changes are announced by calling [`ServerSession::announce`]
    /// for each one heard on [`Server::changes`].
    pub fn session(&self, sink: impl Fn(Outbound) -> bool + Send + Sync + 'static) -> ServerSession {
        let link = connection::link(Peer::new(self.settings().clone()), Sink::Function(Arc::new(sink)));
        ServerSession { server: self.clone(), link }
    }

    /// The same, for a session the transport knows by `id` (the HTTP `Mcp-Session-Id`): its
    /// handlers and middleware see it ([`crate::Context::session_id`]).
    pub fn session_with_id(
        &self,
        id: impl Into<Arc<str>>,
        sink: impl Fn(Outbound) -> bool + Send + Sync + 'static,
    ) -> ServerSession {
        let peer = Peer::new(self.settings().clone());
        let link = Arc::new(Link::new(peer, Sink::Function(Arc::new(sink)), Some(id.into())));
        ServerSession { server: self.clone(), link }
    }

    /// A session another instance of this server began (or this one, before a restart),
    /// restored from its `snapshot` without the handshake again; its own messages go to
    /// `sink`, as with [`Self::session_with_id`]. Refused for a snapshot of a revision without
    /// sessions (2026-07-28).
    pub fn restore_session(
        &self,
        id: impl Into<Arc<str>>,
        snapshot: SessionSnapshot,
        sink: impl Fn(Outbound) -> bool + Send + Sync + 'static,
    ) -> Result<ServerSession, SnapshotRefused> {
        let session = self.session_with_id(id, sink);
        session.restore(snapshot)?;
        Ok(session)
    }

    /// The changes of this server's lists and resources, as they happen.
    pub fn changes(&self) -> broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }

    /// Serves one request that stands alone (a 2026-07-28 request over HTTP). Every frame of
    /// it (progress, logs, its answer; for `subscriptions/listen` the stream's notifications)
    /// goes to `frames`, until the answer, or until `cancel` fires (the client went away: no
    /// answer is due then).
    pub async fn serve_stateless(
        &self,
        request: Box<Request<ClientRequest>>,
        frames: mpsc::Sender<Outbound>,
        cancel: CancellationToken,
    ) {
        self.serve_stateless_for(request, None, frames, cancel).await
    }

    /// [`Self::serve_stateless`] for a request its transport authorized for `principal`: its
    /// handlers see it ([`crate::Context::principal`]), it sees and uses only what the
    /// principal's scopes permit, its tasks are the principal's, and the `requestState` of its
    /// rounds is bound to the principal. Its frames go to a channel, or (better for a
    /// long-lived `subscriptions/listen` stream) to a [`crate::stream_channel`].
    pub async fn serve_stateless_for(
        &self,
        request: Box<Request<ClientRequest>>,
        principal: Option<Arc<Principal>>,
        frames: impl Into<Frames>,
        cancel: CancellationToken,
    ) {
        let link = connection::link(Peer::stateless(self.settings().clone()), frames.into().0);
        if principal.is_some() {
            link.set_principal(principal);
        }
        let id = request.id.clone();
        // Subscribed before the request is handled: a listen stream misses nothing after its
        // acknowledgement. (Only a listen stream needs it.)
        let mut changes = matches!(request.body, Ok(ClientRequest::Listen(_))).then(|| self.changes());
        let (_, out) = link.run(|peer| peer.handle(Decoded::Single(Received::Request(request)), now(), self));
        let requests = link.settle(out.events, None);
        link.send(out.transmits, None).await;
        let work = async {
            for (request, handling) in requests {
                // Boxed: the request's future is large, and this one is moved into a box anyway.
                Box::pin(connection::serve_request(self.clone(), link.clone(), request, handling, None)).await;
            }
            // Boxed: only a listen stream gets here, and the other requests' futures should
            // not carry its size.
            if let (true, Some(changes)) = (link.is_listening(), changes.take()) {
                Box::pin(follow_changes(self, &link, changes)).await;
            }
        };
        tokio::select! {
            _ = work => {}
            _ = cancel.cancelled() => {
                let (_, out) = link.run(|peer| peer.abandon(&id));
                link.settle(out.events, None);
            }
        }
    }
}

/// Carries the server's changes to a stateless request's listen stream until it ends.
async fn follow_changes(server: &Server, link: &Link, mut changes: broadcast::Receiver<Change>) {
    while link.is_listening() {
        let change = changes.recv().await;
        if matches!(change, Err(broadcast::error::RecvError::Closed)) {
            // The server is gone: the stream ends with its final result.
            let (_, out) = link.run(|peer| peer.end_listens());
            link.send(out.transmits, None).await;
            break;
        }
        connection::announce(server, link, change).await;
    }
}

/// Where a stateless request's frames go: a tokio channel (`mpsc::Sender<Outbound>`), or a
/// [`crate::stream_channel`], which holds no buffer while nothing waits in it (a listen
/// stream's).
pub struct Frames(Sink);

impl From<mpsc::Sender<Outbound>> for Frames {
    fn from(tx: mpsc::Sender<Outbound>) -> Self {
        Self(Sink::Frames(tx))
    }
}

impl From<crate::stream::StreamSender> for Frames {
    fn from(tx: crate::stream::StreamSender) -> Self {
        Self(Sink::Stream(tx))
    }
}

impl std::fmt::Debug for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frames").finish_non_exhaustive()
    }
}

impl ServerSession {
    /// Handles one decoded frame (a message or a batch). A request runs here until it first
    /// waits (most are answered before this returns), then as a task of its own; its response
    /// and related messages go to `reply` when given (one HTTP request's stream), else to the
    /// session's sink. `initialize` is answered before this returns.
    pub async fn receive(&self, frame: Decoded<FromClient>, reply: Option<mpsc::Sender<Outbound>>) {
        let reply = reply.map(Sink::Frames);
        connection::receive(&self.server, &self.link, frame, reply, &mut Tasks::Detached).await;
    }

    /// The work of answering one request, for the transport to run where it likes: in the
    /// task that received it, say, saving a hand-over. Its answer and related messages go to
    /// `reply`. The request counts as in flight (cancellable) from this call on.
    pub fn request(
        &self,
        request: Box<Request<ClientRequest>>,
        reply: mpsc::Sender<Outbound>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let reply = Sink::Frames(reply);
        let link = self.link.clone();
        let (_, out) = link.run(|peer| peer.handle(Decoded::Single(Received::Request(request)), now(), &self.server));
        let requests = link.settle(out.events, Some(&reply));
        let server = self.server.clone();
        async move {
            link.send(out.transmits, Some(&reply)).await;
            for (request, handling) in requests {
                connection::serve_request(server.clone(), link.clone(), request, handling, Some(reply.clone())).await;
            }
        }
    }

    /// Gives up on a request of this session that is in flight (the transport gave up on
    /// it): its work is cancelled, and no answer is sent.
    pub fn cancel(&self, id: &RequestId) {
        let (_, out) = self.link.run(|peer| peer.abandon(id));
        self.link.settle(out.events, None);
    }

    /// Tells the session's client about a change, if its revision and subscriptions call for it.
    pub async fn announce(&self, change: &Change) {
        connection::announce(&self.server, &self.link, Ok(change.clone())).await;
    }

    /// Who the session's requests come from, as its transport authorized them.
    pub fn principal(&self) -> Option<Arc<Principal>> {
        self.link.principal()
    }

    /// Sets who the session's requests come from (its transport authorized them): the
    /// requests received from now on see it. The transport binds a session to the party that
    /// opened it ([`Principal::same_party`]) and calls this with each request's principal,
    /// whose scopes may have grown since (a step-up).
    pub fn set_principal(&self, principal: Option<Arc<Principal>>) {
        self.link.set_principal(principal);
    }

    /// The session's negotiated state (revision, client, log level, subscriptions), once
    /// `initialize` has been answered: what a shared store keeps of it.
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        self.link.read(|peer| peer.snapshot())
    }

    /// Brings the session to the state `snapshot` describes (another instance changed its log
    /// level or subscriptions).
    pub fn restore(&self, snapshot: SessionSnapshot) -> Result<(), SnapshotRefused> {
        self.link.run(|peer| peer.restore(snapshot)).0
    }

    /// How many times the session's state changed here (see
    /// [`ServerPeer::state_changes`](mcpwire_protocol::engine::ServerPeer::state_changes)): when it
    /// grew since the last [`Self::snapshot`] kept, keep one again.
    pub fn state_changes(&self) -> u64 {
        self.link.read(|peer| peer.state_changes())
    }

    /// Makes the ids of the requests the session sends its client from now on `PREFIX-N`
    /// (see [`ServerPeer::set_request_id_prefix`](mcpwire_protocol::engine::ServerPeer::set_request_id_prefix)).
    pub fn set_request_id_prefix(&self, prefix: Option<Arc<str>>) {
        self.link.run(|peer| peer.set_request_id_prefix(prefix));
    }

    /// Whether a request the session sent its client waits for the answer with this id here.
    pub fn awaits(&self, id: &RequestId) -> bool {
        self.link.read(|peer| peer.waiter(id).is_some())
    }

    /// The negotiated revision, once `initialize` has been answered.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.link.read(|peer| peer.session().map(|s| s.revision))
    }

    /// Ends the session: requests to the client fail, listen streams and task handlers end,
    /// and requests still running are cancelled after the shutdown grace period.
    pub fn close(&self) {
        connection::close(&self.link);
        if self.link.read(|peer| peer.serving()) == 0 {
            return;
        }
        let (grace, link) = (self.server.config().shutdown_grace, self.link.clone());
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            connection::cancel_all(&link);
        });
    }
}
