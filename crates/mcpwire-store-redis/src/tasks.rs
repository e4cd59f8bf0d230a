//! Tasks on Redis ([`TaskStore`]), so that every instance of a deployment serves every task.
//!
//! - `PREFIX:task:ID`: the task's record as JSON, expiring when its `ttl` (from creation)
//!   elapses. A task without a `ttl` is kept [`UNLIMITED_RETENTION`]: nothing is kept for
//!   ever.
//! - `PREFIX:task-seq:next`: the counter that gives each new task its creation order.
//! - `PREFIX:task-owner:OWNER`: a sorted set per owner (`none` for tasks without one,
//!   `o:OWNER` else) of its task ids by creation order, for `tasks/list`.
//! - `PREFIX:task-running:all`: the ids of the tasks recorded as running on some instance
//!   (with a runner, not terminal), for the instances that look for the tasks of an
//!   instance that stopped.
//!
//! The counter and the indexes expire too, never before the longest-kept task they name:
//! when one runs out, every task it named is gone. An index entry whose task expired is
//! dropped when a listing or a sweep finds it missing ([`TaskStore::purge_expired`] trims
//! them all).
//!
//! A change is a compare-and-set: the record is read, changed with [`TaskRecord::apply`]
//! here, and written back only if nobody wrote it meanwhile (a Lua script compares), else
//! tried again. So the life cycle holds across instances: a task cancelled on one instance
//! while its handler finishes on another ends one way, and stays so.

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_server::{now_ms, TaskChange, TaskPage, TaskRecord, TaskStore, TaskStoreError};

use crate::RedisStore;

/// How long a task without a `ttl` is kept (a day): Redis keeps nothing for ever here.
pub(crate) const UNLIMITED_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// How many times a change is tried when other instances keep changing the same task.
const MAX_ATTEMPTS: usize = 16;

/// How many ids one `MGET` reads when an index is trimmed.
const CHUNK: usize = 256;

/// Extends an index's (or the counter's) expiry to at least ARGV[1] milliseconds.
const EXTEND: &str = "local function extend(k, ms) \
     if redis.call('PTTL', k) < tonumber(ms) then redis.call('PEXPIRE', k, ms) end end ";

/// KEYS: counter. ARGV: retention (ms). Returns the next creation order.
const NEXT_SEQ: &str = "local n = redis.call('INCR', KEYS[1]) extend(KEYS[1], ARGV[1]) return n";

/// KEYS: record, owner index, running set. ARGV: record JSON, retention (ms), seq, id,
/// running ("1" or "0"). Returns 0 if the id is taken.
const CREATE: &str = "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end \
     redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4]) extend(KEYS[2], ARGV[2]) \
     if ARGV[5] == '1' then redis.call('SADD', KEYS[3], ARGV[4]) extend(KEYS[3], ARGV[2]) end \
     return 1";

/// KEYS: record, running set. ARGV: the record as read, the record changed, id, ended ("1"
/// or "0"). Writes the change (keeping the expiry) only if the record is still as read;
/// returns whether it did.
const COMPARE_AND_SET: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
     redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') \
     if ARGV[4] == '1' then redis.call('SREM', KEYS[2], ARGV[3]) end \
     return 1";

/// A store failure as the task machinery reports it. The cause is logged here rather than
/// shown to clients.
fn unavailable(what: &'static str, e: redis::RedisError) -> TaskStoreError {
    tracing::warn!(error = %e, "the task store on Redis failed ({what})");
    TaskStoreError::Backend(format!("the shared store is unavailable ({what})"))
}

fn corrupt(what: &'static str, e: serde_json::Error) -> TaskStoreError {
    tracing::warn!(error = %e, "a task on Redis could not be read ({what})");
    TaskStoreError::Backend(format!("the shared store holds an unreadable task ({what})"))
}

/// How long a task is kept from `now`: what is left of its `ttl`, or the bounded default.
fn retention_ms(record: &TaskRecord, now: u64) -> u64 {
    match record.expires_at_ms() {
        Some(at) => at.saturating_sub(now).max(1),
        None => UNLIMITED_RETENTION.as_millis() as u64,
    }
}

/// A task kept on an instance's behalf: it runs there, and is not over.
fn runs_somewhere(record: &TaskRecord) -> bool {
    record.runner.is_some() && !record.status.is_terminal()
}

impl RedisStore {
    fn owner_index(&self, owner: Option<&str>) -> String {
        // Distinct prefixes: no owner name can pass for "no owner".
        match owner {
            None => self.key("task-owner", "none"),
            Some(owner) => self.key("task-owner", &format!("o:{owner}")),
        }
    }

