//! The HTTP session table: `Mcp-Session-Id`s issued at `initialize`, looked up on every
//! request (on this replica, or in the shared store that other replicas write to), ended by
//! `DELETE`, expired when idle, bounded in number in total and per client, and bound to the
//! caller that opened them; the requests each client has in flight; and the sessions of the
//! legacy HTTP+SSE transport.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::events::EventStore;
use super::options::HttpOptions;
use crate::auth::AuthInfo;
use crate::cluster::{SessionRecord, SessionStore, StoreError};
use crate::protocol::ProtocolVersion;
use crate::server::Server;
use crate::server::cluster::{apply_record, take_record};
use crate::session::{Negotiated, OpenQueue, Outbound, Session};

/// Who holds sessions, for quotas and for binding a session to its opener: the subject of
/// the token when there is authentication, otherwise the peer's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    Subject(String),
    Peer(IpAddr),
    /// Neither is known (a router mounted in a server that gives no peer address).
    Unknown,
}

impl Client {
    pub(crate) fn of(caller: Option<&AuthInfo>, peer: Option<SocketAddr>) -> Client {
        match (caller, peer) {
            (Some(caller), _) => Client::Subject(caller.subject.clone()),
            (None, Some(peer)) => Client::Peer(peer.ip()),
            (None, None) => Client::Unknown,
        }
    }

    /// Whether a request by `caller` may use a session this client opened: a session opened
    /// with a token serves that token's subject alone (any of its tokens, so a refreshed
    /// token keeps the session). Anonymous sessions are not bound: peer addresses change.
    pub(crate) fn admits(&self, caller: Option<&AuthInfo>) -> bool {
        match self {
            Client::Subject(subject) => caller.is_some_and(|c| &c.subject == subject),
            Client::Peer(_) | Client::Unknown => caller.is_none(),
        }
    }

    /// The owner a shared session record carries.
    pub(crate) fn owner(&self) -> Option<&str> {
        match self {
            Client::Subject(subject) => Some(subject),
            _ => None,
        }
    }
}

/// One client's session over HTTP.
pub(crate) struct HttpSession {
    pub id: String,
    pub session: Arc<Session>,
    /// The client that opened it.
    pub client: Client,
    /// The count of requests that client has in flight, over all its sessions.
    pub calls: Option<Arc<ClientCalls>>,
    /// Requests of this session being served; beyond the limit a request is refused.
    pub in_flight: Arc<Semaphore>,
    /// Whether a GET stream is open (only one may be, so no message goes out twice).
    pub standalone_open: AtomicBool,
    last_seen_ms: AtomicU64,
    /// When the shared record was last read (ms since the table's epoch, plus one; 0:
    /// never), and the session's count of rechecks then.
    checked: Mutex<(u64, u64)>,
}

