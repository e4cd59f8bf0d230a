//! Sessions shared by the instances of a deployment: kept in a [`SessionStore`], their changes
//! told on a [`Bus`].
//!
//! - `initialize` answered here: the session is written to the store before the answer goes
//!   out, so that the client's next request finds it on any instance.
//! - A request for a session this instance does not hold: it is read from the store and
//!   restored (no handshake again), bound to the party that opened it.
//! - A change of its log level or subscriptions: written before the answer goes out, and told
//!   on the bus (with the session as it is now), so that every instance holding the session
//!   brings its copy up to date.
//! - `DELETE`: forgotten by the store, and told on the bus, so that every instance lets it go.
//! - A change or a `DELETE` waits (half a second at most) until every living instance noted as
//!   holding a copy of the session (`SessionStore::hold`) said it took the news: the client's
//!   next request sees it wherever it goes.
//! - An answer of the client to a request the session sent from another instance (an
//!   elicitation, say, asked by a call running there): passed on over the bus to every
//!   instance, and taken by the one whose request waits for it. The requests of each instance
//!   have ids of their own (`PREFIX-N`, the prefix naming the instance), so that no answer is
//!   taken by the wrong one.
//! - Use: the store's lifetime of the session is restarted at most every eighth of the idle
//!   timeout by each instance, so that a call that changes nothing costs no round trip; the
//!   store forgets a session at most that much before the idle timeout would.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mcpwire_protocol::engine::SessionSnapshot;
use mcpwire_protocol::Principal;
use mcpwire_server::shared::{Bus, Presence, StoreError};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, Notify};

use mcpwire_protocol::message::{Decoded, FromClient, Received};

use crate::events::{EventBudget, SharedEventStore};

use super::{Placement, Session, SessionRecord, SessionStore, Sessions, SessionsFull};

/// Whether `incoming` is an answer a request of this instance's copy of `session` waits for.
fn awaited_here(session: &Session, incoming: &Decoded<FromClient>) -> bool {
    match incoming {
        Decoded::Single(Received::Response(response)) => response.id.as_ref().is_some_and(|id| session.core.awaits(id)),
        _ => false,
    }
}

/// How many of a session's own messages wait for the shared store at most.
const FILED_AHEAD: usize = 1024;

