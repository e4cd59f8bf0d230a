//! Resumable streams on Redis: each stream's events in a Redis stream
//! (`PREFIX:events:SESSION:STREAM`, entry id `0-SEQ`, capped), what is known of it in a hash
//! (`PREFIX:stream:SESSION:STREAM`: `info`, and `done` once ended); appends and ends told on
//! the bus so that readers on other instances wake at once.

use std::time::Duration;

use futures::future::BoxFuture;
use mcp_http::{EventBudget, SharedEventStore, StreamInfo, StreamPosition};
use mcp_server::shared::{Bus, StoreError};
use redis::Value;

use crate::{millis, RedisStore};

const WAKE_TOPIC: &str = "events";

/// Appends an event: `KEYS[1]` the events, `KEYS[2]` the stream's hash; `ARGV[1]` its number
/// (0: one more than the stream's last, kept in the hash as `seq`), `ARGV[2]` the frame,
/// `ARGV[3]` the events kept at most, `ARGV[4]` the lifetime in ms. Returns the number.
static APPEND: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local seq = tonumber(ARGV[1])
if seq == 0 then
  seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '0-' .. seq, 'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return seq
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
            // The number, the event and both lifetimes in one round trip.
            let mut call = APPEND.prepare_invoke();
            call.key(&events).key(&info);
            call.arg(seq.unwrap_or(0)).arg(frame).arg(budget.per_stream.max(1)).arg(millis(ttl));
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
            let done = redis::cmd("HSET").arg(self.stream_key(session, stream)).arg("done").arg(1).to_owned();
            self.run::<()>("stream end", &done).await?;
            self.wake(session, stream).await;
            Ok(())
        })
    }

    fn info<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<Option<StreamInfo>, StoreError>> {
        Box::pin(async move {
            let lookup = redis::cmd("HMGET").arg(self.stream_key(session, stream)).arg("info").arg("done").to_owned();
            let (info, done): (Option<String>, Option<String>) = self.run("stream lookup", &lookup).await?;
            let Some(info) = info else { return Ok(None) };
            let mut info: StreamInfo =
                serde_json::from_str(&info).map_err(|e| StoreError::corrupt("stream info", e))?;
            info.done |= done.is_some();
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
            all.cmd("PEXPIRE").arg(&info).arg(millis(ttl)).ignore();
            all.cmd("PEXPIRE").arg(&events).arg(millis(ttl)).ignore();
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
