//! Whether a request may be served now: at most [`ServerConfig::max_in_flight`] requests of
//! all connections at once, and [`ServerConfig::max_in_flight_per_session`] of one
//! connection (a legacy session, a stdio connection). One more is refused at once, with an
//! error that says so, rather than queued: a client flooding the server must not make it
//! hold unbounded work.
//!
//! [`ServerConfig::max_in_flight`]: crate::ServerConfig::max_in_flight
//! [`ServerConfig::max_in_flight_per_session`]: crate::ServerConfig::max_in_flight_per_session

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::link::Link;
use crate::refusal::Refusal;
use crate::server::Server;

/// A request admitted: it counts as in flight until this drops.
pub(crate) struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Admits a request of `link` (already handed over by its engine), or says why not.
pub(crate) fn admit<'a>(server: &'a Server, link: &Link) -> Result<InFlight<'a>, Refusal> {
    let config = server.config();
    // The engine counts the requests of the connection it serves, this one included.
    if link.read(|peer| peer.serving()) > config.max_in_flight_per_session {
        return Err(Refusal::Busy { limit: config.max_in_flight_per_session, per_session: true });
    }
    let in_flight = &server.inner.in_flight;
    // Counted now, and uncounted when the guard drops: at once if refused, else when served.
    let slot = InFlight(in_flight);
    if in_flight.fetch_add(1, Ordering::Relaxed) >= config.max_in_flight {
        return Err(Refusal::Busy { limit: config.max_in_flight, per_session: false });
    }
    Ok(slot)
}
