//! Serving one MCP endpoint from several replicas behind a load balancer: what the replicas
//! share, as traits, so that any shared storage can back them. The `redis` feature
//! implements all of them on Redis (the `mcp_runtime::redis` module).
//!
//! - A [`Bus`] carries what one replica must tell the others: a list or a resource changed
//!   (their clients' subscriptions hear it), a task changed (its listeners hear it), a
//!   session's state changed, and a client's answer to a request that another replica made.
//! - A [`SessionStore`] keeps handshake-era sessions, so a request with an
//!   `Mcp-Session-Id` is served by any replica.
//! - The HTTP transport's `EventStore` (`mcp_runtime::http`) keeps SSE events, so a
//!   client resumes a stream on any replica; the [`TaskStore`](crate::tasks::TaskStore)
//!   keeps tasks, so any replica reports or cancels them.
//!
//! Stateless (2026-07-28) requests need none of this but shared `requestState` keys
//! ([`ServerBuilder::request_state_keys`](crate::ServerBuilder::request_state_keys)).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::RpcError;
use crate::tasks::StoredTask;

/// What one replica tells the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ClusterEvent {
    /// Lists changed: a bit set of tools (1), prompts (2) and resources (4).
    ListChanged {
        /// Which lists.
        kinds: u8,
    },
    /// A resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A task changed.
    TaskChanged {
        /// The task as it is now.
        task: StoredTask,
    },
    /// A handshake-era session changed its log level or subscriptions.
    SessionChanged {
        /// The session as it is now.
        record: SessionRecord,
    },
    /// A handshake-era session ended (its client's `DELETE`).
    SessionEnded {
        /// Its `Mcp-Session-Id`.
        id: String,
    },
    /// A client answered a request that some replica sent it.
    ClientAnswer {
        /// The session the request went out on.
        session: String,
        /// The request's id.
        request: i64,
        /// The client's result, or its error.
        answer: Result<Value, RpcError>,
    },
    /// A handshake-era session's client fetched lists through the replica that publishes
    /// this: the replica announcing the session's list changes announces the next one.
    ListsFetched {
        /// The session's `Mcp-Session-Id`.
        session: String,
        /// Which lists, as in [`ClusterEvent::ListChanged`].
        kinds: u8,
    },
    /// Not another replica's: the bus delivers it itself when its subscription is back
    /// after a time in which events may have been lost (its connection dropped, or it
    /// delivered nothing). Every copy of a shared session is then read again on its next
    /// request, every client is told that the lists offered and the resources it follows
    /// may have changed, and each task a listener follows is read from the task store and
    /// told as it stands. Never sent between replicas.
    #[serde(skip)]
    Resubscribed,
}

/// The bus between replicas. Events are best-effort: one lost while the bus is down is not
/// delivered later, but a bus that says so when it is back
/// ([`ClusterEvent::Resubscribed`]) has the server make up for what may have been lost.
pub trait Bus: Send + Sync + 'static {
    /// Sends an event to every other replica.
    fn publish(&self, event: ClusterEvent);

    /// Sends an event to every other replica, and finishes once every replica has applied
    /// it, so that a response sent afterwards does not overtake it (a session's change or
    /// end, which the other replicas' copies of the session must have before the client's
    /// next request). Bound the wait: a replica that has stopped reading must not stop the
    /// others' responses. The default sends the event and finishes at once: a bus that
    /// cannot tell when an event is applied leaves the other replicas' copies of a session
    /// stale until they read the event, at the latest until their next recheck
    /// (`HttpOptions::shared_session_recheck`), so override it when the bus can.
    fn publish_passed_on(
        &self,
        event: ClusterEvent,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        self.publish(event);
        Box::pin(std::future::ready(()))
    }

    /// Delivers every other replica's events to `deliver`, from now on (called once, when
    /// the server is built). A bus that may lose events while it is disconnected delivers
    /// [`ClusterEvent::Resubscribed`] once it is back. The server may publish while it
    /// handles an event (after a gap it passes on what it may have lost), so `deliver` must
    /// not be called under a lock that `publish` takes.
    fn subscribe(&self, deliver: Box<dyn Fn(ClusterEvent) + Send + Sync>);
}

