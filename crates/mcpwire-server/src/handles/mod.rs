//! Handles: state a tool keeps for later tools, named by an opaque handle the model passes
//! back as an argument (`cart_3fa9…`), instead of state kept in a server session.
//!
//! A tool makes a handle with [`Handles::create`]; later tools take it as an argument and
//! read or change its value ([`Handles::get`], [`Handles::update`]). Values live in a
//! [`HandleStore`]: one in memory ([`MemoryHandleStore`]) for a single instance, or one
//! shared by every instance behind a load balancer (Redis, `mcpwire-store-redis`), so that a
//! handle made on one instance works on all. A handle belongs to the principal that made it
//! ([`crate::Context::principal`]), and expires when unused for its lifetime.
//!
//! - `store`: the trait of a store.
//! - `memory`: the store of one process.
//! - `error`: why a handle could not be used, in words for the model.
//! - `words`: what a handle looks like, and the retention policy in words.

mod error;
mod memory;
mod store;
mod words;

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use error::HandleError;
pub use memory::{MemoryHandleStore, DEFAULT_MAX_ENTRIES};
pub use store::HandleStore;

use crate::authoring::ToolDef;
use crate::context::Context;

/// The values of one kind of handle (carts, say), each under an opaque handle a model passes
/// from tool to tool.
///
/// A handle is the kind, `_`, and 128 random bits in hex (`cart_3fa94c…`): nobody guesses
/// one. Its value is kept as JSON in the store, with the principal that made it, and lives
/// until it has gone unused for the lifetime given here (every `get` or `update` restarts
/// it). A handle of another principal, an expired one and a malformed one are all answered
/// alike, as unknown ([`HandleError::is_unknown`]).
///
/// Give it to the server as state, take it in tools as [`State<Handles<T>>`](crate::State),
/// and mark the tool that creates handles with [`ToolDef::creates`]: its description then
/// tells the model how long handles live, and an unknown handle's error names it.
///
/// Clones share everything (the store, the name of the creating tool).
///
/// ```
/// use std::time::Duration;
/// use mcpwire_server::{Context, Handles, Server, State, ToolError};
///
/// #[derive(serde::Serialize, serde::Deserialize, Default)]
/// struct Cart {
///     items: Vec<String>,
/// }
///
/// async fn cart_add(ctx: &Context, carts: &Handles<Cart>, cart: &str, item: String) -> Result<usize, ToolError> {
///     // An unknown or expired handle: a tool error telling the model to create a new one.
///     Ok(carts.update(ctx, cart, |c| { c.items.push(item); c.items.len() }).await?)
/// }
///
/// let carts: Handles<Cart> = Handles::new("cart", Duration::from_secs(30 * 60));
/// assert_eq!(
///     carts.retention(),
///     "Returns a cart handle: pass it to the other cart tools. \
///      A handle expires after 30 minutes unused; after that, create a new one."
/// );
/// let server = Server::builder("shop", "1.0").state(carts.clone()).build();
/// ```
pub struct Handles<T> {
    inner: Arc<Inner>,
    _value: PhantomData<fn(T) -> T>,
}

struct Inner {
    kind: String,
    ttl: Duration,
    store: Arc<dyn HandleStore>,
    /// The tool that creates handles of this kind ([`ToolDef::creates`]), for errors.
    creator: OnceLock<String>,
}

/// What the store keeps under a handle, as JSON.
#[derive(Serialize)]
struct Stored<'a, T> {
    owner: Option<&'a str>,
    value: &'a T,
}

#[derive(Deserialize)]
struct Loaded<T> {
    owner: Option<String>,
    value: T,
}

impl<T> Clone for Handles<T> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone(), _value: PhantomData }
    }
}