/// Whether `id` has the form of the session ids this server mints (hex, 128 bits).
fn minted(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether a session opened by `owner` may be used by `caller`.
fn owned_by(owner: &Option<String>, caller: &Option<Arc<Principal>>) -> bool {
    match (owner, caller) {
        (Some(owner), Some(caller)) => *owner == caller.key(),
        (Some(_), None) => false,
        (None, _) => true,
    }
}

/// The bus topic of session news.
const SESSIONS_TOPIC: &str = "sessions";

/// The bus topic of the messages POSTed for an HTTP+SSE session to another instance than the
/// one holding its stream.
const SSE_TOPIC: &str = "sse-messages";

/// The bus topic of the client's answers to requests sent from another instance.
const ANSWERS_TOPIC: &str = "answers";

/// The bus topic on which instances say they took a session's news.
const ACKS_TOPIC: &str = "session-acks";

/// How long a change waits for the instances holding the session to take it, at most (one
/// that does not answer in time is late: see the module docs).
const ACK_WAIT: Duration = Duration::from_millis(500);

/// A deployment's shared sessions: the store, the bus, the instances' leases, and this
/// instance's name among them.
pub(crate) struct SharedSessions {
    store: Arc<dyn SessionStore>,
    /// Where the sessions' standalone streams are kept, and within what budget.
    events: Arc<dyn SharedEventStore>,
    budget: EventBudget,
    bus: Arc<dyn Bus>,
    presence: Arc<dyn Presence>,
    origin: Arc<str>,
    /// The news told and not yet taken by every holder, by nonce.
    waiting: Mutex<HashMap<String, Awaited>>,
}

/// A news told, and who has yet to take it.
struct Awaited {
    /// The holders still to answer.
    holders: HashSet<String>,
    /// Notified once none is left.
    taken: Arc<Notify>,
}

impl SharedSessions {
    /// Sessions kept in `store`, their changes told on `bus`, by the instance `instance`
    /// whose lease (and the others') is in `presence`.
    pub(crate) fn new(
        store: Arc<dyn SessionStore>,
        events: (Arc<dyn SharedEventStore>, EventBudget),
        bus: Arc<dyn Bus>,
        presence: Arc<dyn Presence>,
        instance: &str,
    ) -> Self {
        let (events, budget) = events;
        Self { store, events, budget, bus, presence, origin: instance.into(), waiting: Mutex::default() }
    }

    /// Where session `id`'s own messages are filed, in order: its standalone stream in the
    /// shared store, kept `ttl` after the last one. A few are held while the store is slow;
    /// the writer ends with the session.
    pub(crate) fn file_standalone(&self, id: &str, ttl: Duration) -> mpsc::Sender<String> {
        let (tx, mut rx) = mpsc::channel::<String>(FILED_AHEAD);
        let (events, budget, id) = (self.events.clone(), self.budget, id.to_owned());
        tokio::spawn(async move {
            while let Some(frame) = rx.recv().await {
                if let Err(e) = events.append(&id, 0, None, &frame, &budget, ttl).await {
                    tracing::warn!(session = %id, error = %e, "a message of the session's own could not be kept in the shared store");
                }
            }
        });
        tx
    }

    /// What the ids of this instance's requests to clients begin with: 64 bits of its name.
    pub(crate) fn request_id_prefix(&self) -> Arc<str> {
        self.origin[..16].into()
    }
}

/// A message for an HTTP+SSE session, passed on to the instance holding its stream.
#[derive(Serialize, Deserialize)]
struct ForSse {
    session: String,
    /// The body as the client sent it.
    body: String,
}

/// An answer passed on to the other instances.
#[derive(Serialize, Deserialize)]
struct Answer {
    session: String,
    /// The body as the client sent it.
    body: String,
}

impl std::fmt::Debug for SharedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSessions").field("origin", &self.origin).finish_non_exhaustive()
    }
}

impl Session {
    /// Takes the session's state as the shared store keeps it (read there, or told on the
    /// bus), and notes it as kept; whether this copy could take it.
    fn take_state(&self, snapshot: SessionSnapshot) -> bool {
        let taken = self.core.restore(snapshot).is_ok();
        if taken {
            self.saved_changes.store(self.core.state_changes(), Ordering::Relaxed);
        }
        taken
    }
}

/// What one instance tells the others of a session: that it ended, or what it is now (so that
/// an instance holding it brings its copy up to date without a round trip to the store).
#[derive(Serialize, Deserialize)]
struct News {
    origin: String,
    session: String,
    /// The session as kept now; `None`: it ended.
    record: Option<SessionRecord>,
    /// Names this news in the acknowledgements.
    nonce: String,
}

/// An instance took a news (or had no copy of the session to bring up to date).
#[derive(Serialize, Deserialize)]
struct Ack {
    nonce: String,
    instance: String,
}

/// What finding a session came to.
pub(crate) enum Found {
    /// The session, held here now.
    Session(Arc<Session>),
    /// Unknown, ended, expired, or another party's.
    Unknown,
    /// As many sessions are held here as the server may: it cannot be restored now.
    Full,
}

