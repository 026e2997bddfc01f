//! Session state: what the server knows of one client connection (its negotiated revision,
//! requests in flight, subscriptions, roots), the queue of frames going out to it, its
//! pending requests to the client, and the channel one request answers on. Nothing here
//! knows the server: the server and the transports build on it.

mod channel;
mod client_requests;
mod data;
mod frames;
pub(crate) mod request_state;
mod round_trip;

#[cfg(feature = "http")]
pub use channel::HttpRequest;
#[cfg(feature = "http")]
pub(crate) use channel::StreamControl;
pub(crate) use channel::{CallTask, RequestChannel, TaskSlot};
pub use client_requests::ClientError;
pub(crate) use client_requests::{ClientAnswer, ClientRequests};
pub(crate) use data::Kept;
pub use data::SessionVisibility;
pub(crate) use frames::{Outbound, OutboundQueue};
pub(crate) use round_trip::{LazyBinding, RoundTrip};

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::Root;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, RequestId};

/// The most resources one session may subscribe to, and the most resources or task ids one
/// `subscriptions/listen` filter may follow.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The most bytes the URIs of one session's subscriptions may hold together, and the URIs
/// and task ids of one `subscriptions/listen` filter: a session or a listener holds them for
/// as long as it lives, and 1,024 URIs of up to 64 KiB each would be 64 MiB.
pub const MAX_SUBSCRIPTION_BYTES: usize = 256 * 1024;

/// The stored log level meaning "send none".
const LOGS_OFF: u8 = u8::MAX;

/// How far the held-back bits of [`Session::lists_changed`] are shifted from the told ones.
const HELD: u32 = 3;

/// Requests in flight by id. Ids are hashed with FxHash's multiply-and-rotate rather than
/// SipHash: they come from the client that owns the session, which can only slow its own
/// session down by choosing colliding ones, and every call inserts and removes one.
type IdMap<V> = HashMap<RequestId, V, BuildHasherDefault<IdHasher>>;

#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Where a session's notifications that belong to no request go.
enum Notifications {
    /// A queue made with the session (a connection's session, a request's stand-in).
    Ready(Outbound),
    /// A queue made when the session first sends something (an HTTP session: most send
    /// nothing for their whole life, and a queue and the task that drains it cost more
    /// memory than the rest of the session).
    #[cfg(feature = "http")]
    OnFirstUse {
        queue: OnceLock<Outbound>,
        open: Arc<dyn OpenQueue>,
    },
}

/// Makes the queue of a session whose queue is made on first use.
#[cfg(feature = "http")]
pub(crate) trait OpenQueue: Send + Sync {
    /// The queue of the session with this key, with whatever drains it started.
    fn open(&self, key: &str) -> Outbound;

    /// The session with this key ended before it had a queue.
    fn ended_unopened(&self, key: &str);
}

/// What `initialize` settled.
#[derive(Debug)]
pub(crate) struct Negotiated {
    pub version: ProtocolVersion,
    pub client_info: Implementation,
    pub client_capabilities: Map<String, Value>,
}

/// One client connection in the handshake era: negotiated version, log level, the requests
/// in flight (for cancellation), resource subscriptions, and where notifications that belong
/// to no request (list changes, resource updates) are sent.
pub(crate) struct Session {
    negotiated: OnceLock<Negotiated>,
    /// The server's schema-profile slot for this client, chosen once from `clientInfo.name`
    /// (kept beside `Negotiated`, which the transports build, rather than inside it).
    schema_slot: OnceLock<usize>,
    log_level: AtomicU8,
    /// Shared with the connection's session by the sessions of stateless requests, so
    /// `notifications/cancelled` reaches them too.
    in_flight: Arc<Mutex<IdMap<CancellationToken>>>,
    subscriptions: Mutex<HashSet<String>>,
    notifications: Notifications,
    client_requests: ClientRequests,
    /// The client's roots, as last listed (cleared when the client says they changed), and
    /// how many times the client has said so (an answer asked for before a change is not
    /// kept).
    roots: Mutex<(Option<Vec<Root>>, u64)>,
    /// The key replicas share the session under (its `Mcp-Session-Id`), when they do.
    key: OnceLock<String>,
    /// What the client was told of its lists, in one word so that a change and a fetch
    /// never interleave: the low bits ([`ListKind::bit`]) are the lists whose `list_changed`
    /// the client was sent and has not fetched since — another change adds nothing to what
    /// it knows, so it is not queued again, and a session that never reads holds one
    /// notification per list, not thousands; the same bits shifted by [`HELD`] are the
    /// lists of which a change was kept back since, for that reason.
    lists_told: AtomicU8,
    /// This process announces the session's changes (it opened it), rather than holding a
    /// copy of a session another replica opened.
    announced_here: AtomicBool,
    /// Counts what other replicas said ended or changed the session: a copy read before the
    /// count last moved is read again before it serves another request.
    recheck: std::sync::atomic::AtomicU64,
    /// A stand-in for a request that has no session (the stateless era, a stateless HTTP
    /// endpoint): it has no store and no visibility of its own.
    sessionless: bool,
    /// Made for one stateless-era request, whose messages it sends: the request is served
    /// in it, not in a session scoped from it.
    one_request: bool,
    /// What handlers keep in the session, and its visibility of the catalogue.
    data: Mutex<Kept>,
    /// The server's view of the catalogue for this session's visibility, kept until either
    /// changes (the server's own type, which this layer does not know).
    view: Mutex<Option<CachedView>>,
    /// A number no other session of this process has (stdio and in-memory connections have
    /// no id of their own).
    serial: u64,
}

