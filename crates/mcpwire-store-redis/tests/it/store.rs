//! The plain stores on a real Redis: shared secrets, handle values, sessions, instance leases,
//! and the bus, each seen from two connections (two instances).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use mcpwire_server::handles::HandleStore;
use mcpwire_server::shared::{Bus, Presence};
use mcpwire_store_redis::RedisStore;
use mcpwire_testkit::redis::RedisServer;

async fn two(redis: &RedisServer) -> (RedisStore, RedisStore) {
    let prefix = format!("store-{}", rand_suffix());
    let a = RedisStore::connect(&redis.url(), &prefix).await.expect("Redis answers");
    let b = RedisStore::connect(&redis.url(), &prefix).await.expect("Redis answers");
    (a, b)
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

#[tokio::test]
async fn a_shared_secret_is_made_once_and_read_by_every_instance() {
    let redis = RedisServer::start();
    let (a, b) = two(&redis).await;
    let first = a.shared_secret("state").await.unwrap();
    assert_eq!(b.shared_secret("state").await.unwrap(), first, "the second instance reads the first's");
    assert_ne!(a.shared_secret("cursor").await.unwrap(), first, "another name, another secret");
    let other = RedisStore::connect(&redis.url(), "another-deployment").await.unwrap();
    assert_ne!(other.shared_secret("state").await.unwrap(), first, "another prefix, another secret");
}

#[tokio::test]
async fn handle_values_are_shared_slide_on_use_and_expire() {
    let redis = RedisServer::start();
    let (a, b) = two(&redis).await;
    let ttl = Duration::from_millis(400);
    a.put("cart:h1", b"one".to_vec(), ttl).await.unwrap();
    assert_eq!(b.get("cart:h1", ttl).await.unwrap().as_deref(), Some(&b"one"[..]));
    // Read within each lifetime, it lives past the first one.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(b.get("cart:h1", ttl).await.unwrap().is_some(), "a handle in use stays");
    }
    assert!(a.remove("cart:h1").await.unwrap());
    assert!(!b.remove("cart:h1").await.unwrap(), "removed once");
    a.put("cart:h2", b"two".to_vec(), Duration::from_millis(50)).await.unwrap();
    // Redis keeps its own time: the lifetime is let run out for real (a read would restart it).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(b.get("cart:h2", ttl).await.unwrap().is_none(), "an unused handle expires");
}

#[tokio::test]
async fn a_lease_lives_while_renewed_and_ends_when_released_or_run_out() {
    let redis = RedisServer::start();
    let (a, b) = two(&redis).await;
    a.renew("i1", Duration::from_secs(30)).await.unwrap();
    assert!(b.alive("i1").await.unwrap());
    a.release("i1").await.unwrap();
    assert!(!b.alive("i1").await.unwrap(), "released");
    a.renew("i2", Duration::from_millis(50)).await.unwrap();
    mcpwire_testkit::eventually("a lease not renewed runs out", || async {
        (!b.alive("i2").await.unwrap()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_bus_reaches_every_instance_of_the_deployment_and_no_other() {
    let redis = RedisServer::start();
    let (a, b) = two(&redis).await;
    let stranger = RedisStore::connect(&redis.url(), "a-stranger").await.unwrap();
    let mut on_a = a.subscribe("news").await.unwrap();
    let mut on_b = b.subscribe("news").await.unwrap();
    let mut on_stranger = stranger.subscribe("news").await.unwrap();
    b.publish("news", b"hello".to_vec()).await.unwrap();
    let heard = |s: &'static str| move |m: Option<Vec<u8>>| assert_eq!(m.as_deref(), Some(&b"hello"[..]), "{s}");
    heard("a")(tokio::time::timeout(Duration::from_secs(10), on_a.next()).await.unwrap());
    heard("b")(tokio::time::timeout(Duration::from_secs(10), on_b.next()).await.unwrap());
    stranger.publish("news", b"mine".to_vec()).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), on_stranger.next()).await.unwrap();
    assert_eq!(first.as_deref(), Some(&b"mine"[..]), "another deployment heard nothing of ours first");
}

#[tokio::test]
async fn the_bus_comes_back_after_redis_does() {
    let mut redis = RedisServer::start();
    let (a, b) = two(&redis).await;
    let a: Arc<dyn Bus> = Arc::new(a);
    let mut on_b = b.subscribe("news").await.unwrap();
    redis.stop();
    assert!(a.publish("news", b"lost".to_vec()).await.is_err(), "no Redis: the publish fails, at once");
    redis.restart();
    // Published until heard (bounded): the subscription is made again with backoff.
    let mut heard = None;
    for _ in 0..100 {
        if a.publish("news", b"back".to_vec()).await.is_ok() {
            if let Ok(Some(message)) = tokio::time::timeout(Duration::from_millis(200), on_b.next()).await {
                heard = Some(message);
                break;
            }
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let heard = heard.expect("the bus works again within 30 s of Redis coming back");
    assert_eq!(heard, b"back");
}
