//! The HTTP session table: `Mcp-Session-Id`s issued at `initialize`, looked up on every
//! request, ended by `DELETE`, expired when idle, and bounded in number.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::events::EventStore;
use crate::cluster::SessionRecord;
use crate::protocol::ProtocolVersion;
use crate::server::Server;
use crate::server::cluster::apply_record;
use crate::server::session::{Negotiated, Outbound, Session};

/// One client's session over HTTP.
pub(crate) struct HttpSession {
    pub id: String,
    pub session: Arc<Session>,
    /// Requests of this session being served; beyond the limit a request is refused.
    pub in_flight: Arc<Semaphore>,
    /// The stream that carries notifications belonging to no request (the GET stream).
    pub standalone: String,
    /// Whether a GET stream is open (only one may be, so no message goes out twice).
    pub standalone_open: AtomicBool,
    last_seen_ms: AtomicU64,
}

impl HttpSession {
    pub(crate) fn touch(&self, epoch: Instant) {
        self.last_seen_ms
            .store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// A new name for the response stream of one of this session's requests: unique on
    /// every replica, and starting with the session's id, which is what makes it the
    /// session's.
    pub(crate) fn new_stream(&self) -> String {
        let n = STREAM_COUNTER.fetch_add(1, Ordering::Relaxed);
        format!("{}-{}-{n}", self.id, replica_id())
    }

    /// Whether a stream (named in a `Last-Event-ID`) is one of this session's.
    pub(crate) fn owns_stream(&self, stream: &str) -> bool {
        stream
            .strip_prefix(self.id.as_str())
            .is_some_and(|rest| rest.starts_with('-'))
    }
}

static STREAM_COUNTER: AtomicU64 = AtomicU64::new(1);

/// Why no session could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The table is full of sessions that are serving requests.
    Full,
    /// No random id could be made, or a shared record is unreadable.
    NoId,
}

/// This process's random name among replicas, in stream names.
fn replica_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let mut bytes = [0u8; 4];
        let _ = getrandom::fill(&mut bytes);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    })
}

/// Every live session.
pub(crate) struct SessionTable {
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    epoch: Instant,
    pub idle_timeout: Duration,
    pub max_sessions: usize,
    pub max_in_flight: usize,
}

impl SessionTable {
    pub(crate) fn new(idle_timeout: Duration, max_sessions: usize, max_in_flight: usize) -> Self {
        SessionTable {
            sessions: Mutex::new(HashMap::new()),
            epoch: Instant::now(),
            idle_timeout,
            max_sessions: max_sessions.max(1),
            max_in_flight: max_in_flight.max(1),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a session: a fresh random id, and a task that carries the session's own
    /// notifications into its standalone stream. This process delivers the session's
    /// notifications (list changes, resource updates), also when other replicas serve it.
    pub(crate) fn open(
        &self,
        server: &Server,
        store: &Arc<dyn EventStore>,
    ) -> Result<Arc<HttpSession>, NoRoom> {
        let id = new_session_id().ok_or(NoRoom::NoId)?;
        let http = self.insert(id, server, store)?;
        server.register_session(&http.session);
        Ok(http)
    }

    /// A local copy of a session another replica opened, from its shared record. Its
    /// notifications are delivered by the replica that opened it, not from here.
    pub(crate) fn adopt(
        &self,
        record: &SessionRecord,
        server: &Server,
        store: &Arc<dyn EventStore>,
    ) -> Result<Arc<HttpSession>, NoRoom> {
        let version = record
            .protocol_version
            .parse::<ProtocolVersion>()
            .map_err(|_| NoRoom::NoId)?;
        let http = self.insert(record.id.clone(), server, store)?;
        http.session.initialize(Negotiated {
            version,
            client_info: serde_json::from_value(record.client_info.clone()).unwrap_or_default(),
            client_capabilities: record.client_capabilities.clone(),
        });
        apply_record(&http.session, record);
        Ok(http)
    }

    fn insert(
        &self,
        id: String,
        server: &Server,
        store: &Arc<dyn EventStore>,
    ) -> Result<Arc<HttpSession>, NoRoom> {
        self.make_room()?;
        let (notifications, mut frames) = Outbound::new();
        let session = Arc::new(Session::new(notifications));
        session.set_key(&id);
        server.key_session(&id, &session);
        let http = Arc::new(HttpSession {
            standalone: format!("{id}-get"),
            id: id.clone(),
            session,
            in_flight: Arc::new(Semaphore::new(self.max_in_flight)),
            standalone_open: AtomicBool::new(false),
            last_seen_ms: AtomicU64::new(0),
        });
        http.touch(self.epoch);
        let stream = http.standalone.clone();
        let store = Arc::clone(store);
        let server = server.clone();
        tokio::spawn(async move {
            while let Some(frame) = frames.recv().await {
                if frame.is_empty() {
                    break;
                }
                server.trace_out(&frame);
                store.append(&stream, frame).await;
            }
            store.complete(&stream).await;
        });
        self.map().insert(id, Arc::clone(&http));
        Ok(http)
    }

    /// When the table is full, ends the session idle the longest among those serving
    /// nothing; when every session is serving a request, there is no room.
    fn make_room(&self) -> Result<(), NoRoom> {
        let mut map = self.map();
        if map.len() < self.max_sessions {
            return Ok(());
        }
        let oldest = map
            .values()
            .filter(|s| s.in_flight.available_permits() == self.max_in_flight)
            .min_by_key(|s| s.last_seen_ms.load(Ordering::Relaxed))
            .map(|s| s.id.clone())
            .ok_or(NoRoom::Full)?;
        if let Some(evicted) = map.remove(&oldest) {
            close(&evicted);
        }
        Ok(())
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.map().get(id).cloned()?;
        session.touch(self.epoch);
        Some(session)
    }

    /// Drops the local copy of a session that ended elsewhere.
    pub(crate) fn forget(&self, id: &str) {
        if let Some(session) = self.map().remove(id) {
            close(&session);
        }
    }

    /// Ends a session; false when there was none.
    pub(crate) fn remove(&self, id: &str) -> bool {
        match self.map().remove(id) {
            Some(session) => {
                close(&session);
                true
            }
            None => false,
        }
    }

    /// Ends the sessions idle for longer than the timeout and serving nothing.
    pub(crate) fn expire_idle(&self) -> usize {
        let now = self.epoch.elapsed().as_millis() as u64;
        let limit = self.idle_timeout.as_millis() as u64;
        let mut map = self.map();
        let expired: Vec<String> = map
            .values()
            .filter(|s| {
                now.saturating_sub(s.last_seen_ms.load(Ordering::Relaxed)) > limit
                    && s.in_flight.available_permits() == self.max_in_flight
            })
            .map(|s| s.id.clone())
            .collect();
        for id in &expired {
            if let Some(session) = map.remove(id) {
                close(&session);
            }
        }
        expired.len()
    }

    /// Ends every session (shutdown).
    pub(crate) fn clear(&self) {
        for (_, session) in self.map().drain() {
            close(&session);
        }
    }
}

fn close(session: &HttpSession) {
    session.session.cancel_all();
    session.session.notifications().close();
}

/// 128 random bits from the operating system, as hex: unguessable, as session ids must be.
/// `None` when the operating system's generator fails: no guessable id is ever issued.
pub(crate) fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