/// A view of the catalogue built for one session: of which catalogue (its address), for
/// which visibility (its version).
pub(crate) struct CachedView {
    pub base: Arc<dyn std::any::Any + Send + Sync>,
    pub version: u64,
    pub view: Arc<dyn std::any::Any + Send + Sync>,
}

impl Session {
    pub(crate) fn new(notifications: Outbound) -> Session {
        Session::with(Notifications::Ready(notifications))
    }

    /// A session known by `key` whose queue `open` makes when it first sends something.
    #[cfg(feature = "http")]
    pub(crate) fn keyed_with_queue_on_first_use(key: &str, open: Arc<dyn OpenQueue>) -> Session {
        let session = Session::with(Notifications::OnFirstUse {
            queue: OnceLock::new(),
            open,
        });
        session.set_key(key);
        session
    }

    fn with(notifications: Notifications) -> Session {
        Session::with_in_flight(notifications, Arc::new(Mutex::new(IdMap::default())))
    }

    fn with_in_flight(
        notifications: Notifications,
        in_flight: Arc<Mutex<IdMap<CancellationToken>>>,
    ) -> Session {
        Session {
            negotiated: OnceLock::new(),
            schema_slot: OnceLock::new(),
            log_level: AtomicU8::new(LogLevel::Info as u8),
            in_flight,
            subscriptions: Mutex::new(HashSet::new()),
            notifications,
            client_requests: ClientRequests::new(),
            roots: Mutex::new((None, 0)),
            key: OnceLock::new(),
            lists_told: AtomicU8::new(0),
            announced_here: AtomicBool::new(false),
            recheck: std::sync::atomic::AtomicU64::new(0),
            sessionless: false,
            one_request: false,
            data: Mutex::new(Kept::default()),
            view: Mutex::new(None),
            serial: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
        }
    }

