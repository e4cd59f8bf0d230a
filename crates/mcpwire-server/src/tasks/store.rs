//! Where tasks are kept: the [`TaskStore`] trait and the bounded in-memory store.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use futures::future::BoxFuture;
use mcpwire_protocol::engine::task::{TaskChange, TaskOutcome, TaskRecord, TaskStoreError};
use mcpwire_protocol::types::TaskStatus;
use parking_lot::Mutex;

use super::clock::TaskClock;

/// The current time of the system's clock in milliseconds since the Unix epoch (see
/// [`TaskClock`] for a clock a test can supply).
pub fn now_ms() -> u64 {
    TaskClock::system().now_ms()
}

/// One page of a listing: the tasks after a position, and where the next page starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPage {
    /// The tasks, in creation order.
    pub tasks: Vec<TaskRecord>,
    /// The [`TaskRecord::seq`] to list after for the next page, if there is more.
    pub next_after: Option<u64>,
}

/// Where tasks are kept.
///
/// Methods return boxed futures so that the trait can be used as `Arc<dyn TaskStore>` and
/// implemented over a network store. A task whose `ttl` elapsed is gone: `get` does not
/// find it and `list` does not show it. Implementations apply changes with
/// [`TaskRecord::apply`], atomically per task.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task and returns it with its creation order ([`TaskRecord::seq`]) set.
    /// When this returns, `get` finds the task.
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<TaskRecord, TaskStoreError>>;

    /// The task, unless it is unknown or expired.
    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies a change and returns the task as it is afterwards.
    fn update<'a>(&'a self, task_id: &'a str, change: TaskChange) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>>;

    /// Up to `limit` tasks of `owner` (exactly: `None` lists the tasks without an owner)
    /// created after position `after` (a [`TaskRecord::seq`]), oldest first.
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        after: Option<u64>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>>;

    /// Forgets every task whose `ttl` elapsed; returns how many.
    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>>;

    /// Every task recorded as running on some instance ([`TaskRecord::runner`] set, not
    /// terminal yet), for an instance that looks for the tasks of instances that stopped
    /// ([`crate::Server::share_tasks`]). A store of one instance has none to give: the default
    /// answers none.
    fn running_on_instances(&self) -> BoxFuture<'_, Result<Vec<TaskRecord>, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// Sets a running task's status (`working` or `input_required`) and message.
    fn update_status<'a>(
        &'a self,
        task_id: &'a str,
        status: TaskStatus,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Status { status, message })
    }

    /// Stores the outcome of a finished task (`completed` or `failed`). A task cancelled
    /// meanwhile stays cancelled ([`TaskStoreError::Terminal`]).
    fn store_outcome<'a>(
        &'a self,
        task_id: &'a str,
        status: TaskStatus,
        outcome: TaskOutcome,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Finish { status, outcome, message })
    }

    /// Cancels a task; [`TaskStoreError::Terminal`] if it already finished.
    fn cancel<'a>(
        &'a self,
        task_id: &'a str,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Cancel { message })
    }
}

/// A [`TaskStore`] in this process's memory, bounded: at most `max_tasks` tasks. When it is
/// full, expired tasks go first, then the oldest finished ones; a new task is refused
/// ([`TaskStoreError::Full`]) only when every kept task is still running. Expired tasks
/// are dropped as soon as any operation notices them (cheaply: expiries are kept ordered).
/// Expiry and `lastUpdatedAt` follow its [`TaskClock`] (the system's unless
/// [`Self::with_clock`] gives another).
pub struct InMemoryTaskStore {
    max_tasks: usize,
    clock: TaskClock,
    state: Mutex<MemoryState>,
}

#[derive(Default)]
struct MemoryState {
    tasks: HashMap<String, TaskRecord>,
    order: BTreeMap<u64, String>,
    expiries: BTreeSet<(u64, String)>,
    next_seq: u64,
}

impl MemoryState {
    fn remove(&mut self, task_id: &str) -> Option<TaskRecord> {
        let record = self.tasks.remove(task_id)?;
        self.order.remove(&record.seq);
        if let Some(e) = record.expires_at_ms() {
            self.expiries.remove(&(e, record.task_id.clone()));
        }
        Some(record)
    }

    fn purge(&mut self, now: u64) -> usize {
        let mut n = 0;
        while let Some((at, id)) = self.expiries.first().cloned() {
            if at > now {
                break;
            }
            self.expiries.pop_first();
            if let Some(record) = self.tasks.remove(&id) {
                self.order.remove(&record.seq);
                n += 1;
            }
        }
        n
    }
}

impl InMemoryTaskStore {
    /// A store keeping at most `max_tasks` tasks.
    pub fn new(max_tasks: usize) -> Self {
        Self { max_tasks: max_tasks.max(1), clock: TaskClock::system(), state: Mutex::default() }
    }

