//! The HTTP session table: `Mcp-Session-Id`s issued at `initialize`, looked up on every
//! request, ended by `DELETE`, expired when idle, and bounded in number.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::events::EventStore;
use crate::server::Server;
use crate::server::session::{Outbound, Session};

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
    /// The response streams opened for this session's requests, for `Last-Event-ID`.
    streams: Mutex<Vec<String>>,
    last_seen_ms: AtomicU64,
}

impl HttpSession {
    pub(crate) fn touch(&self, epoch: Instant) {
        self.last_seen_ms
            .store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    pub(crate) fn add_stream(&self, stream: &str) {
        let mut streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        // Streams are kept for resumption; the oldest are forgotten past a bound.
        if streams.len() >= 1024 {
            streams.remove(0);
        }
        streams.push(stream.to_owned());
    }

    pub(crate) fn owns_stream(&self, stream: &str) -> bool {
        stream == self.standalone
            || self
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|s| s == stream)
    }
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
    /// notifications into its standalone stream.
    pub(crate) fn open(
        &self,
        server: &Server,
        store: &Arc<dyn EventStore>,
    ) -> Option<Arc<HttpSession>> {
        let id = new_session_id()?;
        let (notifications, mut frames) = Outbound::new();
        let session = Arc::new(Session::new(notifications));
        server.register_session(&session);
        let http = Arc::new(HttpSession {
            standalone: format!("{id}-get"),
            id: id.clone(),
            session,
            in_flight: Arc::new(Semaphore::new(self.max_in_flight)),
            standalone_open: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
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
        let mut map = self.map();
        if map.len() >= self.max_sessions {
            // Full: the session idle the longest makes room.
            if let Some(oldest) = map
                .values()
                .min_by_key(|s| s.last_seen_ms.load(Ordering::Relaxed))
                .map(|s| s.id.clone())
                && let Some(evicted) = map.remove(&oldest)
            {
                close(&evicted);
            }
        }
        map.insert(id, Arc::clone(&http));
        Some(http)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = self.map().get(id).cloned()?;
        session.touch(self.epoch);
        Some(session)
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
