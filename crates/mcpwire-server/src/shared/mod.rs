//! State shared by several instances of one server (scale-out): the error every shared store
//! answers with, and the bus that carries news between instances.
//!
//! The stores themselves live next to what they keep ([`crate::HandleStore`] here, sessions
//! and resumable events in `mcpwire-http`); `mcpwire-store-redis` implements them all, and the bus, on
//! one Redis. Without a shared store every instance keeps its own state in memory.

mod bus;
pub(crate) mod changes;
mod error;
mod presence;

pub use bus::{Bus, BusMessages, LocalBus};
pub(crate) use changes::SharedChangesSlot;
pub use changes::CHANGES_TOPIC;
pub use error::StoreError;
pub use presence::{Instance, LeaseGuard, Presence};
