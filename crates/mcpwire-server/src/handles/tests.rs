//! The behaviour of [`Handles`] over a store, by owner (what a request's principal gives),
//! on the paused tokio clock.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::types::{CallToolResult, Tool};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::advance;

use super::*;
use crate::shared::StoreError;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Cart {
    items: Vec<String>,
}

const TTL: Duration = Duration::from_secs(30 * 60);
const ALICE: Option<&str> = Some("https://as alice app");
const BOB: Option<&str> = Some("https://as bob app");

fn carts() -> Handles<Cart> {
    Handles::new("cart", TTL)
}

fn cart(items: &[&str]) -> Cart {
    Cart { items: items.iter().map(|s| s.to_string()).collect() }
}

#[tokio::test(start_paused = true)]
async fn a_handle_reads_back_and_changes() {
    let carts = carts();
    let h = carts.create_for(ALICE, cart(&["tea"])).await.unwrap();
    assert!(h.starts_with("cart_"), "{h}");
    assert_eq!(carts.get_for(ALICE, &h).await.unwrap(), cart(&["tea"]));
    let n = carts
        .update_for(ALICE, &h, |c| {
            c.items.push("milk".into());
            c.items.len()
        })
        .await
        .unwrap();
    assert_eq!(n, 2);
    carts.put_for(ALICE, &h, cart(&["bread"])).await.unwrap();
    assert_eq!(carts.get_for(ALICE, &h).await.unwrap(), cart(&["bread"]));
    assert!(carts.remove_for(ALICE, &h).await.unwrap());
    assert!(carts.get_for(ALICE, &h).await.unwrap_err().is_unknown());
    assert!(!carts.remove_for(ALICE, &h).await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn handles_expire_after_their_ttl_unused() {
    let carts = carts();
    let h = carts.create_for(None, Cart::default()).await.unwrap();
    advance(TTL - Duration::from_secs(1)).await;
    assert!(carts.get_for(None, &h).await.is_ok());
    advance(TTL + Duration::from_secs(1)).await;
    let e = carts.get_for(None, &h).await.unwrap_err();
    assert!(e.is_unknown());
    // Not brought back by a write either.
    assert!(carts.put_for(None, &h, Cart::default()).await.unwrap_err().is_unknown());
    assert!(carts.get_for(None, &h).await.unwrap_err().is_unknown());
}

#[tokio::test(start_paused = true)]
async fn every_use_restarts_the_lifetime() {
    let carts = carts();
    let h = carts.create_for(None, Cart::default()).await.unwrap();
    // Four periods of 20 minutes: more than the 30-minute lifetime in all, but never 30
    // minutes unused.
    for _ in 0..2 {
        advance(Duration::from_secs(20 * 60)).await;
        carts.get_for(None, &h).await.unwrap();
        advance(Duration::from_secs(20 * 60)).await;
        carts.update_for(None, &h, |c| c.items.push("x".into())).await.unwrap();
    }
    assert_eq!(carts.get_for(None, &h).await.unwrap().items.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_full_store_forgets_the_least_recently_used_handle() {
    let store = Arc::new(MemoryHandleStore::with_max_entries(2));
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, store.clone());
    let a = carts.create_for(None, cart(&["a"])).await.unwrap();
    let b = carts.create_for(None, cart(&["b"])).await.unwrap();
    carts.get_for(None, &a).await.unwrap();
    let c = carts.create_for(None, cart(&["c"])).await.unwrap();
    assert!(carts.get_for(None, &b).await.unwrap_err().is_unknown(), "b was the least recently used");
    assert!(carts.get_for(None, &a).await.is_ok() && carts.get_for(None, &c).await.is_ok());
    assert_eq!(store.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn another_principals_handle_is_unknown_and_untouched() {
    let carts = carts();
    let h = carts.create_for(ALICE, cart(&["tea"])).await.unwrap();
    let as_unknown = carts.get_for(ALICE, "cart_00000000000000000000000000000000").await.unwrap_err().to_string();
    for other in [BOB, None] {
        let e = carts.get_for(other, &h).await.unwrap_err();
        assert!(e.is_unknown());
        // Word for word what an unknown handle gets, but for the handle itself.
        assert_eq!(e.to_string().replace(&h, "cart_00000000000000000000000000000000"), as_unknown);
        assert!(carts.put_for(other, &h, cart(&["stolen"])).await.unwrap_err().is_unknown());
        assert!(carts.update_for(other, &h, |c| c.items.clear()).await.unwrap_err().is_unknown());
        assert!(!carts.remove_for(other, &h).await.unwrap());
    }
    assert_eq!(carts.get_for(ALICE, &h).await.unwrap(), cart(&["tea"]), "still Alice's, unchanged");
    // And Alice's anonymous calls are someone else too.
    let anonymous = carts.create_for(None, Cart::default()).await.unwrap();
    assert!(carts.get_for(ALICE, &anonymous).await.unwrap_err().is_unknown());
}

/// A store that counts lookups, to show that malformed handles never reach it.
#[derive(Default)]
struct Counting {
    inner: MemoryHandleStore,
    gets: std::sync::atomic::AtomicUsize,
}

impl HandleStore for Counting {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.put(key, value, ttl)
    }
    fn get<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.get(key, ttl)
    }
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.remove(key)
    }
}

#[tokio::test(start_paused = true)]
async fn malformed_handles_are_unknown_without_a_lookup() {
    let store = Arc::new(Counting::default());
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, store.clone());
    let h = carts.create_for(None, Cart::default()).await.unwrap();
    let orders: Handles<Cart> = Handles::with_store("order", TTL, store.clone());
    let huge = format!("cart_{}", "a".repeat(1 << 20));
    for bad in ["", "cart_", "cart_xyz", &h.to_uppercase(), &h.replace("cart_", "order_"), &huge, "cart_\u{0}"] {
        let e = carts.get_for(None, bad).await.unwrap_err();
        assert!(e.is_unknown(), "{bad:?}");
        assert!(e.to_string().len() < 300, "the handle is not echoed in full");
        assert!(!carts.remove_for(None, bad).await.unwrap());
    }
    // A handle of another kind is malformed for this one, even in the same store.
    assert!(orders.get_for(None, &h).await.unwrap_err().is_unknown());
    assert_eq!(store.gets.load(std::sync::atomic::Ordering::Relaxed), 0);
}

/// A store that is down.
struct Down;

impl HandleStore for Down {
    fn put<'a>(&'a self, _: &'a str, _: Vec<u8>, _: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Err(StoreError::unavailable("handle put", std::io::Error::other("connection refused"))) })
    }
    fn get<'a>(&'a self, _: &'a str, _: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async { Err(StoreError::unavailable("handle get", std::io::Error::other("connection refused"))) })
    }
    fn remove<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async { Err(StoreError::unavailable("handle remove", std::io::Error::other("connection refused"))) })
    }
}

