//! SSE events on Redis Streams: each of our streams is a Redis stream whose entry ids are
//! `0-<sequence>`, so an event id names the same event on every replica and a client that
//! resumes with `Last-Event-ID` on another replica gets every later event once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;
use tokio::sync::Notify;

use crate::http::{EventFuture, EventStore, StreamRead};
use crate::protocol::Frame;

/// How long a stream's events are kept after its last event.
const RETENTION: Duration = Duration::from_secs(10 * 60);

/// How many events a stream keeps, at the most.
const CAPACITY: usize = 4096;

/// How often a reader looks for events another replica appended.
const POLL: Duration = Duration::from_millis(25);

/// Appends an event with the next sequence number, unless its once-key was used: one
/// round trip, atomic. The append's nonce makes a repeated append (its first answer lost
/// with the connection) return the first one's number instead of adding the event twice.
const APPEND: &str = r"
local last = redis.call('GET', KEYS[4])
if last then
  local space = string.find(last, ' ', 1, true)
  if space and string.sub(last, 1, space - 1) == ARGV[5] then
    return tonumber(string.sub(last, space + 1))
  end
end
if ARGV[4] == '1' then
  if not redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[2]) then return 0 end
end
local seq = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '0-' .. seq, 'd', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[4], ARGV[5] .. ' ' .. seq, 'EX', ARGV[2])
return seq
";

/// An [`EventStore`] on Redis Streams.
pub struct RedisEventStore {
    connection: ConnectionManager,
    prefix: String,
    append: redis::Script,
    /// Wakes this process's readers at once when this process appends.
    appended: Notify,
    /// This store's name in append nonces.
    origin: String,
}

/// One entry of a Redis stream as XRANGE returns it: its id and its fields.
type Entry = (String, Vec<(String, Vec<u8>)>);

/// Numbers this process's appends.
static NONCE: AtomicU64 = AtomicU64::new(0);

impl RedisEventStore {
    pub(super) fn new(connection: ConnectionManager, prefix: String) -> Self {
        RedisEventStore {
            connection,
            prefix,
            append: redis::Script::new(APPEND),
            appended: Notify::new(),
            origin: {
                let mut bytes = [0u8; 8];
                let _ = getrandom::fill(&mut bytes);
                bytes.iter().map(|b| format!("{b:02x}")).collect()
            },
        }
    }

    /// The stream's keys share a hash tag, so they live on one node of a Redis cluster.
    fn key(&self, stream: &str, suffix: &str) -> String {
        format!("{}{{{stream}}}{suffix}", self.prefix)
    }

    async fn add(&self, stream: &str, once: Option<&str>, frame: Frame) -> u64 {
        let nonce = NONCE.fetch_add(1, Ordering::Relaxed);
        let mut invocation = self.append.key(self.key(stream, ""));
        invocation
            .key(self.key(stream, ":n"))
            .key(self.key(stream, &format!(":once:{}", once.unwrap_or(""))))
            .key(self.key(stream, ":last"))
            .arg(frame)
            .arg(RETENTION.as_secs())
            .arg(CAPACITY)
            .arg(if once.is_some() { "1" } else { "0" })
            .arg(format!("{}:{nonce}", self.origin));
        match retried!(self.connection, |c| invocation.invoke_async::<u64>(&mut c)) {
            Ok(seq) => {
                self.appended.notify_waiters();
                seq
            }
            Err(e) => {
                tracing::error!(%e, stream, "an SSE event is lost: Redis is unreachable");
                0
            }
        }
    }

