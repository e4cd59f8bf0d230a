//! Resumable streams on Redis: each stream's events in a Redis stream
//! (`PREFIX:events:SESSION:STREAM`, entry id `0-SEQ`), what is known of it in a hash
//! (`PREFIX:stream:SESSION:STREAM`: `info`, `done` once ended, `evicted` once let go, `seq` the
//! last number the store gave); appends and ends told on the bus so that readers on other
//! instances wake at once.
//!
//! The [`EventBudget`] holds in Redis, across instances, as [`mcpwire_http::MemoryEventStore`]
//! keeps it: each append (one script) counts the event's bytes in
//! `PREFIX:evbytes:SESSION` (a hash: a field per stream, `_` the session's total) and in
//! `PREFIX:evbytes` (field `SESSION STREAM` per stream, `_` the total, `#` the order counter),
//! and places a stream's first event in `PREFIX:evorder:SESSION` and `PREFIX:evorder`
//! (sorted sets: finished streams by order of finishing, before the running ones by order of
//! their first event). Over a budget, the script walks the order oldest first: a stream whose
//! events expired is only uncounted (the counts are right again after keys expire unseen), a
//! finished one is let go (marked `evicted`), a running one loses its oldest events but never
//! its newest. Over the overall budget the running streams trimmed are any session's, oldest
//! first (the in-memory store trims only the growing session's): one order serves both the
//! trimming and finding what expired. The scripts name keys of other sessions: one Redis, not a
//! Cluster.

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_http::{EventBudget, SharedEventStore, StreamInfo, StreamPosition};
use mcpwire_server::shared::{Bus, StoreError};
use redis::Value;

use crate::{millis, RedisStore};

const WAKE_TOPIC: &str = "events";

/// What an event costs besides its text: the slot the in-memory store keeps it in
/// (`size_of::<(u64, String)>()` on 64-bit targets), so that one budget means the same in both.
const EVENT_SLOT: u64 = 32;

/// How many streams or events one append may look at or let go once over a budget: a script
/// blocks Redis while it runs. What is left over is let go by the next appends.
const STEPS: u64 = 64;

/// Appends an event and keeps the budget. `KEYS`: the events, the stream's hash, the session's
/// bytes, the session's order, the bytes overall, the order overall. `ARGV`: the number (0: one
/// more than the stream's last, kept in the hash as `seq`), the frame, the events kept per
/// stream, the bytes per session, the bytes overall, the lifetime in ms, the key prefix, the
/// session, the stream, [`EVENT_SLOT`], [`STEPS`]. Returns the number.
static APPEND: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local E, H, SB, SO, GB, GO = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local seq = tonumber(ARGV[1])
local per_stream, per_session, total = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local ttl, prefix, session, stream = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local slot, steps = tonumber(ARGV[10]), tonumber(ARGV[11])
-- Running streams sort after every finished one.
local RUNNING = 1125899906842624

if seq == 0 then
  seq = redis.call('HINCRBY', H, 'seq', 1)
end
redis.call('PEXPIRE', H, ttl)
-- As in memory: a stream let go stays so, and an ended one takes nothing more.
if redis.call('HEXISTS', H, 'evicted') == 1 or redis.call('HEXISTS', H, 'done') == 1 then
  return seq
end

local function key(kind, s, n) return prefix .. ':' .. kind .. ':' .. s .. ':' .. n end
local function number(k, f) return tonumber(redis.call('HGET', k, f)) or 0 end
-- The global keys are never shortened: they outlive every session key they count.
local function extend(k)
  if redis.call('PTTL', k) < tonumber(ttl) then redis.call('PEXPIRE', k, ttl) end
end

