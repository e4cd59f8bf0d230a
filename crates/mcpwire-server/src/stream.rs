//! A bounded queue of frames for one long-lived stream (a 2026-07-28 listen stream): what a
//! tokio `mpsc` channel of [`Outbound`] does for it, without the channel's first block,
//! allocated when the channel is made and kept for its life: 32 slots of `Outbound`, about
//! 3 KiB per stream, where a listen stream holds a frame or two at a time, now and then.
//! Here the queue's buffer exists only while frames wait in it.

use std::collections::VecDeque;
use std::sync::Arc;

use mcpwire_protocol::frame::Outbound;
use parking_lot::Mutex;
use tokio::sync::Notify;

/// A bounded queue of frames for one stream: [`StreamSender`]s put frames in, waiting for
/// room when `capacity` frames wait; the one [`StreamReceiver`] takes them out, and learns
/// when every sender is gone; senders learn when the receiver is gone.
pub fn stream_channel(capacity: usize) -> (StreamSender, StreamReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State { frames: VecDeque::new(), senders: 1, receiver: true }),
        capacity: capacity.max(1),
        readable: Notify::new(),
        writable: Notify::new(),
    });
    (StreamSender(shared.clone()), StreamReceiver(shared))
}

struct Shared {
    state: Mutex<State>,
    capacity: usize,
    /// The receiver waits here for a frame, or for the last sender to go.
    readable: Notify,
    /// Senders wait here for room, or for the receiver to go.
    writable: Notify,
}

struct State {
    frames: VecDeque<Outbound>,
    senders: usize,
    receiver: bool,
}

/// The sending side of a [`stream_channel`].
pub struct StreamSender(Arc<Shared>);

/// The receiving side of a [`stream_channel`].
pub struct StreamReceiver(Arc<Shared>);

impl std::fmt::Debug for StreamSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamSender").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for StreamReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamReceiver").finish_non_exhaustive()
    }
}

impl Clone for StreamSender {
    fn clone(&self) -> Self {
        self.0.state.lock().senders += 1;
        Self(self.0.clone())
    }
}

impl Drop for StreamSender {
    fn drop(&mut self) {
        let last = {
            let mut state = self.0.state.lock();
            state.senders -= 1;
            state.senders == 0
        };
        if last {
            self.0.readable.notify_one();
        }
    }
}

impl Drop for StreamReceiver {
    fn drop(&mut self) {
        let frames = {
            let mut state = self.0.state.lock();
            state.receiver = false;
            std::mem::take(&mut state.frames)
        };
        drop(frames);
        self.0.writable.notify_waiters();
    }
}

impl StreamSender {
    /// Puts `out` in the queue if there is room now: `Ok(false)` if the receiver is gone,
    /// the frame back if the queue is full.
    pub fn try_send(&self, out: Outbound) -> Result<bool, Outbound> {
        {
            let mut state = self.0.state.lock();
            if !state.receiver {
                return Ok(false);
            }
            if state.frames.len() >= self.0.capacity {
                return Err(out);
            }
            state.frames.push_back(out);
        }
        self.0.readable.notify_one();
        Ok(true)
    }

    /// Puts `out` in the queue, waiting for room; `false` if the receiver is gone.
    pub async fn send(&self, mut out: Outbound) -> bool {
        loop {
            let room = self.0.writable.notified();
            tokio::pin!(room);
            // Registered before the queue is looked at: room made meanwhile is not missed.
            room.as_mut().enable();
            match self.try_send(out) {
                Ok(sent) => return sent,
                Err(back) => out = back,
            }
            room.await;
        }
    }
}

impl StreamReceiver {
    /// The next frame; `None` once every sender is gone and the queue is empty. The queue's
    /// buffer is let go whenever it empties.
    pub async fn recv(&mut self) -> Option<Outbound> {
        loop {
            let ready = self.0.readable.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            {
                let mut state = self.0.state.lock();
                // Senders wait only on a full queue.
                let was_full = state.frames.len() >= self.0.capacity;
                if let Some(out) = state.frames.pop_front() {
                    if state.frames.is_empty() {
                        state.frames = VecDeque::new();
                    }
                    drop(state);
                    if was_full {
                        self.0.writable.notify_waiters();
                    }
                    return Some(out);
                }
                if state.senders == 0 {
                    return None;
                }
            }
            ready.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire_protocol::frame::{Frame, FrameKind};

    fn frame(text: &str) -> Outbound {
        Outbound::Frame(Frame::new(
            text.to_owned(),
            FrameKind::Notification { method: mcpwire_protocol::Method::Progress.into() },
        ))
    }

    fn text(out: Option<Outbound>) -> Option<String> {
        match out? {
            Outbound::Frame(f) => Some(f.text),
            Outbound::CloseStream => Some("close".into()),
        }
    }

    #[tokio::test]
    async fn frames_come_in_order_and_the_end_after_them() {
        let (tx, mut rx) = stream_channel(4);
        let other = tx.clone();
        assert!(tx.send(frame("a")).await);
        assert!(other.send(frame("b")).await);
        drop(tx);
        assert_eq!(text(rx.recv().await).as_deref(), Some("a"));
        drop(other);
        assert_eq!(text(rx.recv().await).as_deref(), Some("b"));
        assert_eq!(text(rx.recv().await), None);
    }

    #[tokio::test]
    async fn a_full_queue_waits_for_room() {
        let (tx, mut rx) = stream_channel(1);
        assert_eq!(tx.try_send(frame("a")).map_err(|_| ()), Ok(true));
        assert!(tx.try_send(frame("b")).is_err(), "full");
        let sending = tokio::spawn(async move { tx.send(frame("b")).await });
        tokio::task::yield_now().await;
        assert_eq!(text(rx.recv().await).as_deref(), Some("a"));
        assert!(sending.await.unwrap());
        assert_eq!(text(rx.recv().await).as_deref(), Some("b"));
        assert_eq!(text(rx.recv().await), None);
    }

    #[tokio::test]
    async fn senders_learn_that_the_receiver_is_gone() {
        let (tx, rx) = stream_channel(1);
        assert!(tx.send(frame("a")).await);
        let waiting = tokio::spawn(async move { tx.send(frame("b")).await });
        tokio::task::yield_now().await;
        drop(rx);
        assert!(!waiting.await.unwrap());
    }

    #[tokio::test]
    async fn the_receiver_waits_for_a_frame() {
        let (tx, mut rx) = stream_channel(2);
        let reading = tokio::spawn(async move { text(rx.recv().await) });
        tokio::task::yield_now().await;
        assert!(tx.send(frame("a")).await);
        assert_eq!(reading.await.unwrap().as_deref(), Some("a"));
    }
}