    /// One look: the events after `after`, and whether the stream is complete.
    async fn look(&self, stream: &str, after: u64) -> redis::RedisResult<StreamRead> {
        let look = redis::pipe()
            .cmd("XRANGE")
            .arg(self.key(stream, ""))
            .arg(format!("(0-{after}"))
            .arg("+")
            .arg("COUNT")
            .arg(256)
            .cmd("GET")
            .arg(self.key(stream, ":done"))
            .clone();
        let (entries, done): (Vec<Entry>, Option<String>) =
            retried!(self.connection, |c| look.query_async(&mut c))?;
        let events = entries
            .into_iter()
            .filter_map(|(id, fields)| {
                let seq = id.strip_prefix("0-")?.parse().ok()?;
                let (_, frame) = fields.into_iter().find(|(f, _)| f == "d")?;
                Some((seq, frame))
            })
            .collect();
        Ok(StreamRead {
            events,
            complete: done.is_some(),
            known: true,
        })
    }
}

impl EventStore for RedisEventStore {
    fn append<'a>(&'a self, stream: &'a str, frame: Frame) -> EventFuture<'a, u64> {
        Box::pin(self.add(stream, None, frame))
    }

    fn append_once<'a>(
        &'a self,
        stream: &'a str,
        key: &'a str,
        frame: Frame,
    ) -> EventFuture<'a, u64> {
        Box::pin(self.add(stream, Some(key), frame))
    }

    fn complete<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        Box::pin(async move {
            let set = redis::cmd("SET")
                .arg(self.key(stream, ":done"))
                .arg("1")
                .arg("EX")
                .arg(RETENTION.as_secs())
                .clone();
            let done: redis::RedisResult<()> =
                retried!(self.connection, |c| set.query_async(&mut c));
            if let Err(e) = done {
                tracing::error!(%e, stream, "cannot mark an SSE stream complete: Redis is unreachable");
            }
            self.appended.notify_waiters();
        })
    }

    fn read_after<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, StreamRead> {
        Box::pin(async move {
            loop {
                let appended = self.appended.notified();
                tokio::pin!(appended);
                appended.as_mut().enable();
                match self.look(stream, after).await {
                    Ok(read) if !read.events.is_empty() || read.complete => return read,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(%e, stream, "cannot read an SSE stream: Redis is unreachable");
                        return StreamRead::default();
                    }
                }
                tokio::select! {
                    () = appended => {}
                    () = tokio::time::sleep(POLL) => {}
                }
            }
        })
    }

    fn forget<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        Box::pin(async move {
            let del = redis::cmd("DEL")
                .arg(self.key(stream, ""))
                .arg(self.key(stream, ":n"))
                .arg(self.key(stream, ":last"))
                .arg(self.key(stream, ":done"))
                .clone();
            let forgotten: redis::RedisResult<()> =
                retried!(self.connection, |c| del.query_async(&mut c));
            if let Err(e) = forgotten {
                // Not fatal: the keys expire after their retention anyway.
                tracing::debug!(%e, stream, "cannot drop a delivered SSE stream");
            }
        })
    }

    fn open<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        Box::pin(async move {
            // The counter at 0 makes the stream known, to every replica, before its first
            // event; appends count on from it.
            let set = redis::cmd("SET")
                .arg(self.key(stream, ":n"))
                .arg(0)
                .arg("NX")
                .arg("EX")
                .arg(RETENTION.as_secs())
                .clone();
            let opened: redis::RedisResult<()> =
                retried!(self.connection, |c| set.query_async(&mut c));
            if let Err(e) = opened {
                tracing::warn!(%e, stream, "cannot open an SSE stream: Redis is unreachable");
            }
        })
    }

    fn contains<'a>(&'a self, stream: &'a str) -> EventFuture<'a, bool> {
        Box::pin(async move {
            let exists = redis::cmd("EXISTS").arg(self.key(stream, ":n")).clone();
            let found: redis::RedisResult<u64> =
                retried!(self.connection, |c| exists.query_async(&mut c));
            found.is_ok_and(|n| n > 0)
        })
    }

    fn last<'a>(&'a self, stream: &'a str) -> EventFuture<'a, u64> {
        Box::pin(async move {
            let get = redis::cmd("GET").arg(self.key(stream, ":n")).clone();
            let last: redis::RedisResult<Option<u64>> =
                retried!(self.connection, |c| get.query_async(&mut c));
            last.ok().flatten().unwrap_or(0)
        })
    }
}