-- Stream n of session s holds d bytes fewer. Only counts that exist are changed: a hash
-- made here would have no lifetime.
local function less(s, n, d)
  local sb, m = prefix .. ':evbytes:' .. s, s .. ' ' .. n
  if redis.call('HEXISTS', sb, n) == 1 then
    redis.call('HINCRBY', sb, n, -d)
    redis.call('HINCRBY', sb, '_', -d)
  end
  if redis.call('HEXISTS', GB, m) == 1 then
    redis.call('HINCRBY', GB, m, -d)
    redis.call('HINCRBY', GB, '_', -d)
  end
end

-- Stream n of session s is counted no more.
local function uncount(s, n)
  local sb, so, m = prefix .. ':evbytes:' .. s, prefix .. ':evorder:' .. s, s .. ' ' .. n
  local b = tonumber(redis.call('HGET', sb, n))
  if b then
    redis.call('HDEL', sb, n)
    redis.call('HINCRBY', sb, '_', -b)
  end
  b = tonumber(redis.call('HGET', GB, m))
  if b then
    redis.call('HDEL', GB, m)
    redis.call('HINCRBY', GB, '_', -b)
  end
  redis.call('ZREM', so, n)
  redis.call('ZREM', GO, m)
end

-- The cost of an XRANGE entry ({id, {'f', frame}}).
local function cost(entry)
  local fields = entry[2]
  return slot + string.len(fields[#fields] or '')
end

-- Walks an order oldest first while over its budget.
local function walk(order, over, name)
  -- Before the range: with no steps left, 0..-1 would be the whole order.
  if steps <= 0 or not over() then return end
  local members = redis.call('ZRANGE', order, 0, steps - 1, 'WITHSCORES')
  for i = 1, #members, 2 do
    if steps <= 0 or not over() then return end
    steps = steps - 1
    local s, n = name(members[i])
    if not s then
      redis.call('ZREM', order, members[i])
    else
      local e = key('events', s, n)
      if redis.call('EXISTS', e) == 0 then
        -- Expired unseen: its bytes are no longer kept.
        uncount(s, n)
      elseif tonumber(members[i + 1]) < RUNNING then
        redis.call('DEL', e)
        local h = key('stream', s, n)
        if redis.call('EXISTS', h) == 1 then redis.call('HSET', h, 'evicted', 1) end
        uncount(s, n)
      else
        while steps > 0 and over() and redis.call('XLEN', e) > 1 do
          steps = steps - 1
          local oldest = redis.call('XRANGE', e, '-', '+', 'COUNT', 1)[1]
          redis.call('XDEL', e, oldest[1])
          less(s, n, cost(oldest))
        end
      end
    end
  end
end

-- Events that expired unseen while the stream waited are counted no more.
if redis.call('EXISTS', E) == 0 then uncount(session, stream) end
redis.call('XADD', E, '0-' .. seq, 'f', ARGV[2])
local member = session .. ' ' .. stream
local opened = redis.call('ZSCORE', SO, stream)
if not opened then
  opened = string.format('%.0f', RUNNING + redis.call('HINCRBY', GB, '#', 1))
  redis.call('ZADD', SO, opened, stream)
end
redis.call('ZADD', GO, 'NX', opened, member)
local c = slot + string.len(ARGV[2])
redis.call('HINCRBY', SB, stream, c)
redis.call('HINCRBY', SB, '_', c)
redis.call('HINCRBY', GB, member, c)
redis.call('HINCRBY', GB, '_', c)
local excess = redis.call('XLEN', E) - per_stream
if excess > 0 then
  for _, old in ipairs(redis.call('XRANGE', E, '-', '+', 'COUNT', excess)) do
    redis.call('XDEL', E, old[1])
    less(session, stream, cost(old))
  end
end
for _, k in ipairs({E, SB, SO}) do redis.call('PEXPIRE', k, ttl) end
extend(GB)
extend(GO)

walk(SO, function() return number(SB, '_') > per_session end, function(n) return session, n end)
walk(GO, function() return number(GB, '_') > total end, function(m) return string.match(m, '^(.*) (%d+)$') end)
return seq
",
    )
});

