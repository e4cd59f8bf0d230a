//! A connected pair of in-memory connections.

use tokio::sync::mpsc;

use crate::{Connection, Frame, CHANNEL_CAPACITY};

/// Two connections wired to each other: what one sends, the other receives.
pub fn pair() -> (Connection, Connection) {
    let (a_tx, a_rx) = mpsc::channel::<String>(CHANNEL_CAPACITY);
    let (b_tx, b_rx) = mpsc::channel::<String>(CHANNEL_CAPACITY);
    (bridge(b_rx, a_tx), bridge(a_rx, b_tx))
}

/// Turns a receiver of plain frames into a connection's inbound stream.
fn bridge(mut from_peer: mpsc::Receiver<String>, to_peer: mpsc::Sender<String>) -> Connection {
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    tokio::spawn(async move {
        while let Some(frame) = from_peer.recv().await {
            if tx.send(Ok(Frame::new(frame))).await.is_err() {
                break;
            }
        }
    });
    Connection { incoming: rx, outgoing: to_peer, writer: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_cross_and_close() {
        let (mut a, b) = pair();
        b.outgoing.send("hello".into()).await.unwrap();
        assert_eq!(a.incoming.recv().await, Some(Ok(Frame::new("hello"))));
        drop(b);
        assert_eq!(a.incoming.recv().await, None);
    }
}