    fn running_set(&self) -> String {
        self.key("task-running", "all")
    }

    /// Reads the records of `ids` (`None` for those gone), in order.
    async fn records(&self, ids: &[String]) -> Result<Vec<Option<Vec<u8>>>, TaskStoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.commands();
        let keys: Vec<String> = ids.iter().map(|id| self.key("task", id)).collect();
        redis::cmd("MGET").arg(keys).query_async(&mut c).await.map_err(|e| unavailable("task lookup", e))
    }

    /// Removes `ids` from the index `index` (a sorted set, or the running set).
    async fn forget(&self, index: &str, ids: &[String], sorted: bool) -> Result<(), TaskStoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut c = self.commands();
        redis::cmd(if sorted { "ZREM" } else { "SREM" })
            .arg(index)
            .arg(ids)
            .query_async::<i64>(&mut c)
            .await
            .map(|_| ())
            .map_err(|e| unavailable("task index trim", e))
    }

    async fn create_task(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let retention = retention_ms(&record, now);
        let mut c = self.commands();
        let seq: u64 = redis::cmd("EVAL")
            .arg(format!("{EXTEND}{NEXT_SEQ}"))
            .arg(1)
            .arg(self.key("task-seq", "next"))
            .arg(retention)
            .query_async(&mut c)
            .await
            .map_err(|e| unavailable("task creation", e))?;
        record.seq = seq;
        let json = serde_json::to_string(&record).map_err(|e| corrupt("task creation", e))?;
        let created: i64 = redis::cmd("EVAL")
            .arg(format!("{EXTEND}{CREATE}"))
            .arg(3)
            .arg(self.key("task", &record.task_id))
            .arg(self.owner_index(record.owner.as_deref()))
            .arg(self.running_set())
            .arg(json)
            .arg(retention)
            .arg(seq)
            .arg(&record.task_id)
            .arg(if runs_somewhere(&record) { "1" } else { "0" })
            .query_async(&mut c)
            .await
            .map_err(|e| unavailable("task creation", e))?;
        if created == 0 {
            return Err(TaskStoreError::Backend("duplicate task id".into()));
        }
        Ok(record)
    }

    async fn get_task(&self, task_id: &str) -> Result<Option<(String, TaskRecord)>, TaskStoreError> {
        let mut c = self.commands();
        let kept: Option<String> = redis::cmd("GET")
            .arg(self.key("task", task_id))
            .query_async(&mut c)
            .await
            .map_err(|e| unavailable("task lookup", e))?;
        let Some(json) = kept else { return Ok(None) };
        let record = serde_json::from_str(&json).map_err(|e| corrupt("task lookup", e))?;
        Ok(Some((json, record)))
    }

    async fn update_task(&self, task_id: &str, change: TaskChange) -> Result<TaskRecord, TaskStoreError> {
        for _ in 0..MAX_ATTEMPTS {
            let (old, mut record) = self.get_task(task_id).await?.ok_or(TaskStoreError::NotFound)?;
            let was_running = runs_somewhere(&record);
            record.apply(change.clone(), now_ms())?;
            let new = serde_json::to_string(&record).map_err(|e| corrupt("task update", e))?;
            let mut c = self.commands();
            let written: i64 = redis::cmd("EVAL")
                .arg(COMPARE_AND_SET)
                .arg(2)
                .arg(self.key("task", task_id))
                .arg(self.running_set())
                .arg(old)
                .arg(new)
                .arg(task_id)
                .arg(if was_running && !runs_somewhere(&record) { "1" } else { "0" })
                .query_async(&mut c)
                .await
                .map_err(|e| unavailable("task update", e))?;
            if written == 1 {
                return Ok(record);
            }
            // Another instance changed the task meanwhile: apply the change to what it wrote.
        }
        Err(TaskStoreError::Backend("the task changed too often to be updated; try again".into()))
    }

    async fn list_tasks(
        &self,
        owner: Option<&str>,
        after: Option<u64>,
        limit: usize,
    ) -> Result<TaskPage, TaskStoreError> {
        let limit = limit.max(1);
        let index = self.owner_index(owner);
        let mut tasks = Vec::new();
        let mut cursor = after;
        let mut gone = Vec::new();
        // One task more than the page, to tell whether there is a next page; entries of
        // expired tasks are skipped (and dropped below), so it may take several reads.
        loop {
            let want = limit + 1 - tasks.len();
            let min = cursor.map_or_else(|| "-inf".to_owned(), |a| format!("({a}"));
            let mut c = self.commands();
            let entries: Vec<(String, f64)> = redis::cmd("ZRANGEBYSCORE")
                .arg(&index)
                .arg(min)
                .arg("+inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(want)
                .query_async(&mut c)
                .await
                .map_err(|e| unavailable("task listing", e))?;
            let ids: Vec<String> = entries.iter().map(|(id, _)| id.clone()).collect();
            let records = self.records(&ids).await?;
            for ((id, seq), json) in entries.iter().zip(records) {
                cursor = Some(*seq as u64);
                let Some(json) = json else {
                    gone.push(id.clone());
                    continue;
                };
                match serde_json::from_slice::<TaskRecord>(&json) {
                    // The index is the owner's; the record says so too, or it is not shown.
                    Ok(record) if record.owner.as_deref() == owner => tasks.push(record),
                    Ok(_) => {}
                    // One unreadable task does not hide the others; it expires in time.
                    Err(e) => tracing::warn!(task = %id, error = %e, "an unreadable task on Redis was not listed"),
                }
            }
            if tasks.len() > limit || entries.len() < want {
                break;
            }
        }
        self.forget(&index, &gone, true).await?;
        let more = tasks.len() > limit;
        tasks.truncate(limit);
        let next_after = if more { tasks.last().map(|r| r.seq) } else { None };
        Ok(TaskPage { tasks, next_after })
    }

    async fn running_tasks(&self) -> Result<Vec<TaskRecord>, TaskStoreError> {
        let set = self.running_set();
        let mut c = self.commands();
        let ids: Vec<String> =
            redis::cmd("SMEMBERS").arg(&set).query_async(&mut c).await.map_err(|e| unavailable("task sweep", e))?;
        let mut running = Vec::new();
        let mut done = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            for (id, json) in chunk.iter().zip(self.records(chunk).await?) {
                let record = json.map(|json| serde_json::from_slice::<TaskRecord>(&json));
                match record {
                    Some(Ok(record)) if runs_somewhere(&record) => running.push(record),
                    // Gone, or over (its instance stopped between its write and the trim).
                    Some(Ok(_)) | None => done.push(id.clone()),
                    Some(Err(e)) => tracing::warn!(task = %id, error = %e, "an unreadable task on Redis was skipped"),
                }
            }
        }
        self.forget(&set, &done, false).await?;
        Ok(running)
    }

    /// Drops the entries of expired tasks from every owner's index; returns how many.
    async fn trim_owner_indexes(&self) -> Result<usize, TaskStoreError> {
        let pattern = format!("{}*", self.key("task-owner", ""));
        let mut scan_cursor = 0u64;
        let mut trimmed = 0;
        loop {
            let mut c = self.commands();
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(scan_cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(100)
                .query_async(&mut c)
                .await
                .map_err(|e| unavailable("task purge", e))?;
            for index in keys {
                let ids: Vec<String> = redis::cmd("ZRANGE")
                    .arg(&index)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut c)
                    .await
                    .map_err(|e| unavailable("task purge", e))?;
                for chunk in ids.chunks(CHUNK) {
                    let records = self.records(chunk).await?;
                    let gone: Vec<String> =
                        chunk.iter().zip(records).filter(|(_, r)| r.is_none()).map(|(id, _)| id.clone()).collect();
                    trimmed += gone.len();
                    self.forget(&index, &gone, true).await?;
                }
            }
            if next == 0 {
                return Ok(trimmed);
            }
            scan_cursor = next;
        }
    }
}

/// Tasks on Redis, shared by every instance connected to it with the same prefix. A task is
/// kept for its `ttl` from its creation; one without a `ttl` for a day.
impl TaskStore for RedisStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<TaskRecord, TaskStoreError>> {
        Box::pin(self.create_task(record))
    }

    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { Ok(self.get_task(task_id).await?.map(|(_, record)| record)) })
    }

    fn update<'a>(&'a self, task_id: &'a str, change: TaskChange) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        Box::pin(self.update_task(task_id, change))
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        after: Option<u64>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        Box::pin(self.list_tasks(owner, after, limit))
    }

    /// Redis forgets expired tasks by itself; this trims what still names them (the owners'
    /// indexes and the running set) and returns how many index entries went.
    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(async move {
            // Reading the running set trims it.
            self.running_tasks().await?;
            self.trim_owner_indexes().await
        })
    }

    fn running_on_instances(&self) -> BoxFuture<'_, Result<Vec<TaskRecord>, TaskStoreError>> {
        Box::pin(self.running_tasks())
    }
}