/// Ends a stream: `KEYS`: the stream's hash, the session's order, the order overall, the bytes
/// overall (which hold the order counter). `ARGV`: the stream, `SESSION STREAM`. A counted
/// stream moves among the finished ones, as the newest.
static FINISH: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
-- A hash made here would have no lifetime; one gone has nothing to end.
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'done', 1) end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  local order = redis.call('HINCRBY', KEYS[4], '#', 1)
  if redis.call('PTTL', KEYS[4]) < 0 then
    redis.call('PEXPIRE', KEYS[4], math.max(redis.call('PTTL', KEYS[3]), 1))
  end
  redis.call('ZADD', KEYS[2], 'XX', order, ARGV[1])
  redis.call('ZADD', KEYS[3], 'XX', order, ARGV[2])
end
return 0
",
    )
});

impl RedisStore {
    fn events_key(&self, session: &str, stream: u64) -> String {
        self.key("events", &format!("{session}:{stream}"))
    }

    fn stream_key(&self, session: &str, stream: u64) -> String {
        self.key("stream", &format!("{session}:{stream}"))
    }

    /// The session's bytes kept and its streams' order (see the module's notes).
    fn session_budget_keys(&self, session: &str) -> (String, String) {
        (self.key("evbytes", session), self.key("evorder", session))
    }

    /// The bytes kept and the streams' order overall.
    fn budget_keys(&self) -> (String, String) {
        let prefix = self.prefix();
        (format!("{prefix}:evbytes"), format!("{prefix}:evorder"))
    }

    async fn wake(&self, session: &str, stream: u64) {
        if let Err(e) = self.publish(WAKE_TOPIC, format!("{session} {stream}").into_bytes()).await {
            // Readers elsewhere poll as well: they are late, not lost.
            tracing::debug!(error = %e, "readers of a stream could not be woken");
        }
    }
}

