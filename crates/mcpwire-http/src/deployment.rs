//! This instance as one of a deployment's ([`crate::McpHttp::shared`]): the shared stores, the
//! bus, and its lease, renewed while it runs so that the others can tell when it stopped.

use std::sync::Arc;
use std::time::Duration;

use mcpwire_server::shared::{Bus, Instance, LeaseGuard, Presence};

use crate::events::SharedEventStore;

/// What an instance of a deployment shares with the others.
pub(crate) struct Deployment {
    pub(crate) events: Arc<dyn SharedEventStore>,
    pub(crate) bus: Arc<dyn Bus>,
    pub(crate) presence: Arc<dyn Presence>,
    pub(crate) instance: Instance,
    /// How long this instance's lease lasts: another instance resuming a stream of this one's
    /// checks the lease this often (at half of it).
    pub(crate) lease: Duration,
    /// Renews the lease while this instance lives.
    pub(crate) _lease: LeaseGuard,
}
