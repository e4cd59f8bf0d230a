//! JSON-RPC batches (2025-03-26 only): their answers are gathered and sent together once
//! each of their requests is answered.

use super::{Batch, Offer, ServerPeer};
use crate::codec;
use crate::engine::peer::Now;
use crate::error::ErrorObject;
use crate::frame::{Frame, FrameKind};
use crate::jsonrpc::{InvalidMessage, RequestId};
use crate::message::{FromClient, Received};
use crate::method::Method;

impl<W, H: Clone + Default> ServerPeer<W, H> {
    pub(super) fn handle_batch(&mut self, items: Vec<Result<FromClient, InvalidMessage>>, now: Now, offer: &dyn Offer) {
        let allowed = self.session.as_ref().is_some_and(|s| s.revision.allows_batches());
        if !allowed {
            let e = ErrorObject::invalid_request(
                "JSON-RPC batches are only part of protocol revision 2025-03-26 (after initialize)",
            );
            return self.core.reject(None, &e);
        }
        let key = self.next_batch;
        self.next_batch += 1;
        let first = items.iter().find_map(|i| match i {
            Ok(Received::Request(r)) => Some(r.id.clone()),
            _ => None,
        });
        let requests = items.iter().filter(|i| matches!(i, Ok(Received::Request(_)))).count();
        self.batches.insert(key, Batch { first, reading: true, waiting: requests, answers: Vec::new() });
        for item in items {
            match item {
                Err(invalid) => {
                    let text = codec::write_error(invalid.id.as_ref(), &invalid.error);
                    self.batch_answer(key, text, false);
                }
                Ok(Received::Request(r)) if r.method.known() == Some(Method::Initialize) => {
                    let e = ErrorObject::invalid_request("initialize must not be part of a batch");
                    self.batch_answer(key, codec::write_error(Some(&r.id), &e), true);
                }
                Ok(message) => self.handle_message(message, Some(key), now, offer),
            }
        }
        if let Some(batch) = self.batches.get_mut(&key) {
            batch.reading = false;
        }
        self.flush_batch(key);
    }

    /// Files one answer of a batch (`counts`: it answers one of its requests).
    fn batch_answer(&mut self, key: u64, text: String, counts: bool) {
        if let Some(batch) = self.batches.get_mut(&key) {
            batch.answers.push(text);
            if counts {
                batch.waiting = batch.waiting.saturating_sub(1);
            }
        }
    }

    /// Sends a batch's answers once every request of it is answered.
    pub(super) fn flush_batch(&mut self, key: u64) {
        let done = self.batches.get(&key).is_some_and(|b| !b.reading && b.waiting == 0);
        if !done {
            return;
        }
        let Some(batch) = self.batches.remove(&key) else { return };
        if batch.answers.is_empty() {
            return;
        }
        let text = format!("[{}]", batch.answers.join(","));
        self.core.transmit(batch.first, Frame::new(text, FrameKind::Batch));
    }

    /// Sends a response: alone, or into its batch.
    pub(super) fn send_response(&mut self, id: &RequestId, batch: Option<u64>, text: String, error: Option<i64>) {
        match batch {
            Some(key) => {
                self.batch_answer(key, text, true);
                self.flush_batch(key);
            }
            None => self.core.transmit(Some(id.clone()), Frame::response(text, Some(id.clone()), error)),
        }
    }
}