impl SharedEventStore for RedisStore {
    fn open<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        info: &'a StreamInfo,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(info).map_err(|e| StoreError::corrupt("stream info", e))?;
            let key = self.stream_key(session, stream);
            let mut both = redis::pipe();
            both.cmd("HSET").arg(&key).arg("info").arg(json).ignore();
            both.cmd("PEXPIRE").arg(&key).arg(millis(ttl)).ignore();
            self.run_all("stream open", &both).await
        })
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: Option<u64>,
        frame: &'a str,
        budget: &'a EventBudget,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let (events, info) = (self.events_key(session, stream), self.stream_key(session, stream));
            let (session_bytes, session_order) = self.session_budget_keys(session);
            let (bytes, order) = self.budget_keys();
            // The number, the event, the budget and every lifetime in one round trip.
            let mut call = APPEND.prepare_invoke();
            call.key(&events).key(&info).key(&session_bytes).key(&session_order).key(&bytes).key(&order);
            call.arg(seq.unwrap_or(0)).arg(frame);
            call.arg(budget.per_stream.max(1)).arg(budget.per_session).arg(budget.total).arg(millis(ttl));
            call.arg(self.prefix()).arg(session).arg(stream).arg(EVENT_SLOT).arg(STEPS);
            let seq: u64 = call
                .invoke_async(&mut self.commands())
                .await
                .map_err(|e| StoreError::unavailable("event append", e))?;
            self.wake(session, stream).await;
            Ok(seq)
        })
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let (_, session_order) = self.session_budget_keys(session);
            let (bytes, order) = self.budget_keys();
            let mut call = FINISH.prepare_invoke();
            call.key(self.stream_key(session, stream)).key(&session_order).key(&order).key(&bytes);
            call.arg(stream).arg(format!("{session} {stream}"));
            call.invoke_async::<()>(&mut self.commands())
                .await
                .map_err(|e| StoreError::unavailable("stream end", e))?;
            self.wake(session, stream).await;
            Ok(())
        })
    }

    fn info<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<Option<StreamInfo>, StoreError>> {
        Box::pin(async move {
            let lookup = redis::cmd("HMGET")
                .arg(self.stream_key(session, stream))
                .arg("info")
                .arg("done")
                .arg("evicted")
                .to_owned();
            let (info, done, evicted): (Option<String>, Option<String>, Option<String>) =
                self.run("stream lookup", &lookup).await?;
            let Some(info) = info else { return Ok(None) };
            let mut info: StreamInfo =
                serde_json::from_str(&info).map_err(|e| StoreError::corrupt("stream info", e))?;
            info.done |= done.is_some();
            info.evicted |= evicted.is_some();
            Ok(Some(info))
        })
    }

    fn read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(u64, String)>, StoreError>> {
        Box::pin(async move {
            // `(` makes the start exclusive.
            let range = redis::cmd("XRANGE")
                .arg(self.events_key(session, stream))
                .arg(format!("(0-{after}"))
                .arg("+")
                .arg("COUNT")
                .arg(limit.max(1))
                .to_owned();
            let entries: Value = self.run("event replay", &range).await?;
            parse_entries(entries)
        })
    }

    fn position<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<StreamPosition, StoreError>> {
        Box::pin(async move {
            let mut both = redis::pipe();
            both.cmd("HMGET").arg(self.stream_key(session, stream)).arg("seq").arg("delivered");
            both.cmd("XREVRANGE").arg(self.events_key(session, stream)).arg("+").arg("-").arg("COUNT").arg(1);
            let ((numbered, delivered), newest): ((Option<u64>, Option<u64>), Value) =
                self.run_all("stream position", &both).await?;
            // Numbered by the store (the standalone stream) or by its producer: the newer says.
            let kept = parse_entries(newest)?.first().map_or(0, |(seq, _)| *seq);
            Ok(StreamPosition { last: numbered.unwrap_or(0).max(kept), delivered: delivered.unwrap_or(0) })
        })
    }

    fn mark_delivered<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let (events, info) = (self.events_key(session, stream), self.stream_key(session, stream));
            let mut all = redis::pipe();
            all.cmd("HSET").arg(&info).arg("delivered").arg(seq).ignore();
            // The session's budget counts live as long as the events they count.
            let (bytes, order) = self.session_budget_keys(session);
            for key in [&info, &events, &bytes, &order] {
                all.cmd("PEXPIRE").arg(key).arg(millis(ttl)).ignore();
            }
            self.run_all("stream delivered", &all).await
        })
    }

    fn wake_topic(&self) -> &'static str {
        WAKE_TOPIC
    }
}

/// The `(seq, frame)` pairs of an XRANGE answer: `[[id, [field, value, ...]], ...]`.
fn parse_entries(value: Value) -> Result<Vec<(u64, String)>, StoreError> {
    let corrupt = |why: &'static str| StoreError::corrupt("event replay", why);
    let Value::Array(entries) = value else { return Err(corrupt("XRANGE did not answer an array")) };
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let Value::Array(mut parts) = entry else { return Err(corrupt("an entry is not an array")) };
        if parts.len() != 2 {
            return Err(corrupt("an entry is not [id, fields]"));
        }
        let fields = parts.pop();
        let id = parts.pop();
        let seq = match id {
            Some(Value::BulkString(id)) => std::str::from_utf8(&id)
                .ok()
                .and_then(|id| id.strip_prefix("0-"))
                .and_then(|seq| seq.parse().ok())
                .ok_or_else(|| corrupt("an entry id is not 0-SEQ"))?,
            _ => return Err(corrupt("an entry id is not a string")),
        };
        let frame = match fields {
            Some(Value::Array(mut fields)) if fields.len() == 2 => match fields.pop() {
                Some(Value::BulkString(frame)) => {
                    String::from_utf8(frame).map_err(|_| corrupt("an event is not UTF-8"))?
                }
                _ => return Err(corrupt("an event is not a string")),
            },
            _ => return Err(corrupt("an entry's fields are not [f, frame]")),
        };
        out.push((seq, frame));
    }
    Ok(out)
}
