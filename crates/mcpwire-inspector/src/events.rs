//! What the page is told as it happens (`GET /api/events`): notifications, progress, the
//! server's questions, history entries, the frames on the wire. The latest events are kept,
//! so that a page opened (or reloaded) later sees them too.

use std::collections::VecDeque;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// How many events are kept for pages that open later.
const BACKLOG: usize = 2000;

/// One event, numbered, as the JSON text sent.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) seq: u64,
    pub(crate) json: String,
}

/// The event hub.
pub(crate) struct Events {
    tx: broadcast::Sender<Event>,
    kept: Mutex<(u64, VecDeque<Event>)>,
}

impl Events {
    pub(crate) fn new() -> Self {
        Self { tx: broadcast::channel(1024).0, kept: Mutex::new((0, VecDeque::new())) }
    }

    /// Sends `{seq, kind, data}` to every page.
    pub(crate) fn emit(&self, kind: &str, data: Value) {
        let mut kept = self.kept.lock();
        kept.0 += 1;
        let seq = kept.0;
        let event = Event { seq, json: json!({"seq": seq, "kind": kind, "data": data}).to_string() };
        if kept.1.len() == BACKLOG {
            kept.1.pop_front();
        }
        kept.1.push_back(event.clone());
        // Sent under the lock: a subscriber sees every event after its backlog, in order.
        let _ = self.tx.send(event);
    }

    /// The events kept, and a receiver of those that follow.
    pub(crate) fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let kept = self.kept.lock();
        (kept.1.iter().cloned().collect(), self.tx.subscribe())
    }
}
