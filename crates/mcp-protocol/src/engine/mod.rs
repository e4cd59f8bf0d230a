//! Sans-IO protocol machinery: no sockets, no tasks, no clocks of its own. Time is passed in.
//!
//! - [`pending`]: outgoing request ids, correlation of responses, per-request deadlines.
//! - [`progress`]: progress reporting rules (strictly increasing, nothing after the response).
//! - [`cursor`]: opaque, stateless, integrity-protected pagination cursors.
//! - [`request_state`]: sealed state for multi-round-trip (`input_required`) requests.

pub mod cursor;
pub mod pending;
pub mod progress;
pub mod request_state;
