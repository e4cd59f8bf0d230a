//! Where legacy sessions are kept for every instance of a deployment: the [`SessionStore`]
//! trait and what it keeps of a session, [`SessionRecord`].

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::engine::SessionSnapshot;
use mcpwire_server::shared::StoreError;
use serde::{Deserialize, Serialize};

/// What a shared store keeps of a legacy session: what `initialize` negotiated, its log level
/// and subscriptions, and who may use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The negotiated state.
    pub snapshot: SessionSnapshot,
    /// The party that opened it ([`mcpwire_protocol::Principal::key`]), when the endpoint is
    /// protected: a request with another party's token is answered as for an unknown session.
    pub owner: Option<String>,
}

/// Where an HTTP+SSE session (2024-11-05) lives: its stream is the session, so it is served
/// by the instance holding the stream, which the others pass its messages on to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The instance holding the session's stream ([`mcpwire_server::shared::Instance::id`]).
    pub instance: String,
    /// The party that opened it ([`mcpwire_protocol::Principal::key`]), when the endpoint is
    /// protected: a message with another party's token is answered as for an unknown session.
    pub owner: Option<String>,
}

/// Keeps the legacy sessions of a deployment, so that any instance serves any session
/// (`mcpwire-store-redis` implements it on Redis). Each session is kept for a lifetime that slides:
/// written or read with a `ttl`, it is forgotten `ttl` after the last time.
pub trait SessionStore: Send + Sync + 'static {
    /// Keeps `record` as session `id` for `ttl`, replacing what was kept.
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Session `id`, its lifetime restarted at `ttl`; `None` if unknown, ended or expired.
    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>>;

    /// Restarts the lifetime of session `id` at `ttl`; whether it is still kept.
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Forgets session `id`; whether it was kept.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Notes that instance `instance` holds a copy of session `id` (for `ttl`, restarted by
    /// each call): a change of the session waits for the holders to take it.
    fn hold<'a>(&'a self, id: &'a str, instance: &'a str, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Notes that instance `instance` let its copy of session `id` go.
    fn release<'a>(&'a self, id: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The instances noted as holding a copy of session `id`.
    fn holders<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;

    /// Notes where HTTP+SSE session `id` lives, for `ttl` (restarted by each call). A store
    /// that does not (the default) leaves HTTP+SSE sessions to sticky routing.
    fn place<'a>(
        &'a self,
        _id: &'a str,
        _placement: &'a Placement,
        _ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }

    /// Where HTTP+SSE session `id` lives; `None` if unknown, ended or expired.
    fn placement<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Option<Placement>, StoreError>> {
        Box::pin(async { Ok(None) })
    }

    /// Forgets where HTTP+SSE session `id` lived (it ended).
    fn unplace<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}
