//! Handshake-era sessions in Redis: one key each, holding its record as JSON, expiring when
//! the session has been idle for its time to live.

use std::time::Duration;

use redis::aio::ConnectionManager;

use super::commands::store_error;
use crate::cluster::{SessionRecord, SessionStore, StoreError, StoreFuture};

/// A [`SessionStore`] in Redis.
pub struct RedisSessionStore {
    connection: ConnectionManager,
    prefix: String,
}

impl RedisSessionStore {
    pub(super) fn new(connection: ConnectionManager, prefix: String) -> Self {
        RedisSessionStore { connection, prefix }
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    /// `SET` of a session's record, expiring after `ttl`.
    fn set(&self, record: &SessionRecord, ttl: Duration) -> Result<redis::Cmd, StoreError> {
        let json = serde_json::to_string(record).map_err(|e| StoreError(e.to_string()))?;
        Ok(redis::cmd("SET")
            .arg(self.key(&record.id))
            .arg(json)
            .arg("EX")
            .arg(seconds(ttl))
            .clone())
    }
}

fn seconds(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

impl SessionStore for RedisSessionStore {
    fn put<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let set = self.set(record, ttl)?;
            retried!(self.connection, |c| set.query_async::<()>(&mut c)).map_err(store_error)
        })
    }

    fn replace<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            // XX: written only over a key that is there, in the one command, so a DEL that
            // came first is not undone.
            let set = self.set(record, ttl)?.arg("XX").clone();
            let written: Option<String> =
                retried!(self.connection, |c| set.query_async(&mut c)).map_err(store_error)?;
            Ok(written.is_some())
        })
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let get = redis::cmd("GETEX")
                .arg(self.key(id))
                .arg("EX")
                .arg(seconds(ttl))
                .clone();
            let json: Option<String> =
                retried!(self.connection, |c| get.query_async(&mut c)).map_err(store_error)?;
            Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let del = redis::cmd("DEL").arg(self.key(id)).clone();
            let removed: i64 =
                retried!(self.connection, |c| del.query_async(&mut c)).map_err(store_error)?;
            Ok(removed > 0)
        })
    }
}