impl<T> fmt::Debug for Handles<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("kind", &self.inner.kind)
            .field("ttl", &self.inner.ttl)
            .field("creator", &self.inner.creator.get())
            .finish_non_exhaustive()
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> Handles<T> {
    /// Handles of `kind` (a short word: `cart`), each living `ttl` unused, kept in a
    /// [`MemoryHandleStore`] of their own: for a server of one instance.
    ///
    /// # Panics
    ///
    /// If `kind` is empty, longer than 32 characters, or has characters other than ASCII
    /// letters, digits, `_` and `-` (it is part of every handle).
    pub fn new(kind: &str, ttl: Duration) -> Self {
        Self::with_store(kind, ttl, Arc::new(MemoryHandleStore::new()))
    }

    /// Handles of `kind`, each living `ttl` unused, kept in `store`: one shared by every
    /// instance of the server (Redis), or by several `Handles` (each kind has keys of its
    /// own).
    ///
    /// # Panics
    ///
    /// As [`Handles::new`], for a `kind` that cannot start a handle.
    pub fn with_store(kind: &str, ttl: Duration, store: Arc<dyn HandleStore>) -> Self {
        assert!(words::is_kind(kind), "a handle kind is 1 to 32 ASCII letters, digits, `_` or `-`; got {kind:?}");
        let inner = Inner { kind: kind.to_owned(), ttl, store, creator: OnceLock::new() };
        Self { inner: Arc::new(inner), _value: PhantomData }
    }

    /// The kind, which every handle starts with.
    pub fn kind(&self) -> &str {
        &self.inner.kind
    }

    /// How long a handle lives unused.
    pub fn ttl(&self) -> Duration {
        self.inner.ttl
    }

    /// The tool that creates handles of this kind, once one was marked with
    /// [`ToolDef::creates`].
    pub fn creator(&self) -> Option<&str> {
        self.inner.creator.get().map(String::as_str)
    }

    /// The policy in words, for the model: what the handle is for and how long it lives.
    /// [`ToolDef::creates`] adds it to the creating tool's description.
    pub fn retention(&self) -> String {
        words::retention(&self.inner.kind, self.inner.ttl)
    }

    /// Keeps `value` under a new handle, owned by the request's principal (if any), and
    /// returns the handle.
    pub async fn create(&self, ctx: &Context, value: T) -> Result<String, HandleError> {
        self.create_for(owner(ctx).as_deref(), value).await
    }

    /// The value of `handle`; its lifetime restarts.
    pub async fn get(&self, ctx: &Context, handle: &str) -> Result<T, HandleError> {
        self.get_for(owner(ctx).as_deref(), handle).await
    }

    /// Replaces the value of `handle` (which must exist, and be the principal's); its
    /// lifetime restarts. Writes are not merged: of two concurrent `put`s or `update`s, on
    /// any instances, the last one wins.
    pub async fn put(&self, ctx: &Context, handle: &str, value: T) -> Result<(), HandleError> {
        self.put_for(owner(ctx).as_deref(), handle, value).await
    }

    /// Changes the value of `handle` with `f` and keeps it (a `get`, then a `put`); returns
    /// what `f` returns. The value is not locked meanwhile: of two concurrent updates, on
    /// any instances, the last one to write wins.
    pub async fn update<R>(&self, ctx: &Context, handle: &str, f: impl FnOnce(&mut T) -> R) -> Result<R, HandleError> {
        self.update_for(owner(ctx).as_deref(), handle, f).await
    }

    /// Forgets `handle`; whether it was there (`false` for an unknown or expired handle, and
    /// for another principal's, which stays).
    pub async fn remove(&self, ctx: &Context, handle: &str) -> Result<bool, HandleError> {
        self.remove_for(owner(ctx).as_deref(), handle).await
    }

    async fn create_for(&self, owner: Option<&str>, value: T) -> Result<String, HandleError> {
        let handle = words::new_handle(&self.inner.kind);
        self.write(owner, &handle, &value).await?;
        Ok(handle)
    }

    async fn get_for(&self, owner: Option<&str>, handle: &str) -> Result<T, HandleError> {
        self.read(owner, handle).await
    }

    async fn put_for(&self, owner: Option<&str>, handle: &str, value: T) -> Result<(), HandleError> {
        // Read first: a handle that is unknown, expired or another's must not be written.
        self.read(owner, handle).await?;
        self.write(owner, handle, &value).await
    }

    async fn update_for<R>(
        &self,
        owner: Option<&str>,
        handle: &str,
        f: impl FnOnce(&mut T) -> R,
    ) -> Result<R, HandleError> {
        let mut value = self.read(owner, handle).await?;
        let answer = f(&mut value);
        self.write(owner, handle, &value).await?;
        Ok(answer)
    }

    async fn remove_for(&self, owner: Option<&str>, handle: &str) -> Result<bool, HandleError> {
        match self.read(owner, handle).await {
            Ok(_) => {}
            Err(e) if e.is_unknown() => return Ok(false),
            // An unreadable value does not tell its owner, so it is not removed for whoever
            // asks: it is left to expire.
            Err(e) => return Err(e),
        }
        let key = self.key(handle);
        self.inner.store.remove(&key).await.map_err(|e| self.store_error(handle, e))
    }

    /// The value under a well-formed handle of this kind that belongs to `owner`.
    async fn read(&self, owner: Option<&str>, handle: &str) -> Result<T, HandleError> {
        // A malformed handle is never looked up: no key of an attacker's size or making.
        if !words::is_handle(&self.inner.kind, handle) {
            return Err(self.unknown(handle));
        }
        let key = self.key(handle);
        let bytes = self.inner.store.get(&key, self.inner.ttl).await.map_err(|e| self.store_error(handle, e))?;
        let Some(bytes) = bytes else { return Err(self.unknown(handle)) };
        let loaded: Loaded<T> = serde_json::from_slice(&bytes)
            .map_err(|e| HandleError::unreadable(&self.inner.kind, self.creator_name(), handle, e))?;
        // Another's handle is answered as an unknown one: whether it exists is not told.
        match loaded.owner.as_deref() == owner {
            true => Ok(loaded.value),
            false => Err(self.unknown(handle)),
        }
    }

    async fn write(&self, owner: Option<&str>, handle: &str, value: &T) -> Result<(), HandleError> {
        let bytes =
            serde_json::to_vec(&Stored { owner, value }).map_err(|e| HandleError::unwritable(&self.inner.kind, e))?;
        let key = self.key(handle);
        self.inner.store.put(&key, bytes, self.inner.ttl).await.map_err(|e| self.store_error(handle, e))
    }

    /// The store's key: the kind first, so that kinds sharing a store never meet.
    fn key(&self, handle: &str) -> String {
        format!("{}:{handle}", self.inner.kind)
    }

    fn creator_name(&self) -> Option<String> {
        self.inner.creator.get().cloned()
    }

    fn unknown(&self, handle: &str) -> HandleError {
        HandleError::unknown(&self.inner.kind, self.creator_name(), handle)
    }

    fn store_error(&self, handle: &str, e: crate::shared::StoreError) -> HandleError {
        HandleError::store(&self.inner.kind, self.creator_name(), handle, e)
    }
}

/// The principal's key, which owns what it creates.
fn owner(ctx: &Context) -> Option<String> {
    ctx.principal().map(|p| p.key())
}

impl ToolDef {
    /// Marks this tool as the one that creates `handles`: its description gets the
    /// retention policy ([`Handles::retention`]), and errors about unknown or expired handles
    /// of this kind tell the model to call it. (The first tool so marked is the one named.)
    pub fn creates<T>(mut self, handles: &Handles<T>) -> Self {
        let retention = words::retention(&handles.inner.kind, handles.inner.ttl);
        let description = match self.tool.description.take() {
            Some(d) if !d.trim().is_empty() => format!("{}\n\n{retention}", d.trim_end()),
            _ => retention,
        };
        self.tool.description = Some(description);
        // Already marked: the first tool stays the one named.
        let _ = handles.inner.creator.set(self.tool.name.clone());
        self
    }
}

#[cfg(test)]
mod tests;
