//! Legacy-era sessions over HTTP: each one is a [`ServerSession`] fed by POSTs, whose own
//! messages are filed in its standalone stream, read by the GET stream (or, for HTTP+SSE,
//! by its one SSE stream). An idle session holds no task and no channel.
//!
//! With a shared [`SessionStore`] (scale-out, see `shared`), a Streamable HTTP session is kept
//! there too, and any instance serves it: each instance keeps the sessions it served lately,
//! and restores the others from the store.

mod shared;
mod store;

pub(crate) use shared::Found;
pub(crate) use shared::SharedSessions;
pub use store::{Placement, SessionRecord, SessionStore};

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire_protocol::frame::Outbound;
use mcpwire_protocol::ProtocolVersion;
use mcpwire_server::{Server, ServerSession};
use parking_lot::Mutex;
use tokio::sync::broadcast::error::RecvError;

use mcpwire_server::Change;

use crate::events::{EventStore, SessionStreams};

/// One session.
pub(crate) struct Session {
    pub(crate) id: String,
    /// The runtime's side of the session.
    pub(crate) core: ServerSession,
    /// The session's SSE streams (0: the standalone stream).
    pub(crate) streams: SessionStreams,
    /// How far the standalone stream has been delivered to a GET stream.
    pub(crate) delivered: AtomicU64,
    /// Whether a GET stream is reading the standalone stream (only one at a time).
    pub(crate) streaming: Mutex<bool>,
    last_seen: Mutex<Instant>,
    /// Cancelled when the session ends, so that its streams end too.
    pub(crate) closed: tokio_util::sync::CancellationToken,
    /// Whether the session is kept in the shared store (a Streamable HTTP session of a
    /// deployment that has one; an HTTP+SSE session is its stream, and stays here).
    pub(crate) shared: bool,
    /// The engine's [`ServerSession::state_changes`] when the session was last kept in the
    /// shared store.
    pub(crate) saved_changes: AtomicU64,
    /// When this instance last restarted the session's lifetime in the shared store.
    pub(crate) touched: Mutex<Instant>,
    /// The shared store no longer has the session (found when its lifetime was restarted):
    /// ended elsewhere, the news of it lost. It is let go at its next request.
    pub(crate) gone: std::sync::atomic::AtomicBool,
    /// A shared session's own messages go to the standalone stream in the shared store,
    /// through this, in order (see [`SharedSessions::file_standalone`]): every instance adds
    /// to it, and the GET stream reads it wherever it is open.
    filed: Option<tokio::sync::mpsc::Sender<String>>,
}

impl Session {
    /// Whether the session's client resumes SSE streams that the server closes (2025-11-25).
    pub(crate) fn polls(&self) -> bool {
        self.core.protocol_version().is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }

    fn touch(&self) {
        *self.last_seen.lock() = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_seen.lock().elapsed()
    }
}

/// Marks a session's GET stream as gone when dropped.
pub(crate) struct StreamSlot(pub(crate) Arc<Session>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        *self.0.streaming.lock() = false;
    }
}

impl Session {
    /// Files a message of the session's own in its standalone stream, for the GET stream.
    pub(crate) fn file(&self, store: &dyn EventStore, frame: &str) {
        if let Some(filed) = &self.filed {
            if filed.try_send(frame.to_owned()).is_err() {
                // The store is far behind (or gone): the bus's and the store's delivery is at
                // most once, and a message to the client is not worth unbounded memory.
                tracing::warn!(session = %self.id, "a message of the session's own was dropped: the shared store is behind");
            }
            return;
        }
        let log = self.streams.standalone();
        let seq = log.next_seq();
        store.append(&self.id, 0, seq, frame);
        log.changed.notify_waiters();
    }

    /// Claims the session's one GET stream.
    pub(crate) fn claim_stream(self: &Arc<Self>) -> Option<StreamSlot> {
        let mut s = self.streaming.lock();
        if *s {
            return None;
        }
        *s = true;
        Some(StreamSlot(self.clone()))
    }
}

/// Every open session.
pub(crate) struct Sessions {
    server: Server,
    pub(crate) store: Arc<dyn EventStore>,
    map: Mutex<HashMap<String, Arc<Session>>>,
    pub(crate) idle_timeout: Duration,
    /// The deployment's shared store of sessions, if it has one.
    pub(crate) shared: Option<SharedSessions>,
    /// Sessions held at once; a new one beyond is refused.
    max: usize,
}

/// A new session is refused: as many are open as the server may hold.
#[derive(Debug)]
pub(crate) struct SessionsFull;

