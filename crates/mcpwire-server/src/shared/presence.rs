//! Which instances of a deployment are alive: each renews a lease in the shared store while it
//! runs, so that the others can tell when it stopped (its tasks and calls in flight then end
//! with an error instead of hanging).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::StoreError;

/// The leases of a deployment's instances, kept in a shared store.
pub trait Presence: Send + Sync + 'static {
    /// Says that instance `instance` is alive for `lease` from now.
    fn renew<'a>(&'a self, instance: &'a str, lease: Duration) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Whether instance `instance` renewed its lease and it has not run out.
    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Gives up the lease of `instance` (it stops cleanly): the others may act at once.
    fn release<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// One instance of a deployment: its name among the others (128 random bits, new at each
/// start), as it appears on the bus and in the store. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Instance {
    id: Arc<str>,
}

impl Default for Instance {
    fn default() -> Self {
        Self::new()
    }
}

impl Instance {
    /// A new instance name.
    pub fn new() -> Self {
        Self { id: mcpwire_protocol::id::random_id().into() }
    }

    /// The name.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Renews this instance's lease in `presence` every third of `lease` until the returned
    /// guard is dropped (then it is released). The first renewal is made before this returns.
    pub async fn keep_alive(&self, presence: Arc<dyn Presence>, lease: Duration) -> Result<LeaseGuard, StoreError> {
        presence.renew(&self.id, lease).await?;
        let (id, renewer) = (self.id.clone(), presence.clone());
        let task = tokio::spawn(async move {
            let every = (lease / 3).max(Duration::from_millis(10));
            loop {
                tokio::time::sleep(every).await;
                if let Err(e) = renewer.renew(&id, lease).await {
                    // Kept trying: the store's client reconnects by itself.
                    tracing::warn!(error = %e, "this instance's lease could not be renewed");
                }
            }
        });
        Ok(LeaseGuard { task, presence, id: self.id.clone(), lease })
    }
}

/// Renews an instance's lease while it lives; releases it when dropped.
pub struct LeaseGuard {
    task: tokio::task::JoinHandle<()>,
    presence: Arc<dyn Presence>,
    id: Arc<str>,
    lease: Duration,
}

impl LeaseGuard {
    /// The instance whose lease this is.
    pub fn instance(&self) -> &str {
        &self.id
    }

    /// How long the lease lasts once renewed.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Where the leases of the deployment are kept.
    pub fn presence(&self) -> &Arc<dyn Presence> {
        &self.presence
    }
}

impl std::fmt::Debug for LeaseGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseGuard").field("instance", &self.id).finish()
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.task.abort();
        let (presence, id) = (self.presence.clone(), self.id.clone());
        // Best effort, when a runtime is still there to run it: a lease not released runs out.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = presence.release(&id).await;
            });
        }
    }
}