impl Sessions {
    /// Starts hearing the other instances' session news (call once, after [`Sessions::new`]).
    pub(crate) async fn follow_news(self: &Arc<Self>) -> Result<(), StoreError> {
        let Some(shared) = &self.shared else { return Ok(()) };
        let mut news = shared.bus.subscribe(SESSIONS_TOPIC).await?;
        let mut answers = shared.bus.subscribe(ANSWERS_TOPIC).await?;
        let weak: Weak<Sessions> = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(message) = answers.next().await {
                let Some(sessions) = weak.upgrade() else { break };
                let Ok(answer) = serde_json::from_slice::<Answer>(&message) else { continue };
                let held = sessions.map.lock().get(&answer.session).cloned();
                let Some(session) = held else { continue };
                match mcpwire_protocol::codec::read_from_client(&answer.body) {
                    Ok(incoming) if awaited_here(&session, &incoming) => session.core.receive(incoming, None).await,
                    _ => {}
                }
            }
        });
        let mut for_sse = shared.bus.subscribe(SSE_TOPIC).await?;
        let weak: Weak<Sessions> = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(message) = for_sse.next().await {
                let Some(sessions) = weak.upgrade() else { break };
                let Ok(message) = serde_json::from_slice::<ForSse>(&message) else { continue };
                let held = sessions.map.lock().get(&message.session).cloned();
                // Only an HTTP+SSE session's: a Streamable HTTP session is served where it is POSTed.
                if let Some(session) = held.filter(|s| !s.shared) {
                    session.touch();
                    sessions.take_sse_message(&session, &message.body).await;
                }
            }
        });
        let mut acks = shared.bus.subscribe(ACKS_TOPIC).await?;
        let weak: Weak<Sessions> = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(message) = acks.next().await {
                let Some(sessions) = weak.upgrade() else { break };
                let (Some(shared), Ok(ack)) = (&sessions.shared, serde_json::from_slice::<Ack>(&message)) else {
                    continue;
                };
                let mut waiting = shared.waiting.lock();
                if let Some(awaited) = waiting.get_mut(&ack.nonce) {
                    awaited.holders.remove(&ack.instance);
                    if awaited.holders.is_empty() {
                        awaited.taken.notify_one();
                        waiting.remove(&ack.nonce);
                    }
                }
            }
        });
        let weak: Weak<Sessions> = Arc::downgrade(self);
        let origin = shared.origin.clone();
        tokio::spawn(async move {
            while let Some(message) = news.next().await {
                let Some(sessions) = weak.upgrade() else { break };
                let Ok(news) = serde_json::from_slice::<News>(&message) else { continue };
                if *news.origin == *origin {
                    continue;
                }
                let held = sessions.map.lock().get(&news.session).cloned();
                if let Some(session) = held {
                    match news.record {
                        None => {
                            sessions.remove(&news.session);
                        }
                        Some(record) => {
                            session.take_state(record.snapshot);
                        }
                    }
                }
                // Taken (or nothing held to bring up to date): the instance that told may answer.
                if let Some(shared) = &sessions.shared {
                    let ack = Ack { nonce: news.nonce, instance: origin.to_string() };
                    let _ = shared.bus.publish(ACKS_TOPIC, serde_json::to_vec(&ack).unwrap_or_default()).await;
                }
            }
        });
        Ok(())
    }

    /// The session with this id for `caller`: held here, or restored from the shared store.
    pub(crate) async fn find(&self, id: &str, caller: &Option<Arc<Principal>>) -> Result<Found, StoreError> {
        if let Some(session) = self.get(id) {
            if session.shared {
                if session.gone.load(Ordering::Relaxed) {
                    self.remove(id);
                    return Ok(Found::Unknown);
                }
                self.keep_alive(&session);
            }
            return Ok(Found::Session(session));
        }
        let Some(shared) = &self.shared else { return Ok(Found::Unknown) };
        // Not of the form this server mints: not one of ours, and not worth a lookup.
        if !minted(id) {
            return Ok(Found::Unknown);
        }
        let Some(record) = shared.store.get(id, self.idle_timeout).await? else { return Ok(Found::Unknown) };
        if !owned_by(&record.owner, caller) {
            return Ok(Found::Unknown);
        }
        let session = self.build(id.to_owned(), true);
        let first_read = record.snapshot.clone();
        if !session.take_state(record.snapshot) {
            // A record this instance cannot serve (a revision without sessions): as unknown.
            return Ok(Found::Unknown);
        }
        if let Some(caller) = caller {
            session.core.set_principal(Some(caller.clone()));
        }
        match self.admit(session) {
            Ok(session) => {
                // A change made elsewhere from now on waits for this copy to take it.
                shared.store.hold(id, &shared.origin, self.idle_timeout).await?;
                // One made between the read and now was told before this copy was listening:
                // read again (once per instance and session, when it is first served here).
                match shared.store.get(id, self.idle_timeout).await? {
                    Some(now) if now.snapshot != first_read => {
                        session.take_state(now.snapshot);
                    }
                    Some(_) => {}
                    // Ended meanwhile: the news of it was missed too.
                    None => {
                        self.remove(id);
                        return Ok(Found::Unknown);
                    }
                }
                Ok(Found::Session(session))
            }
            Err(SessionsFull) => Ok(Found::Full),
        }
    }

    /// Restarts the session's lifetime in the store, if this instance has not lately; in the
    /// background, so that the request does not wait for it.
    pub(crate) fn keep_alive(&self, session: &Arc<Session>) {
        let Some(shared) = &self.shared else { return };
        let every = self.idle_timeout / 8;
        {
            let mut touched = session.touched.lock();
            if touched.elapsed() < every {
                return;
            }
            *touched = Instant::now();
        }
        let (store, ttl, session) = (shared.store.clone(), self.idle_timeout, session.clone());
        tokio::spawn(async move {
            match store.touch(&session.id, ttl).await {
                Ok(true) => {}
                // Ended elsewhere, and the news of it lost: let go at its next request.
                Ok(false) => session.gone.store(true, Ordering::Relaxed),
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "a session's lifetime could not be restarted in the store")
                }
            }
        });
    }

    /// Keeps the session's state in the store if it changed here since it was last kept
    /// (`initialize`, `logging/setLevel`, a subscription), and tells the other instances.
    pub(crate) async fn persist(&self, session: &Session) -> Result<(), StoreError> {
        let Some(shared) = self.shared.as_ref().filter(|_| session.shared) else { return Ok(()) };
        let changes = session.core.state_changes();
        if changes == session.saved_changes.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(snapshot) = session.core.snapshot() else { return Ok(()) };
        let record = SessionRecord { snapshot, owner: session.core.principal().map(|p| p.key()) };
        shared.store.put(&session.id, &record, self.idle_timeout).await?;
        if session.saved_changes.load(Ordering::Relaxed) == 0 {
            // First kept by this instance (it began the session): it holds a copy.
            shared.store.hold(&session.id, &shared.origin, self.idle_timeout).await?;
        }
        session.saved_changes.fetch_max(changes, Ordering::Relaxed);
        *session.touched.lock() = Instant::now();
        let expected = self.other_holders(shared, &session.id).await;
        self.tell(shared, &session.id, Some(record), expected).await;
        Ok(())
    }

    /// Passes on an answer of the client that no request of this instance waits for (a
    /// request of the session sent from another instance); whether it was passed on.
    pub(crate) async fn pass_on_answer(&self, session: &Session, incoming: &Decoded<FromClient>, body: &str) -> bool {
        let Some(shared) = self.shared.as_ref().filter(|_| session.shared) else { return false };
        let Decoded::Single(Received::Response(response)) = incoming else { return false };
        let Some(id) = &response.id else { return false };
        if session.core.awaits(id) {
            return false;
        }
        let answer = Answer { session: session.id.clone(), body: body.to_owned() };
        let payload = serde_json::to_vec(&answer).unwrap_or_default();
        if let Err(e) = shared.bus.publish(ANSWERS_TOPIC, payload).await {
            tracing::warn!(session = %session.id, error = %e, "an answer could not be passed on to the other instances");
        }
        true
    }

    /// Ends a session everywhere: here, in the store, and on the other instances; whether it
    /// was open.
    pub(crate) async fn end(&self, id: &str) -> Result<bool, StoreError> {
        let here = self.remove(id);
        let Some(shared) = &self.shared else { return Ok(here) };
        // Read before the store forgets them with the session.
        let expected = self.other_holders(shared, id).await;
        let kept = shared.store.remove(id).await?;
        self.tell(shared, id, None, expected).await;
        Ok(here || kept)
    }

    /// The living instances other than this one noted as holding a copy of session `id`:
    /// those a change of it waits for.
    async fn other_holders(&self, shared: &SharedSessions, id: &str) -> HashSet<String> {
        let holders = match shared.store.holders(id).await {
            Ok(holders) => holders,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "the holders of a session could not be read");
                Vec::new()
            }
        };
        // Only the living answer: one that stopped holds nothing any more.
        let mut expected = HashSet::new();
        for holder in holders.into_iter().filter(|h| **h != *shared.origin) {
            if shared.presence.alive(&holder).await.unwrap_or(false) {
                expected.insert(holder);
            }
        }
        expected
    }

    /// Tells the other instances of a session's change, and waits (at most [`ACK_WAIT`]) until
    /// each of `expected` (the living holders of a copy) took it: the client's next request,
    /// wherever it goes, sees the change.
    async fn tell(&self, shared: &SharedSessions, id: &str, record: Option<SessionRecord>, expected: HashSet<String>) {
        let nonce = mcpwire_protocol::id::random_id();
        let taken = Arc::new(Notify::new());
        let waits = !expected.is_empty();
        if waits {
            shared.waiting.lock().insert(nonce.clone(), Awaited { holders: expected, taken: taken.clone() });
        }
        let news = News { origin: shared.origin.to_string(), session: id.to_owned(), record, nonce: nonce.clone() };
        let payload = serde_json::to_vec(&news).unwrap_or_default();
        if let Err(e) = shared.bus.publish(SESSIONS_TOPIC, payload).await {
            // The others find out when they restart the session's lifetime (see the module docs).
            tracing::warn!(session = %id, error = %e, "the other instances could not be told of a session's change");
        } else if waits && tokio::time::timeout(ACK_WAIT, taken.notified()).await.is_err() {
            tracing::warn!(session = %id, "an instance holding the session did not take its change in time");
        }
        shared.waiting.lock().remove(&nonce);
    }

    /// Notes in the store that HTTP+SSE session `session` (opened by `owner`) lives here, so
    /// that the others pass its messages on; kept while the session lives, forgotten when it
    /// ends.
    pub(crate) async fn place_sse(&self, session: &Arc<Session>, owner: Option<String>) -> Result<(), StoreError> {
        let Some(shared) = &self.shared else { return Ok(()) };
        let placement = Placement { instance: shared.origin.to_string(), owner };
        let (store, ttl) = (shared.store.clone(), self.idle_timeout);
        store.place(&session.id, &placement, ttl).await?;
        let (id, closed) = (session.id.clone(), session.closed.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(ttl / 8) => {
                        if let Err(e) = store.place(&id, &placement, ttl).await {
                            tracing::warn!(session = %id, error = %e, "an HTTP+SSE session's place could not be kept");
                        }
                    }
                    _ = closed.cancelled() => {
                        if let Err(e) = store.unplace(&id).await {
                            tracing::debug!(session = %id, error = %e, "an HTTP+SSE session's place was not forgotten");
                        }
                        break;
                    }
                }
            }
        });
        Ok(())
    }

    /// Whether HTTP+SSE session `id` lives on another instance, still running, and is
    /// `caller`'s: its messages are then passed on there ([`Self::pass_on_sse`]).
    pub(crate) async fn placed_elsewhere(&self, id: &str, caller: &Option<Arc<Principal>>) -> Result<bool, StoreError> {
        let Some(shared) = &self.shared else { return Ok(false) };
        if !minted(id) {
            return Ok(false);
        }
        let Some(placement) = shared.store.placement(id).await? else { return Ok(false) };
        if *placement.instance == *shared.origin || !owned_by(&placement.owner, caller) {
            return Ok(false);
        }
        shared.presence.alive(&placement.instance).await
    }

    /// Passes a message for HTTP+SSE session `id` on to the instance holding its stream.
    pub(crate) async fn pass_on_sse(&self, id: &str, body: &str) -> Result<(), StoreError> {
        let Some(shared) = &self.shared else { return Ok(()) };
        let message = ForSse { session: id.to_owned(), body: body.to_owned() };
        shared.bus.publish(SSE_TOPIC, serde_json::to_vec(&message).unwrap_or_default()).await
    }

    /// Notes, in the background, that this instance let its copy of a session go.
    pub(crate) fn let_go(&self, id: &str) {
        let Some(shared) = &self.shared else { return };
        let (store, id, origin) = (shared.store.clone(), id.to_owned(), shared.origin.clone());
        tokio::spawn(async move {
            if let Err(e) = store.release(&id, &origin).await {
                tracing::debug!(session = %id, error = %e, "letting a session's copy go was not noted");
            }
        });
    }
}