impl HttpSession {
    pub(crate) fn touch(&self, epoch: Instant) {
        self.last_seen_ms
            .store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// The shared record was read at `at` (ms since the table's epoch), when the session's
    /// count of rechecks was `rechecks`.
    fn checked(&self, at: u64, rechecks: u64) {
        *self.checked.lock().unwrap_or_else(|p| p.into_inner()) = (at + 1, rechecks);
    }

    /// The stream that carries notifications belonging to no request (the GET stream).
    pub(crate) fn standalone(&self) -> String {
        standalone_stream(&self.id)
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

    /// Whether the session is serving anything: a request in flight, or its open stream.
    /// Such a session is never ended to make room.
    fn busy(&self, max_in_flight: usize) -> bool {
        self.in_flight.available_permits() < max_in_flight
            || self.standalone_open.load(Ordering::Acquire)
    }
}

fn standalone_stream(session: &str) -> String {
    format!("{session}-get")
}

static STREAM_COUNTER: AtomicU64 = AtomicU64::new(1);

/// Why no session could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The table is full of sessions that are serving requests.
    Full,
    /// The client holds its quota of sessions, each serving a request.
    ClientFull,
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

/// The sessions, and how many each client holds.
#[derive(Default)]
struct Sessions {
    by_id: HashMap<String, Arc<HttpSession>>,
    per_client: HashMap<Client, usize>,
}

impl Sessions {
    fn insert(&mut self, session: Arc<HttpSession>) {
        *self.per_client.entry(session.client.clone()).or_insert(0) += 1;
        if let Some(replaced) = self.by_id.insert(session.id.clone(), session) {
            self.uncount(&replaced.client);
        }
    }

    fn remove(&mut self, id: &str) -> Option<Arc<HttpSession>> {
        let removed = self.by_id.remove(id)?;
        self.uncount(&removed.client);
        Some(removed)
    }

    fn uncount(&mut self, client: &Client) {
        if let Some(count) = self.per_client.get_mut(client) {
            *count -= 1;
            if *count == 0 {
                self.per_client.remove(client);
            }
        }
    }

    fn count_of(&self, client: &Client) -> usize {
        self.per_client.get(client).copied().unwrap_or(0)
    }
}

/// The requests one client has in flight, over all its sessions. Each session of the client
/// holds the same count from the moment it opens, so that a request takes its place with
/// one atomic add instead of a look into a table under a lock (two hashes of the client).
pub(crate) struct ClientCalls(AtomicUsize);

/// One request of a client in flight, over all its sessions; its place in the count is
/// given back when dropped.
pub(crate) struct ClientCall(Arc<ClientCalls>);

impl Drop for ClientCall {
    fn drop(&mut self) {
        (self.0).0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Each client's count of requests in flight, while a session holds it (or a request it
/// began); a count nobody holds is forgotten.
#[derive(Default)]
struct CallCounts {
    by_client: HashMap<Client, std::sync::Weak<ClientCalls>>,
    /// How many entries there may be before the forgotten ones are swept out.
    sweep_at: usize,
}

/// Every live session of this process, and — when replicas share sessions — the way to the
/// shared records.
pub(crate) struct SessionTable {
    sessions: Mutex<Sessions>,
    /// Requests each client has in flight, over all its sessions.
    calls: Mutex<CallCounts>,
    max_calls_per_client: usize,
    epoch: Instant,
    pub idle_timeout: Duration,
    pub max_sessions: usize,
    pub max_per_client: usize,
    pub max_in_flight: usize,
    /// How long a shared session is served from its local copy before its record is read
    /// again, in ms (0: on every request).
    recheck_ms: u64,
    server: Server,
    /// Where sessions are shared with other replicas (their streams then outlive the local
    /// copy of a session).
    shared: Option<Arc<dyn SessionStore>>,
    /// Makes a session's standalone queue when the session first sends something.
    queues: Arc<StandaloneQueues>,
}

/// The queues of sessions' standalone streams, made on first use: each with a task that
/// carries the session's own notifications into its standalone stream. This process
/// delivers the session's notifications (list changes, resource updates), also when other
/// replicas serve it.
struct StandaloneQueues {
    /// The runtime sessions are opened on (a queue may be made from any thread).
    runtime: std::sync::OnceLock<tokio::runtime::Handle>,
    server: Server,
    events: Arc<dyn EventStore>,
    shared: bool,
}

impl StandaloneQueues {
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        match self.runtime.get() {
            Some(runtime) => drop(runtime.spawn(task)),
            None => drop(tokio::spawn(task)),
        }
    }
}

impl OpenQueue for StandaloneQueues {
    fn open(&self, key: &str) -> Outbound {
        let (notifications, mut frames) = Outbound::new();
        let stream = standalone_stream(key);
        let store = Arc::clone(&self.events);
        let server = self.server.clone();
        let ended = (!self.shared).then(|| key.to_owned());
        self.spawn(async move {
            store.open(&stream).await;
            while let Some(frame) = frames.recv().await {
                if frame.is_empty() {
                    break;
                }
                server.trace_out(&frame);
                store.append(&stream, frame).await;
            }
            store.complete(&stream).await;
            // The session ended: nothing will resume its streams. Shared streams outlive a
            // local copy of the session, and expire by themselves.
            if let Some(session) = ended {
                store.end_session(&session).await;
            }
        });
        notifications
    }

    fn ended_unopened(&self, key: &str) {
        let store = Arc::clone(&self.events);
        let key = key.to_owned();
        let shared = self.shared;
        self.spawn(async move {
            if shared {
                // A stream another replica opened for it ends, as it would have here.
                store.complete(&standalone_stream(&key)).await;
            } else {
                // Its requests' streams.
                store.end_session(&key).await;
            }
        });
    }
}

/// Why a request's session could not be found.
pub(crate) enum Lookup {
    /// No such session, or not one this caller may use: 404.
    Unknown,
    /// The shared store cannot be reached: 503.
    Unreachable(StoreError),
    /// The session lives on another replica, and there is no room for a copy here.
    NoRoom(NoRoom),
}

impl SessionTable {
    pub(crate) fn new(options: &HttpOptions, server: Server) -> Self {
        SessionTable {
            sessions: Mutex::new(Sessions::default()),
            calls: Mutex::new(CallCounts::default()),
            max_calls_per_client: options.max_in_flight_per_client.max(1),
            epoch: Instant::now(),
            idle_timeout: options.session_idle_timeout,
            max_sessions: options.max_sessions.max(1),
            max_per_client: options.max_sessions_per_client.max(1),
            max_in_flight: options.max_in_flight_per_session.max(1),
            recheck_ms: options
                .shared_session_recheck
                .min(options.session_idle_timeout / 4)
                .as_millis() as u64,
            queues: Arc::new(StandaloneQueues {
                runtime: std::sync::OnceLock::new(),
                server: server.clone(),
                events: Arc::clone(&options.event_store),
                shared: options.session_store.is_some(),
            }),
            server,
            shared: options.session_store.clone(),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What `client` holds in the table, and what all clients hold: for the legacy
    /// transport, whose sessions count against the same quotas.
    #[cfg(feature = "legacy-sse")]
    pub(crate) fn held_by(&self, client: &Client) -> HeldElsewhere {
        let map = self.map();
        HeldElsewhere {
            by_client: map.count_of(client),
            in_all: map.by_id.len(),
        }
    }

    /// The count of requests `client` has in flight, shared by all its sessions; `None` for
    /// a client the server cannot tell apart from others (they would all share one count,
    /// so it is not counted).
    pub(crate) fn calls_of(&self, client: &Client) -> Option<Arc<ClientCalls>> {
        if *client == Client::Unknown {
            return None;
        }
        let mut counts = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(calls) = counts
            .by_client
            .get(client)
            .and_then(std::sync::Weak::upgrade)
        {
            return Some(calls);
        }
        let calls = Arc::new(ClientCalls(AtomicUsize::new(0)));
        counts
            .by_client
            .insert(client.clone(), Arc::downgrade(&calls));
        if counts.by_client.len() > counts.sweep_at {
            counts.by_client.retain(|_, calls| calls.strong_count() > 0);
            counts.sweep_at = (2 * counts.by_client.len()).max(64);
        }
        Some(calls)
    }

    /// Counts a request in flight for the client whose count is `calls` ([`calls_of`]), over
    /// all its sessions; `Err` when it has as many as it may. A session's own limit bounds
    /// one session; this bounds a client that spreads calls over many sessions (calls whose
    /// connection closed go on running).
    ///
    /// [`calls_of`]: SessionTable::calls_of
    pub(crate) fn begin_call(
        &self,
        calls: Option<&Arc<ClientCalls>>,
    ) -> Result<Option<ClientCall>, ()> {
        let Some(calls) = calls else {
            return Ok(None);
        };
        if calls.0.fetch_add(1, Ordering::AcqRel) >= self.max_calls_per_client {
            calls.0.fetch_sub(1, Ordering::AcqRel);
            return Err(());
        }
        Ok(Some(ClientCall(Arc::clone(calls))))
    }

    /// Opens a session: a fresh random id, and a task that carries the session's own
    /// notifications into its standalone stream. This process delivers the session's
    /// notifications (list changes, resource updates), also when other replicas serve it.
    ///
    /// A session of the client's given up for this one (its quota) is ended on every replica
    /// first, as a `DELETE` ends it, before the client learns the new id: kept in the shared
    /// store, the client's next request would read it back, and the quota would hold
    /// nothing back.
    /// `elsewhere` is what the client holds outside the table (the legacy transport's
    /// sessions): the quotas count both.
    pub(crate) async fn open(
        &self,
        client: Client,
        elsewhere: HeldElsewhere,
    ) -> Result<Arc<HttpSession>, NoRoom> {
        let id = new_session_id().ok_or(NoRoom::NoId)?;
        let (http, given_up) = self.insert(id, client, elsewhere)?;
        self.server.register_session(&http.session);
        if let (Some(store), Some(given_up)) = (&self.shared, given_up) {
            // Boxed: only a client at its quota waits on the store here, and every request's
            // future would otherwise hold this one's.
            if let Err(e) = Box::pin(self.end_shared(store, &given_up)).await {
                tracing::warn!(%e, session = %given_up, "cannot end a session given up for room");
            }
        }
        Ok(http)
    }

    /// A local copy of a session another replica opened, from its shared record. What the
    /// record says is what the client was last told of: making the copy tells it nothing.
    /// An anonymous session is counted against the client of the request that reads it
    /// here (its peer address), as on the replica that opened it: without it the client's
    /// quotas would not hold on this replica.
    fn adopt(
        &self,
        record: &SessionRecord,
        peer: Option<SocketAddr>,
    ) -> Result<Arc<HttpSession>, NoRoom> {
        let version = record
            .protocol_version
            .parse::<ProtocolVersion>()
            .map_err(|_| NoRoom::NoId)?;
        let client = match owner_client(record) {
            Client::Unknown => Client::of(None, peer),
            owner => owner,
        };
        // A session given up for a copy is only dropped here (see `make_room`).
        let (http, _) = self.insert(record.id.clone(), client, HeldElsewhere::default())?;
        http.session.initialize(Negotiated {
            version,
            client_info: serde_json::from_value(record.client_info.clone()).unwrap_or_default(),
            client_capabilities: record.client_capabilities.clone(),
        });
        take_record(&http.session, record);
        Ok(http)
    }

    /// Counts a session in, and the id of a session of the same client given up for it.
    fn insert(
        &self,
        id: String,
        client: Client,
        elsewhere: HeldElsewhere,
    ) -> Result<(Arc<HttpSession>, Option<String>), NoRoom> {
        let server = &self.server;
        // Room is made and the session counted under one lock, so concurrent opens cannot
        // overshoot a quota.
        let mut map = self.map();
        let given_up = self.make_room(&mut map, &client, elsewhere)?;
        self.queues
            .runtime
            .get_or_init(tokio::runtime::Handle::current);
        let session = Arc::new(Session::keyed_with_queue_on_first_use(
            &id,
            Arc::clone(&self.queues) as Arc<dyn OpenQueue>,
        ));
        server.key_session(&id, &session);
        let http = Arc::new(HttpSession {
            id,
            session,
            calls: self.calls_of(&client),
            client,
            in_flight: Arc::new(Semaphore::new(self.max_in_flight)),
            standalone_open: AtomicBool::new(false),
            last_seen_ms: AtomicU64::new(0),
            checked: Mutex::new((0, 0)),
        });
        http.touch(self.epoch);
        map.insert(Arc::clone(&http));
        Ok((http, given_up))
    }

    /// Makes room for one more session of `client`. A client at its quota gives up its own
    /// session idle the longest (429 when each is busy); a full table gives up the session
    /// idle the longest of the client holding the most sessions (503 when every session is
    /// busy). A session serving a request or holding its stream open is never ended.
    ///
    /// The client's own session given up is returned: [`open`](Self::open) ends it in the
    /// shared store too. One given up to take a copy, or to keep the table's size, is only
    /// dropped here (with sessions shared the table is a cache of copies: this replica cannot
    /// tell whether another is serving it, and a later request reads it back).
    ///
    /// What the client holds `elsewhere` counts against both quotas, but only the table's
    /// own sessions are given up.
    fn make_room(
        &self,
        map: &mut Sessions,
        client: &Client,
        elsewhere: HeldElsewhere,
    ) -> Result<Option<String>, NoRoom> {
        if *client != Client::Unknown
            && map.count_of(client) + elsewhere.by_client >= self.max_per_client
        {
            let own = self
                .idlest(map, |s| s.client == *client)
                .ok_or(NoRoom::ClientFull)?;
            self.evict(map, &own);
            return Ok(Some(own));
        }
        if map.by_id.len() + elsewhere.in_all < self.max_sessions {
            return Ok(None);
        }
        let mut heaviest: Vec<(&Client, usize)> =
            map.per_client.iter().map(|(c, n)| (c, *n)).collect();
        heaviest.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        let victim = heaviest
            .into_iter()
            .find_map(|(holder, _)| self.idlest(map, |s| s.client == *holder))
            .ok_or(NoRoom::Full)?;
        self.evict(map, &victim);
        Ok(None)
    }

    /// The id of the session idle the longest among those `mine` picks that serve nothing.
    fn idlest(&self, map: &Sessions, mine: impl Fn(&HttpSession) -> bool) -> Option<String> {
        map.by_id
            .values()
            .filter(|s| mine(s) && !s.busy(self.max_in_flight))
            .min_by_key(|s| s.last_seen_ms.load(Ordering::Relaxed))
            .map(|s| s.id.clone())
    }

    fn evict(&self, map: &mut Sessions, id: &str) {
        if let Some(evicted) = map.remove(id) {
            tracing::debug!(session = %evicted.id, client = ?evicted.client, "session ended to make room");
            close(&evicted);
        }
    }

    /// The session a request names, for `caller`, and — when sessions are shared with
    /// other replicas — its shared record as it was before the request, to tell what the
    /// request changed. The shared store says whether the session lives (another replica may
    /// have ended it) and what it is now (another may have changed it); a local copy read
    /// from it within the recheck interval, and told of no change since over the bus, is
    /// served as it is. `peer` is where the request came from: an anonymous session read
    /// into a copy here is counted against it (see [`adopt`](Self::adopt)).
    pub(crate) async fn find(
        &self,
        id: &str,
        caller: Option<&AuthInfo>,
        peer: Option<SocketAddr>,
    ) -> Result<(Arc<HttpSession>, Option<SessionRecord>), Lookup> {
        let Some(store) = &self.shared else {
            return self
                .get(id, caller)
                .map(|s| (s, None))
                .ok_or(Lookup::Unknown);
        };
        let known = match self.map().by_id.get(id) {
            Some(local) if self.fresh(local) => Ok(Arc::clone(local)),
            Some(local) => Err(local.session.rechecks()),
            None => Err(0),
        };
        let rechecks = match known {
            Ok(local) => {
                if !local.client.admits(caller) {
                    return Err(Lookup::Unknown);
                }
                local.touch(self.epoch);
                let before = shared_record(&local);
                return Ok((local, before));
            }
            // What other replicas said before the read, which the read is newer than.
            Err(rechecks) => rechecks,
        };
        let read_at = self.now_ms();
        let events = self.server.session_events(id);
        let record = match store.get(id, self.store_ttl()).await {
            Ok(Some(record)) => record,
            Ok(None) => {
                self.forget(id);
                return Err(Lookup::Unknown);
            }
            Err(e) => return Err(Lookup::Unreachable(e)),
        };
        if !owner_client(&record).admits(caller) {
            return Err(Lookup::Unknown);
        }
        let session = match self.get(id, caller) {
            Some(local) => {
                apply_record(&local.session, &record);
                local
            }
            None => self.adopt(&record, peer).map_err(Lookup::NoRoom)?,
        };
        // Another replica told of a change while the record was read: the record may be
        // older than the change (which this copy has then taken, or, not held yet, missed),
        // so the copy is not served as current; the next request reads the record again.
        if self.server.session_events(id) == events {
            session.checked(read_at, rechecks);
        }
        Ok((session, Some(record)))
    }

    /// How long a shared record lives after it was last read or written: the idle timeout,
    /// and the recheck interval on top, since requests served from a copy do not renew it.
    fn store_ttl(&self) -> Duration {
        self.idle_timeout + Duration::from_millis(self.recheck_ms)
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Whether a local copy of a shared session may be served as it is: its record was
    /// read within the recheck interval, and no other replica has said since that it ended
    /// or changed it.
    fn fresh(&self, local: &HttpSession) -> bool {
        let (at, rechecks) = *local.checked.lock().unwrap_or_else(|p| p.into_inner());
        self.recheck_ms > 0
            && at > 0
            && (self.now_ms() + 1).saturating_sub(at) < self.recheck_ms
            && rechecks == local.session.rechecks()
    }

    /// Shares a session that was just opened, before its client learns its id, so that any
    /// replica knows it; when it cannot be shared, it is ended.
    pub(crate) async fn share_new(&self, session: &HttpSession) -> Result<(), StoreError> {
        // The record is made only when there is a store to share it with: a server of one
        // replica pays nothing for it.
        let Some(store) = &self.shared else {
            return Ok(());
        };
        let Some(record) = shared_record(session) else {
            return Ok(());
        };
        let written_at = self.now_ms();
        let rechecks = session.session.rechecks();
        let shared = store.put(&record, self.store_ttl()).await;
        match shared {
            Ok(()) => {
                session
                    .session
                    .data()
                    .shared(&record.store, &record.visibility);
                session.checked(written_at, rechecks);
            }
            Err(_) => {
                self.remove(&session.id);
            }
        }
        shared
    }

    /// Writes a shared session's record back when a request changed it (its log level, its
    /// subscriptions), and tells the other replicas.
    ///
    /// What it looks at first is looked at before the future is returned, and the writing
    /// is boxed: most requests change nothing, and a future holding two records and the
    /// store's round trips inline would make every request's future (moved whole, more than
    /// once, on its way to hyper) that much larger.
    pub(crate) fn share_changes<'a>(
        &'a self,
        session: &'a HttpSession,
        before: Option<SessionRecord>,
    ) -> impl Future<Output = ()> + Send + 'a {
        let write = self
            .changes_to_write(session, before)
            .map(|(store, before, after)| {
                Box::pin(self.write_changes(store, session, before, after))
            });
        async move {
            if let Some(write) = write {
                write.await;
            }
        }
    }

    /// The store, the record as it was and as it is, when a request changed a shared
    /// session that has not ended meanwhile.
    fn changes_to_write(
        &self,
        session: &HttpSession,
        before: Option<SessionRecord>,
    ) -> Option<(&Arc<dyn SessionStore>, Option<SessionRecord>, SessionRecord)> {
        let store = self.shared.as_ref()?;
        let after = shared_record(session)?;
        if before.as_ref() == Some(&after) {
            return None;
        }
        // A session ended while the request ran (its DELETE, here or on another replica) is
        // not brought back by writing its record again.
        if !self.map().by_id.contains_key(&session.id) {
            return None;
        }
        Some((store, before, after))
    }

    /// Writes back what a request changed in a shared session (see
    /// [`share_changes`](Self::share_changes)).
    async fn write_changes(
        &self,
        store: &Arc<dyn SessionStore>,
        session: &HttpSession,
        before: Option<SessionRecord>,
        after: SessionRecord,
    ) {
        let stored = match store.get(&session.id, self.store_ttl()).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(%e, session = %session.id, "cannot share a session's state");
                return;
            }
        };
        // Another replica may have changed the session since this copy was read (and its
        // event not arrived yet): only what this request changed is written over it.
        let merged = match &before {
            Some(before) if *before != stored => merge_changes(before, &after, stored),
            _ => after.clone(),
        };
        match store.replace(&merged, self.store_ttl()).await {
            // Ended meanwhile (a DELETE on another replica between the read and the write):
            // the copy goes, and its calls with it.
            Ok(false) => self.forget(&session.id),
            Ok(true) => {
                if merged != after {
                    apply_record(&session.session, &merged);
                }
                session
                    .session
                    .data()
                    .shared(&merged.store, &merged.visibility);
                // The other replicas' copies learn of it before the client does.
                self.server
                    .publish_passed_on(crate::cluster::ClusterEvent::SessionChanged {
                        record: merged,
                    })
                    .await;
            }
            Err(e) => tracing::warn!(%e, session = %session.id, "cannot share a session's state"),
        }
    }

    /// Ends a session for `caller` (a DELETE), here and, when shared, on every replica:
    /// false when there was none it may end.
    pub(crate) async fn end(
        &self,
        id: &str,
        caller: Option<&AuthInfo>,
    ) -> Result<bool, StoreError> {
        let Some(store) = &self.shared else {
            return Ok(self.remove_for(id, caller));
        };
        // Shared: only its owner ends a session, wherever it was opened.
        match store.get(id, self.store_ttl()).await? {
            Some(record) if owner_client(&record).admits(caller) => {}
            _ => return Ok(false),
        }
        self.remove(id);
        self.end_shared(store, id).await?;
        Ok(true)
    }

    /// Ends a shared session in the store and tells the other replicas, whose copies learn
    /// of it before the client does.
    async fn end_shared(&self, store: &Arc<dyn SessionStore>, id: &str) -> Result<(), StoreError> {
        store.remove(id).await?;
        self.server
            .publish_passed_on(crate::cluster::ClusterEvent::SessionEnded { id: id.to_owned() })
            .await;
        Ok(())
    }

    /// The session with this id, when `caller` may use it (see [`Client::admits`]).
    pub(crate) fn get(&self, id: &str, caller: Option<&AuthInfo>) -> Option<Arc<HttpSession>> {
        let session = self.map().by_id.get(id).cloned()?;
        if !session.client.admits(caller) {
            return None;
        }
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

    /// Ends a session if `caller` may use it (a DELETE); false when there was none.
    pub(crate) fn remove_for(&self, id: &str, caller: Option<&AuthInfo>) -> bool {
        let mut map = self.map();
        if !map.by_id.get(id).is_some_and(|s| s.client.admits(caller)) {
            return false;
        }
        match map.remove(id) {
            Some(session) => {
                close(&session);
                true
            }
            None => false,
        }
    }

    /// Ends the sessions idle for longer than the timeout and serving nothing (no request
    /// in flight, no open stream).
    pub(crate) fn expire_idle(&self) -> usize {
        let now = self.epoch.elapsed().as_millis() as u64;
        let limit = self.idle_timeout.as_millis() as u64;
        let mut map = self.map();
        let expired: Vec<String> = map
            .by_id
            .values()
            .filter(|s| {
                now.saturating_sub(s.last_seen_ms.load(Ordering::Relaxed)) > limit
                    && !s.busy(self.max_in_flight)
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
        let mut map = self.map();
        map.per_client.clear();
        for (_, session) in map.by_id.drain() {
            close(&session);
        }
    }
}

fn close(session: &HttpSession) {
    session.session.close();
}

/// 128 random bits from the operating system, as hex: unguessable, as session ids must be.
/// `None` when the operating system's generator fails: no guessable id is ever issued.
pub(crate) fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// One open session of the HTTP+SSE transport of 2024-11-05: one SSE connection.
#[cfg(feature = "legacy-sse")]
#[derive(Clone)]
pub(crate) struct LegacySession {
    pub session: Arc<Session>,
    pub out: Outbound,
    pub client: Client,
    /// The count of requests that client has in flight, over all its sessions.
    pub calls: Option<Arc<ClientCalls>>,
    pub in_flight: Arc<Semaphore>,
}

/// Sessions a client holds outside one table, and all clients hold there: the two
/// transports of one endpoint (Streamable HTTP, and the legacy HTTP+SSE) share their
/// quotas, so that a client cannot hold each quota once per transport.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HeldElsewhere {
    pub(crate) by_client: usize,
    pub(crate) in_all: usize,
}

/// The open sessions of the HTTP+SSE transport.
#[cfg(feature = "legacy-sse")]
#[derive(Default)]
pub(crate) struct LegacySessions {
    sessions: Mutex<HashMap<String, LegacySession>>,
}

#[cfg(feature = "legacy-sse")]
impl LegacySessions {
    pub(crate) fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, LegacySession>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What `client` holds here, and what all clients hold.
    pub(crate) fn held_by(&self, client: &Client) -> HeldElsewhere {
        let map = self.map();
        HeldElsewhere {
            by_client: map.values().filter(|s| s.client == *client).count(),
            in_all: map.len(),
        }
    }

    /// Ends every legacy session (shutdown).
    pub(crate) fn clear(&self) {
        for (_, legacy) in self.map().drain() {
            legacy.session.cancel_all();
            legacy.out.close();
        }
    }
}

/// `stored` with what a request changed from `before` to `after` written over it: the log
/// level, each subscription, each key of what handlers keep, and the visibility, each only
/// where the request changed it.
fn merge_changes(
    before: &SessionRecord,
    after: &SessionRecord,
    mut stored: SessionRecord,
) -> SessionRecord {
    if after.log_level != before.log_level {
        stored.log_level.clone_from(&after.log_level);
    }
    let removed = before
        .subscriptions
        .iter()
        .filter(|u| !after.subscriptions.contains(u));
    let removed: Vec<&String> = removed.collect();
    stored.subscriptions.retain(|u| !removed.contains(&u));
    for added in after
        .subscriptions
        .iter()
        .filter(|u| !before.subscriptions.contains(u))
    {
        if !stored.subscriptions.contains(added) {
            stored.subscriptions.push(added.clone());
        }
    }
    stored.subscriptions.sort();
    for key in before.store.keys().chain(after.store.keys()) {
        match (before.store.get(key), after.store.get(key)) {
            (b, a) if b == a => {}
            (_, Some(value)) => {
                stored.store.insert(key.clone(), value.clone());
            }
            (_, None) => {
                stored.store.remove(key);
            }
        }
    }
    if after.visibility != before.visibility {
        stored.visibility.clone_from(&after.visibility);
    }
    stored
}

/// The client a shared record binds its session to.
fn owner_client(record: &SessionRecord) -> Client {
    match &record.owner {
        Some(subject) => Client::Subject(subject.clone()),
        None => Client::Unknown,
    }
}

/// A session's shared record, with the subject it is bound to.
fn shared_record(session: &HttpSession) -> Option<SessionRecord> {
    let mut record = crate::server::cluster::record_of(&session.id, &session.session)?;
    record.owner = session.client.owner().map(str::to_owned);
    Some(record)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use serde_json::Value;

    use crate::cluster::{Bus, ClusterEvent, InMemorySessionStore};
    use crate::protocol::ListKind;

    type Deliver = Arc<dyn Fn(ClusterEvent) + Send + Sync>;

    /// A bus between servers of one process: each event reaches every other server at once,
    /// outside the lock, since a server may publish while it handles one.
    #[derive(Default)]
    struct Loopback {
        listeners: Mutex<Vec<(usize, Deliver)>>,
        next: AtomicU64,
    }

    impl Loopback {
        /// Delivers an event to replica `to` as its bus would.
        fn deliver_to(&self, to: usize, event: ClusterEvent) {
            let deliver = {
                let listeners = self.listeners.lock().unwrap();
                let (_, deliver) = listeners
                    .iter()
                    .find(|(end, _)| *end == to)
                    .expect("a replica");
                Arc::clone(deliver)
            };
            deliver(event);
        }
    }

    /// One server's end of a [`Loopback`].
    struct End(Arc<Loopback>, usize);

    impl Bus for End {
        fn publish(&self, event: ClusterEvent) {
            let others: Vec<Deliver> = self
                .0
                .listeners
                .lock()
                .unwrap()
                .iter()
                .filter(|(end, _)| *end != self.1)
                .map(|(_, deliver)| Arc::clone(deliver))
                .collect();
            for deliver in others {
                deliver(event.clone());
            }
        }

        fn subscribe(&self, deliver: Box<dyn Fn(ClusterEvent) + Send + Sync>) {
            self.0
                .listeners
                .lock()
                .unwrap()
                .push((self.1, Arc::from(deliver)));
        }
    }

    /// One replica: its own server on the bus, its own table, the shared store.
    fn replica<S: SessionStore>(
        bus: &Arc<Loopback>,
        store: &Arc<S>,
        options: HttpOptions,
    ) -> SessionTable {
        let end = End(
            Arc::clone(bus),
            bus.next.fetch_add(1, Ordering::Relaxed) as usize,
        );
        let server = Server::builder("replica", "1.0.0")
            .bus(Arc::new(end))
            .build()
            .expect("a server");
        SessionTable::new(&options.session_store(Arc::clone(store) as _), server)
    }

    async fn opened(table: &SessionTable) -> String {
        let http = table
            .open(Client::Unknown, HeldElsewhere::default())
            .await
            .expect("room");
        http.session.initialize(Negotiated {
            version: ProtocolVersion::V2025_11_25,
            client_info: Default::default(),
            client_capabilities: Default::default(),
        });
        table.share_new(&http).await.expect("shared");
        http.id.clone()
    }

    fn served(found: Result<(Arc<HttpSession>, Option<SessionRecord>), Lookup>) -> bool {
        match found {
            Ok(_) => true,
            Err(Lookup::Unknown) => false,
            Err(_) => panic!("neither served nor unknown"),
        }
    }

    #[tokio::test]
    async fn a_copy_is_served_until_the_bus_says_its_session_ended_or_it_may_have_missed_it() {
        let (bus, store) = (
            Arc::<Loopback>::default(),
            Arc::new(InMemorySessionStore::default()),
        );
        let a = replica(&bus, &store, HttpOptions::default());
        let b = replica(&bus, &store, HttpOptions::default());
        let id = opened(&a).await;
        assert!(served(b.find(&id, None, None).await), "b adopts it");
        // Ended in the store behind every replica's back: b's copy, read a moment ago, is
        // served as it is (nothing told b).
        store.remove(&id).await.unwrap();
        assert!(
            served(b.find(&id, None, None).await),
            "b's fresh copy is served"
        );
        // b's bus is back after a gap and says it may have missed events: b reads the
        // record again.
        bus.deliver_to(1, ClusterEvent::Resubscribed);
        assert!(
            !served(b.find(&id, None, None).await),
            "b read the record again"
        );

        // Ended through a replica, which tells the others before it answers.
        let id = opened(&a).await;
        assert!(served(b.find(&id, None, None).await));
        assert!(a.end(&id, None).await.unwrap());
        assert!(!served(b.find(&id, None, None).await), "b heard of the end");
        assert!(!served(a.find(&id, None, None).await));
    }

    #[tokio::test]
    async fn a_change_made_through_one_replica_reaches_the_copies_of_the_others() {
        let (bus, store) = (Arc::default(), Arc::new(InMemorySessionStore::default()));
        let a = replica(&bus, &store, HttpOptions::default());
        let b = replica(&bus, &store, HttpOptions::default());
        let id = opened(&a).await;
        let (copy, _) = b.find(&id, None, None).await.ok().expect("b adopts it");
        let (original, before) = a.find(&id, None, None).await.ok().expect("a serves it");
        original.session.subscribe("test://watched");
        a.share_changes(&original, before).await;
        assert_eq!(copy.session.subscriptions(), ["test://watched"]);
    }

    #[tokio::test]
    async fn a_copy_made_of_a_session_with_its_own_visibility_tells_its_client_nothing() {
        let (bus, store) = (Arc::default(), Arc::new(InMemorySessionStore::default()));
        let a = replica(&bus, &store, HttpOptions::default());
        let b = replica(&bus, &store, HttpOptions::default());
        let id = opened(&a).await;
        let (original, before) = a.find(&id, None, None).await.ok().expect("a serves it");
        assert!(
            original
                .session
                .data()
                .set_visible(ListKind::Tools, "hidden", Some(false))
        );
        a.share_changes(&original, before).await;
        let (copy, _) = b.find(&id, None, None).await.ok().expect("b adopts it");
        assert!(
            !copy.session.data().visibility().is_empty(),
            "the copy sees what the session sees"
        );
        // Had the copy announced the visibility it was made with, the client would be told
        // of tools already and a change now would be no news.
        let tools = ListKind::Tools.bit();
        assert_eq!(copy.session.lists_changed(tools), tools);
    }

    #[tokio::test]
    async fn a_copy_not_read_for_the_recheck_interval_is_read_again() {
        let (bus, store) = (Arc::default(), Arc::new(InMemorySessionStore::default()));
        let options = HttpOptions::default().shared_session_recheck(Duration::from_millis(50));
        let a = replica(&bus, &store, options.clone());
        let b = replica(&bus, &store, options);
        let id = opened(&a).await;
        assert!(served(b.find(&id, None, None).await));
        // Ended with the bus down (the event lost): b learns within the interval.
        store.remove(&id).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while served(b.find(&id, None, None).await) {
            assert!(Instant::now() < deadline, "b never read the record again");
            tokio::task::yield_now().await;
        }
        // With no interval, every request reads the record.
        let strict = HttpOptions::default().shared_session_recheck(Duration::ZERO);
        let c = replica(&bus, &store, strict);
        let id = opened(&a).await;
        assert!(served(c.find(&id, None, None).await));
        store.remove(&id).await.unwrap();
        assert!(!served(c.find(&id, None, None).await));
    }

    /// A store that can be made unreachable.
    #[derive(Default)]
    struct Flaky {
        store: InMemorySessionStore,
        down: AtomicBool,
    }

    impl SessionStore for Flaky {
        fn put<'a>(
            &'a self,
            record: &'a SessionRecord,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, ()> {
            match self.down.load(Ordering::Relaxed) {
                true => Box::pin(async { Err(StoreError("down".into())) }),
                false => self.store.put(record, ttl),
            }
        }

        fn get<'a>(
            &'a self,
            id: &'a str,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, Option<SessionRecord>> {
            match self.down.load(Ordering::Relaxed) {
                true => Box::pin(async { Err(StoreError("down".into())) }),
                false => self.store.get(id, ttl),
            }
        }

        fn replace<'a>(
            &'a self,
            record: &'a SessionRecord,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, bool> {
            match self.down.load(Ordering::Relaxed) {
                true => Box::pin(async { Err(StoreError("down".into())) }),
                false => self.store.replace(record, ttl),
            }
        }

        fn remove<'a>(&'a self, id: &'a str) -> crate::cluster::StoreFuture<'a, bool> {
            self.store.remove(id)
        }
    }

    #[tokio::test]
    async fn a_copy_marked_stale_stays_stale_until_the_record_is_read() {
        let (bus, store) = (Arc::default(), Arc::new(Flaky::default()));
        let a = replica(&bus, &store, HttpOptions::default());
        let b = replica(&bus, &store, HttpOptions::default());
        let id = opened(&a).await;
        let (copy, _) = b.find(&id, None, None).await.ok().expect("b adopts it");
        // Another replica says the session ended, and the store cannot be read: the copy
        // is not served, however many times it is asked for.
        copy.session.mark_for_recheck();
        store.down.store(true, Ordering::Relaxed);
        for _ in 0..2 {
            assert!(matches!(
                b.find(&id, None, None).await,
                Err(Lookup::Unreachable(_))
            ));
        }
        store.down.store(false, Ordering::Relaxed);
        store.remove(&id).await.unwrap();
        assert!(!served(b.find(&id, None, None).await));
    }

    /// A store whose next read, once held, takes the record as it is when the read starts
    /// and gives it only when released: a read that Redis answered before another
    /// replica's write, and that reached this replica after that replica's event.
    #[derive(Default)]
    struct Held {
        store: InMemorySessionStore,
        next_read: Mutex<
            Option<(
                tokio::sync::oneshot::Sender<()>,
                tokio::sync::oneshot::Receiver<()>,
            )>,
        >,
    }

    impl SessionStore for Held {
        fn put<'a>(
            &'a self,
            record: &'a SessionRecord,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, ()> {
            self.store.put(record, ttl)
        }

        fn replace<'a>(
            &'a self,
            record: &'a SessionRecord,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, bool> {
            self.store.replace(record, ttl)
        }