    /// This store reading time from `clock` (say [`TaskClock::tokio`] in a test on tokio's
    /// paused clock, so that tasks expire in virtual time).
    pub fn with_clock(mut self, clock: TaskClock) -> Self {
        self.clock = clock;
        self
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, MemoryState> {
        self.state.lock()
    }

    /// How many tasks are kept now (expired ones included until noticed).
    pub fn len(&self) -> usize {
        self.state().tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn create_now(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        let mut s = self.state();
        s.purge(self.clock.now_ms());
        if s.tasks.contains_key(&record.task_id) {
            return Err(TaskStoreError::Backend("duplicate task id".into()));
        }
        if s.tasks.len() >= self.max_tasks {
            let oldest_finished =
                s.order.values().find(|id| s.tasks.get(*id).is_some_and(|r| r.status.is_terminal())).cloned();
            match oldest_finished {
                Some(id) => {
                    s.remove(&id);
                }
                None => return Err(TaskStoreError::Full),
            }
        }
        s.next_seq += 1;
        record.seq = s.next_seq;
        s.order.insert(record.seq, record.task_id.clone());
        if let Some(e) = record.expires_at_ms() {
            s.expiries.insert((e, record.task_id.clone()));
        }
        s.tasks.insert(record.task_id.clone(), record.clone());
        Ok(record)
    }

    fn update_now(&self, task_id: &str, change: TaskChange) -> Result<TaskRecord, TaskStoreError> {
        let now = self.clock.now_ms();
        let mut s = self.state();
        s.purge(now);
        let record = s.tasks.get_mut(task_id).ok_or(TaskStoreError::NotFound)?;
        record.apply(change, now)?;
        Ok(record.clone())
    }

    fn list_now(&self, owner: Option<&str>, after: Option<u64>, limit: usize) -> TaskPage {
        let mut s = self.state();
        s.purge(self.clock.now_ms());
        let limit = limit.max(1);
        let start = after.map_or(0, |a| a.saturating_add(1));
        let mut tasks = Vec::new();
        let mut more = false;
        for id in s.order.range(start..).map(|(_, id)| id) {
            let Some(record) = s.tasks.get(id) else { continue };
            if record.owner.as_deref() != owner {
                continue;
            }
            if tasks.len() == limit {
                more = true;
                break;
            }
            tasks.push(record.clone());
        }
        let next_after = if more { tasks.last().map(|r| r.seq) } else { None };
        TaskPage { tasks, next_after }
    }
}

impl std::fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTaskStore")
            .field("max_tasks", &self.max_tasks)
            .field("clock", &self.clock)
            .field("len", &self.len())
            .finish()
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<TaskRecord, TaskStoreError>> {
        let created = self.create_now(record);
        Box::pin(async move { created })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = {
            let mut s = self.state();
            s.purge(self.clock.now_ms());
            s.tasks.get(task_id).cloned()
        };
        Box::pin(async move { Ok(found) })
    }

    fn update<'a>(&'a self, task_id: &'a str, change: TaskChange) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        let updated = self.update_now(task_id, change);
        Box::pin(async move { updated })
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        after: Option<u64>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        let page = self.list_now(owner, after, limit);
        Box::pin(async move { Ok(page) })
    }

    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        let n = self.state().purge(self.clock.now_ms());
        Box::pin(async move { Ok(n) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire_protocol::ProtocolVersion;
    use serde_json::json;
    use std::sync::Arc;

    fn record(id: &str, owner: Option<&str>, ttl_ms: Option<u64>) -> TaskRecord {
        let mut r = TaskRecord::new(
            id.into(),
            owner.map(str::to_owned),
            ProtocolVersion::V2025_11_25,
            "tools/call",
            None,
            None,
            now_ms(),
        );
        r.ttl_ms = ttl_ms;
        r
    }

    #[tokio::test]
    async fn memory_store_is_bounded_ordered_and_expires() {
        let store = InMemoryTaskStore::new(2);
        store.create(record("a", Some("o"), None)).await.unwrap();
        store.create(record("b", Some("o"), None)).await.unwrap();
        assert_eq!(store.create(record("c", Some("o"), None)).await, Err(TaskStoreError::Full));
        let done = TaskOutcome::Result(json!({}));
        store.store_outcome("a", TaskStatus::Completed, done, None).await.unwrap();
        let c = store.create(record("c", Some("o"), None)).await.unwrap();
        assert!(store.get("a").await.unwrap().is_none(), "the oldest finished task made room");
        assert!(c.seq > 2);
        let page = store.list(Some("o"), None, 1).await.unwrap();
        assert_eq!(page.tasks[0].task_id, "b");
        let page = store.list(Some("o"), page.next_after, 1).await.unwrap();
        assert_eq!((page.tasks[0].task_id.as_str(), page.next_after), ("c", None));
        assert!(store.list(Some("other"), None, 10).await.unwrap().tasks.is_empty());
        assert!(store.list(None, None, 10).await.unwrap().tasks.is_empty());

        let store = InMemoryTaskStore::new(10);
        let mut old = record("old", None, Some(1));
        old.created_at_ms = now_ms().saturating_sub(10);
        store.create(old).await.unwrap();
        store.create(record("new", None, Some(60_000))).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none(), "expired");
        assert!(store.get("new").await.unwrap().is_some());
        assert_eq!(store.len(), 1);
        assert_eq!(store.update("old", TaskChange::Cancel { message: None }).await, Err(TaskStoreError::NotFound));
    }

    #[tokio::test]
    async fn memory_store_expires_by_its_clock() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::time::{Duration, UNIX_EPOCH};
        let now = Arc::new(AtomicU64::new(1_000_000));
        let read = now.clone();
        let clock = TaskClock::from_fn(move || UNIX_EPOCH + Duration::from_millis(read.load(Ordering::SeqCst)));
        let store = InMemoryTaskStore::new(10).with_clock(clock);
        let mut r = record("t", None, Some(100));
        (r.created_at_ms, r.updated_at_ms) = (1_000_000, 1_000_000);
        store.create(r).await.unwrap();
        now.store(1_000_050, Ordering::SeqCst);
        let updated = store.update("t", TaskChange::Message { message: Some("half".into()) }).await.unwrap();
        assert_eq!(updated.updated_at_ms, 1_000_050, "stamped by the store's clock");
        now.store(1_000_099, Ordering::SeqCst);
        assert!(store.get("t").await.unwrap().is_some(), "not yet expired");
        now.store(1_000_100, Ordering::SeqCst);
        assert!(store.get("t").await.unwrap().is_none(), "expired when its ttl elapsed on the clock");
    }
}