/// A handshake-era session, as replicas share it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// The client's `clientInfo`.
    pub client_info: Value,
    /// The client's capabilities.
    pub client_capabilities: Map<String, Value>,
    /// The level set with `logging/setLevel`, if any (`None`: none sent at all).
    pub log_level: Option<String>,
    /// The resources it subscribed to.
    pub subscriptions: Vec<String>,
    /// The subject of the token that opened it, when the endpoint authenticates: the
    /// session serves that subject alone, on every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// What handlers keep in the session ([`SessionData`](crate::SessionData)), by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub store: Map<String, Value>,
    /// The session's own visibility of tools, prompts and resources.
    #[serde(default, skip_serializing_if = "crate::SessionVisibility::is_empty")]
    pub visibility: crate::SessionVisibility,
}

/// Why a shared store could not do what it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the shared store is unavailable: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// The future a [`SessionStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where handshake-era sessions are kept, so that every replica can serve them. Records
/// expire after `ttl` without a `put`, a `replace` or a `get` (a session's idle timeout).
pub trait SessionStore: Send + Sync + 'static {
    /// Creates or replaces a session's record (a session just opened).
    fn put<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, ()>;

    /// Replaces the record of a session that is still there, in one step; false, writing
    /// nothing, when it ended or expired. A change written back as another replica ends the
    /// session must not bring the session back: a `get` then a `put` would.
    fn replace<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool>;

    /// A session's record, its time to live renewed; `None` when it ended or expired.
    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>>;

    /// Ends a session; false when it was not there.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;
}

/// A [`SessionStore`] in this process's memory: what one process does without a store,
/// behind the trait, for servers that share one process (tests, several endpoints in one
/// program). Records expire `ttl` after their last `put` or `get`.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::cluster::{InMemorySessionStore, SessionRecord, SessionStore};
///
/// # mcp_runtime::__private::block_on(async {
/// let store = InMemorySessionStore::default();
/// let record = SessionRecord {
///     id: "s1".into(),
///     protocol_version: "2025-11-25".into(),
///     ..SessionRecord::default()
/// };
/// store.put(&record, Duration::from_secs(60)).await.unwrap();
/// assert_eq!(store.get("s1", Duration::from_secs(60)).await.unwrap(), Some(record.clone()));
/// assert!(store.replace(&record, Duration::from_secs(60)).await.unwrap());
/// assert!(store.remove("s1").await.unwrap());
/// assert_eq!(store.get("s1", Duration::from_secs(60)).await.unwrap(), None);
/// // An ended session's record is not written again.
/// assert!(!store.replace(&record, Duration::from_secs(60)).await.unwrap());
/// assert_eq!(store.get("s1", Duration::from_secs(60)).await.unwrap(), None);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct InMemorySessionStore {
    records:
        std::sync::Mutex<std::collections::HashMap<String, (SessionRecord, std::time::Instant)>>,
}

impl InMemorySessionStore {
    fn records(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<String, (SessionRecord, std::time::Instant)>,
    > {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SessionStore for InMemorySessionStore {
    fn put<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, ()> {
        let now = std::time::Instant::now();
        let mut records = self.records();
        records.retain(|_, (_, expires)| *expires > now);
        records.insert(record.id.clone(), (record.clone(), now + ttl));
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> StoreFuture<'a, Option<SessionRecord>> {
        let now = std::time::Instant::now();
        let mut records = self.records();
        let found = match records.get_mut(id) {
            Some((record, expires)) if *expires > now => {
                *expires = now + ttl;
                Some(record.clone())
            }
            Some(_) => {
                records.remove(id);
                None
            }
            None => None,
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace<'a>(&'a self, record: &'a SessionRecord, ttl: Duration) -> StoreFuture<'a, bool> {
        let now = std::time::Instant::now();
        let mut records = self.records();
        let replaced = match records.get_mut(&record.id) {
            Some(live) if live.1 > now => {
                *live = (record.clone(), now + ttl);
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(replaced)))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let removed = self.records().remove(id).is_some();
        Box::pin(std::future::ready(Ok(removed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_expire_when_idle_and_a_get_renews_them() {
        crate::__private::block_on(async {
            let store = InMemorySessionStore::default();
            let record = SessionRecord {
                id: "s".into(),
                ..SessionRecord::default()
            };
            let short = Duration::from_millis(600);
            store.put(&record, short).await.unwrap();
            tokio::time::sleep(Duration::from_millis(350)).await;
            assert!(store.get("s", short).await.unwrap().is_some(), "renewed");
            tokio::time::sleep(Duration::from_millis(350)).await;
            assert!(
                store.get("s", short).await.unwrap().is_some(),
                "still alive"
            );
            tokio::time::sleep(Duration::from_millis(800)).await;
            assert_eq!(store.get("s", short).await.unwrap(), None, "expired");
            assert!(!store.remove("s").await.unwrap());
        });
    }
}
