//! A connected pair of in-memory connections.

use tokio::sync::mpsc;

use crate::{Connection, Frame, Outbound, CHANNEL_CAPACITY};

/// Two connections wired to each other: what one sends, the other receives.
pub fn pair() -> (Connection, Connection) {
    let (a_tx, a_rx) = mpsc::channel::<Outbound>(CHANNEL_CAPACITY);
    let (b_tx, b_rx) = mpsc::channel::<Outbound>(CHANNEL_CAPACITY);
    (bridge(b_rx, a_tx), bridge(a_rx, b_tx))
}

/// Turns a receiver of typed frames into a connection's inbound stream of text.
fn bridge(mut from_peer: mpsc::Receiver<Outbound>, to_peer: mpsc::Sender<Outbound>) -> Connection {
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    tokio::spawn(async move {
        while let Some(out) = from_peer.recv().await {
            // A hint to close a stream means nothing between two in-memory ends.
            let Outbound::Frame(frame) = out else { continue };
            if tx.send(Ok(Frame::new(frame.text))).await.is_err() {
                break;
            }
        }
    });
    Connection::new(rx, to_peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_cross_and_close() {
        let (mut a, b) = pair();
        b.outgoing.send(Outbound::text("hello")).await.unwrap();
        assert_eq!(a.incoming.recv().await, Some(Ok(Frame::new("hello"))));
        drop(b);
        assert_eq!(a.incoming.recv().await, None);
    }
}