impl Sessions {
    pub(crate) fn new(
        server: Server,
        idle_timeout: Duration,
        max: usize,
        store: Arc<dyn EventStore>,
        shared: Option<SharedSessions>,
    ) -> Arc<Self> {
        let mut changes = server.changes();
        let sessions = Arc::new(Self { server, store, map: Mutex::default(), idle_timeout, shared, max });
        let weak = Arc::downgrade(&sessions);
        let period = (idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(sessions) = weak.upgrade() else { break };
                sessions.expire_idle();
            }
        });
        // One task tells every session of the server's changes.
        let weak = Arc::downgrade(&sessions);
        tokio::spawn(async move {
            loop {
                let changed = match changes.recv().await {
                    Ok(change) => vec![change],
                    Err(RecvError::Lagged(_)) => vec![Change::Tools, Change::Prompts, Change::Resources],
                    Err(RecvError::Closed) => break,
                };
                let Some(sessions) = weak.upgrade() else { break };
                // A shared session is told where its GET stream is open: the other instances
                // that served it lately would file the news where nobody reads it.
                let open: Vec<Arc<Session>> =
                    sessions.map.lock().values().filter(|s| !s.shared || *s.streaming.lock()).cloned().collect();
                for change in &changed {
                    for session in &open {
                        session.core.announce(change).await;
                    }
                }
            }
        });
        sessions
    }

    /// Opens a session, unless as many are open as the server may hold. A Streamable HTTP
    /// session (`streamable`) is kept in the shared store, if there is one, once initialized.
    pub(crate) fn create(&self, streamable: bool) -> Result<Arc<Session>, SessionsFull> {
        if self.map.lock().len() >= self.max {
            return Err(SessionsFull);
        }
        // 128 bits from the CSPRNG, as hex (visible ASCII).
        let id = mcpwire_protocol::id::random_id();
        let shared = streamable && self.shared.is_some();
        self.admit(self.build(id, shared))
    }

    /// A session object, its own messages filed in its standalone stream.
    fn build(&self, id: String, shared: bool) -> Arc<Session> {
        let store = self.store.clone();
        Arc::new_cyclic(|weak: &std::sync::Weak<Session>| {
            let weak = weak.clone();
            let core = self.server.session_with_id(id.as_str(), move |out| match weak.upgrade() {
                Some(session) => {
                    // The session's own stream is not one request's: a hint to close it means nothing.
                    if let Outbound::Frame(frame) = out {
                        session.file(&*store, &frame.text);
                    }
                    true
                }
                None => false,
            });
            if let (true, Some(deployment)) = (shared, &self.shared) {
                // Its requests to the client are told apart from other instances' (see
                // `Sessions::pass_on_answer`).
                core.set_request_id_prefix(Some(deployment.request_id_prefix()));
            }
            let filed = match (shared, &self.shared) {
                (true, Some(deployment)) => Some(deployment.file_standalone(&id, self.idle_timeout)),
                _ => None,
            };
            Session {
                filed,
                id,
                core,
                streams: SessionStreams::default(),
                delivered: AtomicU64::new(0),
                streaming: Mutex::new(false),
                last_seen: Mutex::new(Instant::now()),
                closed: Default::default(),
                shared,
                saved_changes: AtomicU64::new(0),
                touched: Mutex::new(Instant::now()),
                gone: Default::default(),
            }
        })
    }

    /// Holds `session` among the open ones, unless as many are open as the server may hold.
    fn admit(&self, session: Arc<Session>) -> Result<Arc<Session>, SessionsFull> {
        let mut map = self.map.lock();
        if map.len() >= self.max {
            // Others were opened meanwhile.
            drop(map);
            session.core.close();
            return Err(SessionsFull);
        }
        map.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// The session with this id, marked as active.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let s = self.map.lock().get(id).cloned()?;
        s.touch();
        Some(s)
    }

    /// Ends a session here (not in the shared store: see [`Self::end`]); returns whether it
    /// was open here.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let Some(session) = self.map.lock().remove(id) else { return false };
        self.let_go_here(&session);
        true
    }

    /// Ends what this instance holds of a session it no longer holds: its streams, its
    /// engine, its events, and (shared) its place among the session's holders.
    fn let_go_here(&self, session: &Session) {
        session.closed.cancel();
        session.core.close();
        self.store.forget_session(&session.id);
        if session.shared {
            self.let_go(&session.id);
        }
    }

    /// Takes a message POSTed for an HTTP+SSE session (here, or to another instance that
    /// passed it on): what cannot be read is answered on the session's stream.
    pub(crate) async fn take_sse_message(&self, session: &Session, body: &str) {
        match mcpwire_protocol::codec::read_from_client(body) {
            Ok(incoming) => session.core.receive(incoming, None).await,
            Err(e) => session.file(&*self.store, &mcpwire_protocol::jsonrpc::encode_error(e.id(), e.error())),
        }
    }

    /// How many sessions are open.
    pub(crate) fn len(&self) -> usize {
        self.map.lock().len()
    }

    fn expire_idle(&self) {
        let timeout = self.idle_timeout;
        self.map.lock().retain(|id, s| {
            // A session with a GET stream open is in use even when quiet.
            let streaming = *s.streaming.lock();
            let keep = streaming || s.idle_for() < timeout;
            if !keep {
                // A shared session is only let go here: the store forgets it by itself when
                // it has been idle as long everywhere.
                tracing::debug!(session = %id, "idle session expired");
                self.let_go_here(s);
            }
            keep
        });
    }
}