#[tokio::test]
async fn a_store_that_is_down_is_unavailable_and_says_retry() {
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, Arc::new(Down));
    let e = carts.create_for(None, Cart::default()).await.unwrap_err();
    assert!(e.is_unavailable() && !e.is_unknown());
    assert_eq!(e.to_string(), "the cart service is temporarily unavailable: retry in a moment");
    let h = "cart_0123456789abcdef0123456789abcdef";
    assert!(carts.get_for(None, h).await.unwrap_err().is_unavailable());
    assert!(carts.remove_for(None, h).await.unwrap_err().is_unavailable());
    let source = std::error::Error::source(&e).unwrap();
    assert!(source.downcast_ref::<StoreError>().is_some_and(StoreError::is_unavailable));
}

#[tokio::test]
async fn a_value_of_another_shape_is_unreadable() {
    let store = Arc::new(MemoryHandleStore::new());
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, store.clone());
    let h = "cart_0123456789abcdef0123456789abcdef";
    let other = serde_json::to_vec(&json!({"owner": null, "value": {"items": 3}})).unwrap();
    store.put(&format!("cart:{h}"), other, TTL).await.unwrap();
    let e = carts.get_for(None, h).await.unwrap_err();
    assert!(e.is_unreadable() && !e.is_unknown());
    assert!(e.to_string().ends_with("can no longer be read: create a new one"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn values_are_kept_as_json_with_their_owner_under_kind_and_handle() {
    let store = Arc::new(MemoryHandleStore::new());
    let carts: Handles<Cart> = Handles::with_store("cart", TTL, store.clone());
    let h = carts.create_for(ALICE, cart(&["tea"])).await.unwrap();
    let bytes = store.get(&format!("cart:{h}"), TTL).await.unwrap().unwrap();
    let stored: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(stored, json!({"owner": ALICE, "value": {"items": ["tea"]}}));
}

#[test]
fn the_creating_tool_tells_the_policy_and_is_named_in_errors() {
    let carts = carts();
    let tool = Tool::new("cart_create", "Creates an empty cart.", json!({"type": "object"}));
    let def = ToolDef::new(tool, |_, _| async { Ok(CallToolResult::text("")) }).creates(&carts);
    assert_eq!(
        def.definition().description.as_deref(),
        Some(
            "Creates an empty cart.\n\nReturns a cart handle: pass it to the other cart tools. \
             A handle expires after 30 minutes unused; after that, create a new one."
        )
    );
    assert_eq!(carts.clone().creator(), Some("cart_create"), "clones share the name");
    assert_eq!(
        carts.unknown("cart_1").to_string(),
        r#"unknown or expired cart handle "cart_1": create a new one with cart_create"#
    );
}

#[test]
#[should_panic(expected = "a handle kind")]
fn a_kind_that_cannot_start_a_handle_is_refused_at_once() {
    let _: Handles<Cart> = Handles::new("my cart", TTL);
}
