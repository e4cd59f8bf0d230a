//! The bus: news one instance publishes and every instance (itself included) hears.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::StoreError;

/// The messages of one topic, as they are published: a message published while the stream
/// was not read may be skipped (a slow reader falls behind, a connection to the store is
/// lost and made again), never reordered.
pub type BusMessages = BoxStream<'static, Vec<u8>>;

/// Carries messages between the instances of one deployment: list and resource changes,
/// session updates, cancellations, answers to server-to-client requests.
///
/// Delivery is at most once, to the instances subscribed when the message is published
/// (Redis pub/sub, say): what must not be lost is kept in a store, and the bus only tells
/// that something changed.
pub trait Bus: Send + Sync + 'static {
    /// Publishes `payload` on `topic`, to every subscriber of every instance, this one
    /// included.
    fn publish<'a>(&'a self, topic: &'a str, payload: Vec<u8>) -> BoxFuture<'a, Result<(), StoreError>>;

    /// What is published on `topic` from now on (once this returns).
    fn subscribe<'a>(&'a self, topic: &'a str) -> BoxFuture<'a, Result<BusMessages, StoreError>>;
}

/// A [`Bus`] within one process: every subscriber of a topic hears what is published on it.
/// For one instance, and for tests that run several instances in one process.
#[derive(Default)]
pub struct LocalBus {
    topics: parking_lot::Mutex<std::collections::HashMap<String, broadcast::Sender<Vec<u8>>>>,
}

/// How many messages a subscriber of a [`LocalBus`] may fall behind before it skips some.
const LOCAL_BACKLOG: usize = 1024;

impl LocalBus {
    /// A bus with no subscriber yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn sender(&self, topic: &str) -> broadcast::Sender<Vec<u8>> {
        self.topics.lock().entry(topic.to_owned()).or_insert_with(|| broadcast::channel(LOCAL_BACKLOG).0).clone()
    }
}

impl Bus for LocalBus {
    fn publish<'a>(&'a self, topic: &'a str, payload: Vec<u8>) -> BoxFuture<'a, Result<(), StoreError>> {
        // Nobody subscribed: nobody to tell.
        let _ = self.sender(topic).send(payload);
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe<'a>(&'a self, topic: &'a str) -> BoxFuture<'a, Result<BusMessages, StoreError>> {
        let stream = futures::stream::unfold(self.sender(topic).subscribe(), |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(message) => return Some((message, rx)),
                    // Fell behind: what was skipped is skipped (see [`BusMessages`]).
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return None,
                }
            }
        });
        Box::pin(std::future::ready(Ok(Box::pin(stream) as BusMessages)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    #[tokio::test]
    async fn every_subscriber_of_a_topic_hears_it_and_no_other() {
        let bus = LocalBus::new();
        let mut a = bus.subscribe("t").await.unwrap();
        let mut b = bus.subscribe("t").await.unwrap();
        let mut other = bus.subscribe("u").await.unwrap();
        bus.publish("t", b"hello".to_vec()).await.unwrap();
        assert_eq!(a.next().await.unwrap(), b"hello");
        assert_eq!(b.next().await.unwrap(), b"hello");
        bus.publish("u", b"x".to_vec()).await.unwrap();
        assert_eq!(other.next().await.unwrap(), b"x", "the first message of u is u's own");
    }
}
