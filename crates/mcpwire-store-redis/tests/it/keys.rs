//! Rotated sealing keys on a real Redis: two instances (two connections) of one deployment
//! hold the same keys for an epoch, what was sealed under one epoch opens on both for the
//! next one and is refused after, every key has a lifetime, and a store that cannot be
//! reached leaves the keys held as they were. The epochs are given (`refresh(epoch)`): no
//! test waits for time to pass.

use std::time::Duration;

use mcpwire_protocol::engine::cursor::{fingerprint, CursorCodec, CursorError};
use mcpwire_protocol::engine::request_state::{StateContents, StateError, StateSealer};
use mcpwire_store_redis::{RedisStore, RingKeeper};
use mcpwire_testkit::redis::RedisServer;

const DAY: Duration = Duration::from_secs(24 * 3600);

fn contents() -> StateContents {
    StateContents {
        request: "r".into(),
        client: None,
        expires_at_ms: u64::MAX,
        answers: Default::default(),
        state: None,
    }
}

#[tokio::test]
async fn instances_share_the_keys_of_an_epoch_and_a_state_opens_for_one_epoch_more() {
    let redis = RedisServer::start();
    let prefix = format!("keys-{}", std::process::id());
    let a = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let b = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let (ring_a, keeper_a) = a.key_ring("request-state", DAY).await.unwrap();
    let (ring_b, keeper_b) = b.key_ring("request-state", DAY).await.unwrap();
    // Both at one epoch (the clock's may have turned between the two calls).
    let e = keeper_a.epoch_now();
    keeper_a.refresh(e).await.unwrap();
    keeper_b.refresh(e).await.unwrap();
    let ids = [e - 1, e, e + 1].map(RingKeeper::key_id);
    assert_eq!(ring_a.ids(), ids.to_vec(), "E - 1, E and E + 1 are held");
    assert_eq!(ring_a.current_id(), RingKeeper::key_id(e));
    for id in ids {
        assert_eq!(ring_a.get(id), ring_b.get(id), "the same key {id} on both instances");
    }
    let (other, _keeper) = a.key_ring("cursor", DAY).await.unwrap();
    assert_ne!(other.get(ids[1]), ring_a.get(ids[1]), "another name, other keys");

    // Sealed on a under E: opens on b under E and E + 1, not under E + 2.
    let (on_a, on_b) = (StateSealer::with_ring(ring_a.clone()), StateSealer::with_ring(ring_b.clone()));
    let sealed = on_a.seal(&contents());
    assert_eq!(on_b.open(&sealed, "r", None, 0), Ok(contents()));
    keeper_a.refresh(e + 1).await.unwrap();
    keeper_b.refresh(e + 1).await.unwrap();
    assert_eq!(ring_b.current_id(), RingKeeper::key_id(e + 1));
    assert_eq!(on_a.open(&sealed, "r", None, 0), Ok(contents()), "E is held at E + 1");
    assert_eq!(on_b.open(&sealed, "r", None, 0), Ok(contents()));
    let newer = on_b.seal(&contents());
    assert_eq!(on_a.open(&newer, "r", None, 0), Ok(contents()), "sealed under E + 1 on b, opened on a");
    keeper_a.refresh(e + 2).await.unwrap();
    keeper_b.refresh(e + 2).await.unwrap();
    assert_eq!(on_a.open(&sealed, "r", None, 0), Err(StateError::Invalid), "E is dropped at E + 2");
    assert_eq!(on_b.open(&sealed, "r", None, 0), Err(StateError::Invalid));
    assert_eq!(on_a.open(&newer, "r", None, 0), Ok(contents()));
    assert_eq!(ring_a.ids(), [e + 1, e + 2, e + 3].map(RingKeeper::key_id).to_vec());

    // A cursor likewise.
    let (cursors_a, keeper_ca) = a.key_ring("cursor", DAY).await.unwrap();
    let (cursors_b, keeper_cb) = b.key_ring("cursor", DAY).await.unwrap();
    for k in [&keeper_ca, &keeper_cb] {
        k.refresh(e).await.unwrap();
    }
    let fp = fingerprint(["x", "y"]);
    let cursor = CursorCodec::with_ring(cursors_a).encode(1, fp);
    let on_b = CursorCodec::with_ring(cursors_b);
    keeper_cb.refresh(e + 1).await.unwrap();
    assert_eq!(on_b.decode(&cursor, fp), Ok(1));
    keeper_cb.refresh(e + 2).await.unwrap();
    assert_eq!(on_b.decode(&cursor, fp), Err(CursorError::Invalid));
}

#[tokio::test]
async fn every_key_has_a_lifetime_of_a_few_periods() {
    let redis = RedisServer::start();
    let prefix = format!("ttl-{}", std::process::id());
    let store = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let period = Duration::from_secs(600);
    let (_ring, keeper) = store.key_ring("request-state", period).await.unwrap();
    let e = keeper.epoch_now();
    keeper.refresh(e + 5).await.unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:secret:*")).query_async(&mut c).await.unwrap();
    assert_eq!(keys.len(), 6, "E - 1 .. E + 1 and E + 4 .. E + 6: {keys:?}");
    for key in keys {
        assert!(key.starts_with(&format!("{prefix}:secret:request-state:")), "{key}");
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut c).await.unwrap();
        assert!(ttl > 0 && ttl <= 4 * 600_000, "{key}: {ttl} ms");
    }
}

#[tokio::test]
async fn an_unreachable_store_leaves_the_keys_held() {
    let mut redis = RedisServer::start();
    let prefix = format!("gone-{}", std::process::id());
    let store = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let (ring, keeper) = store.key_ring("cursor", DAY).await.unwrap();
    let e = keeper.epoch_now();
    keeper.refresh(e).await.unwrap();
    let before: Vec<_> = ring.ids().into_iter().map(|id| (id, ring.get(id))).collect();
    redis.stop();
    assert!(keeper.refresh(e + 1).await.is_err(), "the store is gone");
    let after: Vec<_> = ring.ids().into_iter().map(|id| (id, ring.get(id))).collect();
    assert_eq!(after, before, "the keys held are kept");
    assert_eq!(ring.current_id(), RingKeeper::key_id(e));
}
