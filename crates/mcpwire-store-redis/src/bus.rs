//! The bus on Redis pub/sub, and the instances' leases (`PREFIX:instance:ID`). The bus: published on `PREFIX:bus:TOPIC`, heard by one subscription per
//! instance (a pattern over the deployment's channels), made again when its connection is lost.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use mcpwire_server::shared::{Bus, BusMessages, StoreError};

use crate::{Inner, RedisStore};

/// The longest wait between two attempts to subscribe again.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

fn channel_prefix(prefix: &str) -> String {
    format!("{prefix}:bus:")
}

/// Subscribes to the deployment's channels, and keeps a task feeding what is heard to this
/// instance's subscribers (through `inner.local`), subscribing again whenever the connection is
/// lost, until the store is dropped. Returns once the first subscription holds.
pub(crate) async fn listen(client: redis::Client, inner: &Arc<Inner>) -> Result<(), StoreError> {
    let pattern = format!("{}*", channel_prefix(&inner.prefix));
    let first = subscribe(&client, &pattern).await.map_err(|e| StoreError::unavailable("bus subscription", e))?;
    let weak = Arc::downgrade(inner);
    tokio::spawn(pump(client, pattern, first, weak));
    Ok(())
}

async fn subscribe(client: &redis::Client, pattern: &str) -> redis::RedisResult<redis::aio::PubSubStream> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.psubscribe(pattern).await?;
    Ok(pubsub.into_on_message())
}

async fn pump(client: redis::Client, pattern: String, mut messages: redis::aio::PubSubStream, inner: Weak<Inner>) {
    let mut backoff = Duration::from_millis(50);
    loop {
        while let Some(message) = messages.next().await {
            let Some(inner) = inner.upgrade() else { return };
            let channel = message.get_channel_name();
            if let Some(topic) = channel.strip_prefix(&channel_prefix(&inner.prefix)) {
                let _ = inner.local.publish(topic, message.get_payload_bytes().to_vec()).await;
            }
            backoff = Duration::from_millis(50);
        }
        // The connection was lost: subscribe again, waiting longer each time it fails.
        loop {
            if inner.strong_count() == 0 {
                return;
            }
            tracing::warn!("the bus subscription to Redis was lost; subscribing again");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
            match subscribe(&client, &pattern).await {
                Ok(stream) => {
                    messages = stream;
                    break;
                }
                Err(e) => tracing::debug!(error = %e, "subscribing to the bus again failed"),
            }
        }
    }
}

impl Bus for RedisStore {
    fn publish<'a>(&'a self, topic: &'a str, payload: Vec<u8>) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let channel = format!("{}{topic}", channel_prefix(&self.inner.prefix));
            self.run::<i64>("bus publish", redis::cmd("PUBLISH").arg(channel).arg(payload)).await.map(|_| ())
        })
    }

    fn subscribe<'a>(&'a self, topic: &'a str) -> BoxFuture<'a, Result<BusMessages, StoreError>> {
        self.inner.local.subscribe(topic)
    }
}

impl mcpwire_server::shared::Presence for RedisStore {
    fn renew<'a>(&'a self, instance: &'a str, lease: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.set_for("lease renewal", self.key("instance", instance), 1, lease))
    }

    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("EXISTS").arg(self.key("instance", instance)).to_owned();
            self.run::<i64>("lease lookup", &command).await.map(|n| n > 0)
        })
    }

    fn release<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.delete("lease release", self.key("instance", instance)).await.map(|_| ()) })
    }
}
