//! Sans-IO protocol machinery: no sockets, no tasks, no clocks of its own. Time is passed in.
//!
//! - [`pending`]: outgoing request ids, correlation of responses, per-request deadlines.
//! - [`progress`]: progress reporting rules (strictly increasing, nothing after the response).
//! - [`cursor`]: opaque, stateless, integrity-protected pagination cursors.

pub mod cursor;
pub mod pending;
pub mod progress;
