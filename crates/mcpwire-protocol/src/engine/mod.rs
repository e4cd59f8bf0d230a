//! The sans-IO protocol engine: no sockets, no tasks, no clocks of its own; time is passed in.
//!
//! One engine per connection (or per stateless request), for either role, in the style of
//! quinn-proto: inputs (`handle`, `handle_timeout`), outputs (`take_events` and
//! `take_transmits`, which the runtimes drain after each input; `poll_event` and
//! `poll_transmit` one at a time; `poll_timeout`) and mutators (`respond`, requests,
//! `cancel`, notifications). The async runtimes are thin drivers of it.
//!
//! - [`ServerPeer`]: the legacy lifecycle and version negotiation, modern per-request
//!   negotiation, which methods exist and are offered, the requests it answers itself,
//!   listen streams, input rounds, announcements.
//! - [`ClientPeer`]: era detection, the `_meta` of modern requests, serving the server's
//!   requests.
//! - Both: request ids and correlation, deadlines, cancellation both ways (a cancel and a
//!   response that cross are settled: whichever comes second is ignored), progress rules.
//!
//! Pieces used by both and by the runtimes:
//! - [`progress`]: progress reporting rules (strictly increasing, nothing after the response).
//! - [`cursor`]: opaque, stateless, integrity-protected pagination cursors.
//! - [`request_state`]: sealed state for multi-round-trip (`input_required`) requests.
//! - [`key_ring`]: the keys that seal cursors and request states, rotated with overlap.
//! - [`rounds`]: one round of a multi-round request.
//! - [`task`]: task records and their life cycle.

mod client;
pub mod cursor;
pub mod key_ring;
mod peer;
pub mod progress;
pub mod request_state;
mod role;
pub mod rounds;
mod server;
pub mod task;
#[cfg(test)]
mod tests;

pub use client::{
    ClientNews, ClientPeer, ClientSettings, ConnectError, InputRequest, Negotiated, NotSent, Reply, RequestOptions,
    Resume,
};
pub use peer::{Event, Events, Failure, Now, SendOptions, Transmit, Transmits};
pub use role::{Client, Role, Server};
pub use server::{
    missing_capability, tasks_extension_missing, Change, Declared, Feature, NotAsked, Offer, Scope, ServedRequest,
    ServerNews, ServerPeer, ServerSettings, Session, SessionSnapshot, SnapshotRefused, TaskMethods,
};