        fn get<'a>(
            &'a self,
            id: &'a str,
            ttl: Duration,
        ) -> crate::cluster::StoreFuture<'a, Option<SessionRecord>> {
            let held = self.next_read.lock().unwrap().take();
            Box::pin(async move {
                let read = self.store.get(id, ttl).await;
                if let Some((started, released)) = held {
                    let _ = started.send(());
                    let _ = released.await;
                }
                read
            })
        }

        fn remove<'a>(&'a self, id: &'a str) -> crate::cluster::StoreFuture<'a, bool> {
            self.store.remove(id)
        }
    }

    #[tokio::test]
    async fn a_record_read_while_another_replica_told_of_a_change_is_read_again() {
        // b held no copy to apply the change to, or applied it to its copy and then the
        // record read before it over it.
        for holds_a_copy in [false, true] {
            let (bus, store) = (Arc::default(), Arc::new(Held::default()));
            // Copies not read again for a minute: only the bus, or the check of its events
            // against the read, can keep b's copy current.
            let options = HttpOptions::default().shared_session_recheck(Duration::from_secs(60));
            let a = replica(&bus, &store, options.clone());
            let b = replica(&bus, &store, options);
            let id = opened(&a).await;
            let (original, before) = a.find(&id, None, None).await.ok().expect("a serves it");
            if holds_a_copy {
                let (copy, _) = b.find(&id, None, None).await.ok().expect("b adopts it");
                // Due to be read again (as after another replica said it changed).
                copy.session.mark_for_recheck();
            }

            // b's read of the session is answered with the record as it was before a's
            // change, after a told of the change.
            let (started, read_started) = tokio::sync::oneshot::channel();
            let (release, released) = tokio::sync::oneshot::channel();
            *store.next_read.lock().unwrap() = Some((started, released));
            // Bounded: a `find` that never read the store would leave the read held forever.
            let raced = async {
                tokio::join!(b.find(&id, None, None), async {
                    read_started.await.expect("b reads the record");
                    original.session.subscribe("test://watched");
                    a.share_changes(&original, before).await;
                    let _ = release.send(());
                })
            };
            let (found, ()) = tokio::time::timeout(Duration::from_secs(10), raced)
                .await
                .expect("b read the record once");
            let (copy, _) = found.ok().expect("b serves it");
            assert!(
                copy.session.subscriptions().is_empty(),
                "b took the record read before the change (holding a copy: {holds_a_copy})"
            );
            // So b's next request reads the record again, rather than serving that copy
            // for the whole recheck interval.
            let (copy, _) = b.find(&id, None, None).await.ok().expect("b serves it");
            assert_eq!(
                copy.session.subscriptions(),
                ["test://watched"],
                "holding a copy: {holds_a_copy}"
            );
        }
    }

    #[tokio::test]
    async fn a_change_written_back_as_another_replica_ends_the_session_does_not_revive_it() {
        let (bus, store) = (Arc::default(), Arc::new(Held::default()));
        let a = replica(&bus, &store, HttpOptions::default());
        let b = replica(&bus, &store, HttpOptions::default());
        let id = opened(&a).await;
        let (copy, before) = a.find(&id, None, None).await.ok().expect("a serves it");
        // a's request changed the session; the read before its write is answered only after
        // b ended the session (a DELETE there).
        copy.session.subscribe("test://watched");
        let (started, read_started) = tokio::sync::oneshot::channel();
        let (release, released) = tokio::sync::oneshot::channel();
        *store.next_read.lock().unwrap() = Some((started, released));
        let raced = async {
            tokio::join!(a.share_changes(&copy, before), async {
                read_started.await.expect("a reads the record");
                assert!(b.end(&id, None).await.unwrap(), "b ends it");
                let _ = release.send(());
            })
        };
        tokio::time::timeout(Duration::from_secs(10), raced)
            .await
            .expect("a wrote its change back");
        let ttl = Duration::from_secs(60);
        assert_eq!(store.store.get(&id, ttl).await.unwrap(), None, "revived");
        assert!(!served(a.find(&id, None, None).await));
        assert!(!served(b.find(&id, None, None).await));
    }

    #[tokio::test]
    async fn a_record_read_while_the_bus_subscribed_again_is_read_again() {
        let (bus, store) = (Arc::<Loopback>::default(), Arc::new(Held::default()));
        let options = HttpOptions::default().shared_session_recheck(Duration::from_secs(60));
        let a = replica(&bus, &store, options.clone());
        let b = replica(&bus, &store, options);
        let id = opened(&a).await;
        // b's first read of the session is answered with the record as it was before a
        // change b was never told of (its bus was down), after b's bus came back.
        let (started, read_started) = tokio::sync::oneshot::channel();
        let (release, released) = tokio::sync::oneshot::channel();
        *store.next_read.lock().unwrap() = Some((started, released));
        let raced = async {
            tokio::join!(b.find(&id, None, None), async {
                read_started.await.expect("b reads the record");
                let ttl = Duration::from_secs(60);
                let mut record = store.store.get(&id, ttl).await.unwrap().unwrap();
                record.subscriptions.push("test://watched".into());
                store.store.put(&record, ttl).await.unwrap();
                bus.deliver_to(1, ClusterEvent::Resubscribed);
                let _ = release.send(());
            })
        };
        let (found, ()) = tokio::time::timeout(Duration::from_secs(10), raced)
            .await
            .expect("b read the record once");
        let (copy, _) = found.ok().expect("b adopts it");
        assert!(copy.session.subscriptions().is_empty());
        // The read began before the bus came back: b reads the record again.
        let (copy, _) = b.find(&id, None, None).await.ok().expect("b serves it");
        assert_eq!(copy.session.subscriptions(), ["test://watched"]);
    }

    #[test]
    fn only_what_a_request_changed_is_written_over_the_stored_record() {
        let before = SessionRecord {
            id: "s".into(),
            log_level: Some("info".into()),
            subscriptions: vec!["a".into(), "b".into()],
            store: serde_json::from_value(serde_json::json!({"x": 1, "y": 1})).unwrap(),
            ..SessionRecord::default()
        };
        // The request unsubscribed from a, subscribed to c, and set y.
        let after = SessionRecord {
            subscriptions: vec!["b".into(), "c".into()],
            store: serde_json::from_value(serde_json::json!({"x": 1, "y": 2})).unwrap(),
            ..before.clone()
        };
        // Meanwhile another replica set the level, subscribed to d, and set x and z.
        let stored = SessionRecord {
            log_level: Some("error".into()),
            subscriptions: vec!["a".into(), "b".into(), "d".into()],
            store: serde_json::from_value(serde_json::json!({"x": 5, "y": 1, "z": 1})).unwrap(),
            ..before.clone()
        };
        let merged = merge_changes(&before, &after, stored);
        assert_eq!(merged.log_level.as_deref(), Some("error"));
        assert_eq!(merged.subscriptions, ["b", "c", "d"]);
        assert_eq!(
            Value::Object(merged.store),
            serde_json::json!({"x": 5, "y": 2, "z": 1})
        );
    }

    #[tokio::test]
    async fn a_clients_sessions_share_one_count_of_calls_that_outlives_them() {
        let options = HttpOptions::default().max_in_flight_per_client(2);
        let server = Server::builder("one", "1.0.0").build().expect("a server");
        let table = SessionTable::new(&options, server);
        let ada = Client::Subject("ada".to_owned());
        let first = table
            .open(ada.clone(), HeldElsewhere::default())
            .await
            .expect("room");
        let second = table
            .open(ada.clone(), HeldElsewhere::default())
            .await
            .expect("room");
        let other = table
            .open(Client::Subject("bob".to_owned()), HeldElsewhere::default())
            .await
            .expect("room");
        let one = table.begin_call(first.calls.as_ref()).expect("a place");
        let two = table.begin_call(second.calls.as_ref()).expect("a place");
        assert!(
            table.begin_call(first.calls.as_ref()).is_err(),
            "two over both"
        );
        assert!(
            table.begin_call(other.calls.as_ref()).is_ok(),
            "another client's own"
        );
        // A call goes on when its session ends, and keeps its place until it is done.
        assert!(table.remove(&first.id));
        drop(first);
        assert!(table.begin_call(second.calls.as_ref()).is_err());
        drop(one);
        let three = table
            .begin_call(second.calls.as_ref())
            .expect("a place again");
        drop((two, three));
        // A client the server cannot tell apart from others is not counted.
        assert!(table.calls_of(&Client::Unknown).is_none());
        assert!(table.begin_call(None).expect("not counted").is_none());
        // Counts nobody holds any more are forgotten: many clients come and go, and the
        // table of counts stays small.
        drop((second, other));
        for n in 0..1000 {
            drop(table.calls_of(&Client::Subject(format!("passer-{n}"))));
        }
        let held = table.calls.lock().unwrap().by_client.len();
        assert!(held <= 64, "{held} counts kept for clients that are gone");
    }

    #[tokio::test]
    async fn a_session_makes_its_queue_when_it_first_sends_something() {
        let events = Arc::new(super::super::events::InMemoryEventStore::default());
        let options = HttpOptions::default().event_store(Arc::clone(&events) as _);
        let server = Server::builder("one", "1.0.0").build().expect("a server");
        let table = SessionTable::new(&options, server);
        let quiet = table
            .open(Client::Unknown, HeldElsewhere::default())
            .await
            .expect("room");
        let talking = table
            .open(Client::Unknown, HeldElsewhere::default())
            .await
            .expect("room");
        // Nothing sent: no stream, no queue.
        assert_eq!(events.stream_count(), 0);
        talking
            .session
            .notifications()
            .notify(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}".to_vec());
        let deadline = Instant::now() + Duration::from_secs(10);
        while events.stream_count() == 0 {
            assert!(Instant::now() < deadline, "the queue's stream never opened");
            tokio::task::yield_now().await;
        }
        // Ending either leaves nothing behind.
        assert!(table.remove(&quiet.id));
        assert!(table.remove(&talking.id));
        while events.stream_count() > 0 {
            assert!(
                Instant::now() < deadline,
                "an ended session's stream is still kept"
            );
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_session_in_use_through_its_copy_stays_alive_in_the_store() {
        let (bus, store) = (Arc::default(), Arc::new(InMemorySessionStore::default()));
        // The copy is read again at least every quarter of the idle timeout, which renews
        // the record.
        let options = HttpOptions::default().session_idle_timeout(Duration::from_millis(400));
        let a = replica(&bus, &store, options.clone());
        let b = replica(&bus, &store, options);
        let id = opened(&a).await;
        let until = Instant::now() + Duration::from_millis(1200);
        while Instant::now() < until {
            assert!(
                served(b.find(&id, None, None).await),
                "expired while in use"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            store
                .get(&id, Duration::from_secs(60))
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn a_session_served_from_its_copy_lives_its_whole_idle_timeout_after_its_last_request() {
        let (bus, store) = (Arc::default(), Arc::new(InMemorySessionStore::default()));
        // Read again every 500 ms (a quarter of the idle timeout).
        let options = HttpOptions::default().session_idle_timeout(Duration::from_secs(2));
        let a = replica(&bus, &store, options.clone());
        let b = replica(&bus, &store, options);
        let id = opened(&a).await;
        let read = Instant::now();
        assert!(served(b.find(&id, None, None).await));
        // The last request, served from the copy without renewing the record.
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(served(b.find(&id, None, None).await));
        let last = Instant::now();
        // Idle for less than the timeout after that request, but for more than the timeout
        // after the record was last read: the session lives.
        let wake = read + Duration::from_millis(2200);
        tokio::time::sleep(wake.saturating_duration_since(Instant::now())).await;
        assert!(
            last.elapsed() < Duration::from_secs(2),
            "the machine was too slow to tell"
        );
        assert!(
            served(b.find(&id, None, None).await),
            "expired before its idle timeout"
        );
    }
}