    /// A number no other session of this process has.
    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }

    /// A stand-in for a request that has no session.
    #[cfg(feature = "http")]
    pub(crate) fn sessionless(notifications: Outbound) -> Session {
        Session {
            sessionless: true,
            ..Session::new(notifications)
        }
    }

    /// The session of one stateless-era request, sending its messages to `out`: the
    /// request is served in it as it is (see [`is_one_request`](Self::is_one_request)).
    #[cfg(feature = "http")]
    pub(crate) fn for_one_request(out: Outbound) -> Session {
        Session {
            sessionless: true,
            one_request: true,
            ..Session::new(out)
        }
    }

    /// Whether this session was made for one stateless request and not used yet: the
    /// request needs no session scoped from it.
    pub(crate) fn is_one_request(&self) -> bool {
        self.one_request && self.negotiated.get().is_none()
    }

    /// Whether this is a real session (not a request's stand-in).
    pub(crate) fn is_session(&self) -> bool {
        !self.sessionless
    }

    /// What handlers keep in the session, and its visibility.
    pub(crate) fn data(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the session sees the catalogue otherwise than the server offers it.
    pub(crate) fn has_own_visibility(&self) -> bool {
        !self.sessionless && !self.data().visibility().is_empty()
    }

    /// The view of the catalogue cached for this session.
    pub(crate) fn view(&self) -> std::sync::MutexGuard<'_, Option<CachedView>> {
        self.view.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that the lists of `kinds` changed; returns the kinds the client has not
    /// been told of yet, which are the ones to notify.
    pub(crate) fn lists_changed(&self, kinds: u8) -> u8 {
        let before = self
            .lists_told
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |was| {
                Some(was | kinds | ((kinds & was) << HELD))
            })
            .unwrap_or_else(|was| was);
        kinds & !before
    }

    /// The client fetched (a page of) these lists, or can no longer get the notifications
    /// queued for them: the next change is news again. Returns the kinds of which a change
    /// was held back since the client was told.
    pub(crate) fn lists_fetched(&self, kinds: u8) -> u8 {
        let before = self
            .lists_told
            .fetch_and(!(kinds | (kinds << HELD)), Ordering::AcqRel);
        (before >> HELD) & kinds
    }

    /// Whatever the client was told may not have reached it (the replicas' bus had a gap):
    /// the next change of every list is news again.
    pub(crate) fn forget_lists_told(&self) {
        self.lists_told.store(0, Ordering::Release);
    }

    /// Marks the session as one this process announces the changes of.
    pub(crate) fn announce_here(&self) {
        self.announced_here.store(true, Ordering::Release);
    }

    /// Whether this process announces the session's changes, rather than holding a copy of
    /// a session another replica opened and announces.
    pub(crate) fn announced_here(&self) -> bool {
        self.announced_here.load(Ordering::Acquire)
    }

    /// Has the shared record read again before this copy serves another request.
    pub(crate) fn mark_for_recheck(&self) {
        self.recheck.fetch_add(1, Ordering::AcqRel);
    }

    /// How many times the session was marked for a recheck: a copy whose record was read
    /// when the count was lower is stale.
    #[cfg(feature = "http")]
    pub(crate) fn rechecks(&self) -> u64 {
        self.recheck.load(Ordering::Acquire)
    }

    /// The key replicas share the session under, if they do.
    pub(crate) fn key(&self) -> Option<&str> {
        self.key.get().map(String::as_str)
    }

    #[cfg(feature = "http")]
    pub(crate) fn set_key(&self, key: &str) {
        let _ = self.key.set(key.to_owned());
    }

    /// The resources the client subscribed to.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        let mut uris: Vec<String> = self
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        uris.sort();
        uris
    }

    /// Replaces the subscriptions (with another replica's view of them).
    pub(crate) fn replace_subscriptions(&self, uris: impl IntoIterator<Item = String>) {
        *self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()) = uris.into_iter().collect();
    }

    /// The server's requests to this client awaiting answers.
    pub(crate) fn client_requests(&self) -> &ClientRequests {
        &self.client_requests
    }

    /// The roots kept, or else the count of changes to give [`cache_roots`](Self::cache_roots)
    /// with the answer of the `roots/list` asked now.
    pub(crate) fn cached_roots(&self) -> Result<Vec<Root>, u64> {
        let roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        roots.0.clone().ok_or(roots.1)
    }

    /// Keeps the roots a `roots/list` answered, unless the client said they changed since
    /// it was asked (`changes` is what [`cached_roots`](Self::cached_roots) gave then): over
    /// HTTP the change and the answer arrive on separate requests, and the older answer
    /// (a wider set, perhaps) must not outlive the change.
    pub(crate) fn cache_roots(&self, roots: Vec<Root>, changes: u64) {
        let mut kept = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        if kept.1 == changes {
            kept.0 = Some(roots);
        }
    }

    pub(crate) fn forget_roots(&self) {
        let mut kept = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        *kept = (None, kept.1 + 1);
    }

    /// Whether the client declared a capability, by its path (`["elicitation", "url"]`).
    pub(crate) fn client_supports(&self, path: &[&str]) -> bool {
        let Some(negotiated) = self.negotiated() else {
            return false;
        };
        let Some((first, rest)) = path.split_first() else {
            return true;
        };
        let mut node = negotiated.client_capabilities.get(*first);
        for key in rest {
            node = node.and_then(|n| n.get(*key));
        }
        node.is_some_and(|n| !n.is_null())
    }

    /// A session for one stateless request on this connection: its own negotiated state,
    /// this connection's requests in flight.
    pub(crate) fn request_scoped(&self, notifications: Outbound) -> Session {
        Session {
            sessionless: true,
            ..Session::with_in_flight(
                Notifications::Ready(notifications),
                Arc::clone(&self.in_flight),
            )
        }
    }

    /// Where notifications that belong to no request go (made now, if it is made on first
    /// use).
    pub(crate) fn notifications(&self) -> &Outbound {
        match &self.notifications {
            Notifications::Ready(out) => out,
            #[cfg(feature = "http")]
            Notifications::OnFirstUse { queue, open } => {
                queue.get_or_init(|| open.open(self.key().unwrap_or_default()))
            }
        }
    }

    /// No more notifications will go out: the queue's reader is told, and a queue not made
    /// yet never will be (what is sent later is dropped).
    #[cfg(feature = "http")]
    pub(crate) fn close_notifications(&self) {
        match &self.notifications {
            Notifications::Ready(out) => out.close(),
            Notifications::OnFirstUse { queue, open } => {
                let mut unopened = false;
                let out = queue.get_or_init(|| {
                    unopened = true;
                    Outbound::closed()
                });
                if unopened {
                    open.ended_unopened(self.key().unwrap_or_default());
                } else {
                    out.close();
                }
            }
        }
    }

    /// Subscribes to a resource; false when the session holds [`MAX_SUBSCRIPTIONS`]
    /// already, or its URIs would come to more than [`MAX_SUBSCRIPTION_BYTES`] (a session
    /// lives as long as it is used).
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        if subscriptions.contains(uri) {
            return true;
        }
        let held: usize = subscriptions.iter().map(String::len).sum();
        if subscriptions.len() >= MAX_SUBSCRIPTIONS || held + uri.len() > MAX_SUBSCRIPTION_BYTES {
            return false;
        }
        subscriptions.insert(uri.to_owned());
        true
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uri);
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(uri)
    }

    pub(crate) fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.get()
    }

    /// The schema-profile slot of this session's client, chosen by `choose` from its
    /// `clientInfo.name` the first time it is asked for; `None` before `initialize`.
    pub(crate) fn schema_slot(&self, choose: impl FnOnce(&str) -> usize) -> Option<usize> {
        let negotiated = self.negotiated()?;
        Some(
            *self
                .schema_slot
                .get_or_init(|| choose(&negotiated.client_info.name)),
        )
    }

    /// Records the outcome of `initialize`; false when the session was initialised already.
    pub(crate) fn initialize(&self, negotiated: Negotiated) -> bool {
        self.negotiated.set(negotiated).is_ok()
    }

    /// The least severe level sent to the client; `None` when logs are off.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        match self.log_level.load(Ordering::Relaxed) {
            LOGS_OFF => None,
            level => Some(LogLevel::from_u8(level)),
        }
    }

    /// Sends no log message at all (a stateless request that asked for none).
    pub(crate) fn silence_logs(&self) {
        self.log_level.store(LOGS_OFF, Ordering::Relaxed);
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level as u8, Ordering::Relaxed);
    }

    /// Registers a request as in flight; `None` when a request with that id is already running.
    pub(crate) fn begin(&self, id: &RequestId) -> Option<CancellationToken> {
        let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        match map.entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => None,
            std::collections::hash_map::Entry::Vacant(slot) => {
                Some(slot.insert(CancellationToken::new()).clone())
            }
        }
    }

    pub(crate) fn finish(&self, id: &RequestId) {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Cancels a request in flight; unknown or finished ids are ignored, as the spec asks.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(token) = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
        {
            token.cancel();
        }
    }

    /// Ends the session here: everything in flight is cancelled, and no more notifications
    /// go out (its stream ends). A session ended on this replica or on another closes so.
    pub(crate) fn close(&self) {
        self.cancel_all();
        #[cfg(feature = "http")]
        self.close_notifications();
    }

    /// Cancels everything in flight, both ways (the connection is gone).
    pub(crate) fn cancel_all(&self) {
        self.client_requests.disconnect();
        for (_, token) in self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
        {
            token.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ListKind;

    #[test]
    fn roots_asked_for_before_a_change_are_not_kept_after_it() {
        let session = Session::new(Outbound::new().0);
        let root = |uri: &str| Root {
            uri: uri.to_owned(),
            name: None,
        };
        // Asked; the client says its roots changed before the answer is read.
        let asked = session.cached_roots().expect_err("nothing kept yet");
        session.forget_roots();
        session.cache_roots(vec![root("file:///wide")], asked);
        let asked_again = session
            .cached_roots()
            .expect_err("the old answer is not kept");
        // Asked after the change: kept.
        session.cache_roots(vec![root("file:///narrow")], asked_again);
        assert_eq!(
            session.cached_roots().expect("kept"),
            vec![root("file:///narrow")]
        );
    }

    /// The sequence only: that a change and a fetch never interleave halfway is by
    /// construction (one word, each update one atomic step), not tested.
    #[test]
    fn a_list_change_is_told_once_until_the_list_is_fetched() {
        let (out, _frames) = Outbound::new();
        let session = Session::new(out);
        let (tools, prompts) = (ListKind::Tools.bit(), ListKind::Prompts.bit());
        let all = ListKind::ALL.iter().fold(0, |all, kind| all | kind.bit());
        assert_eq!(session.lists_fetched(all), 0, "nothing held back");
        // Told once; a second change before a fetch is held back.
        assert_eq!(session.lists_changed(tools), tools);
        assert_eq!(session.lists_changed(tools), 0);
        assert_eq!(session.lists_changed(tools | prompts), prompts);
        // Fetched: what was held back is named (a fetch through another replica may have
        // come before it), once, and the next change is news.
        assert_eq!(session.lists_fetched(tools | prompts), tools);
        assert_eq!(session.lists_fetched(tools), 0);
        assert_eq!(session.lists_changed(tools), tools);
        // A gap on the bus: what was told may not have arrived, so it is told again.
        session.forget_lists_told();
        assert_eq!(session.lists_changed(tools), tools);
    }
}
