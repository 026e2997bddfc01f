//! Server-Sent Event streams and their resumability: every event of a stream is kept in an
//! [`EventStore`] under an id, so a client that lost its connection reconnects with
//! `Last-Event-ID` and receives every event after that id, exactly once, in order.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Response, StatusCode, header};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::sse;
use crate::protocol::Frame;

/// What one read of a stream found.
#[derive(Debug, Default)]
pub struct StreamRead {
    /// The events after the position asked for, with their sequence numbers.
    pub events: Vec<(u64, Frame)>,
    /// Whether the stream is complete: no event will follow the last one.
    pub complete: bool,
    /// Whether the stream is known at all (an unknown one was never opened, or expired).
    pub known: bool,
}

/// The future an [`EventStore`] method returns.
pub type EventFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where the events of SSE streams are kept for replay. Implement it over shared storage to
/// let a client resume on another replica; [`InMemoryEventStore`] keeps them in this process.
///
/// Streams are named `{session}-…` after the session they belong to. A store creates state
/// only for streams the server opened ([`open`](EventStore::open)) or appended to: a
/// `Last-Event-ID` naming any other stream is refused before the store is read.
///
/// A store that cannot be reached answers `append` with 0 (the event is lost, and logged)
/// and `read_after` with an unknown stream, which ends the reader's response.
pub trait EventStore: Send + Sync + 'static {
    /// Appends a message to a stream and returns its sequence number (1, 2, …).
    fn append<'a>(&'a self, stream: &'a str, frame: Frame) -> EventFuture<'a, u64>;

    /// Appends a message unless one with the same `key` was appended to the stream before
    /// (a notification that several replicas deliver, which must arrive once). In one
    /// process every message is appended once anyway.
    fn append_once<'a>(
        &'a self,
        stream: &'a str,
        key: &'a str,
        frame: Frame,
    ) -> EventFuture<'a, u64> {
        let _ = key;
        self.append(stream, frame)
    }

    /// Marks a stream complete.
    fn complete<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()>;

    /// The events of `stream` after sequence number `after`, waiting until there is at least
    /// one or the stream is complete. A stream the store does not know is answered at once,
    /// with `known: false`.
    fn read_after<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, StreamRead>;

    /// The sequence number of the last event of a stream (0 when it has none).
    fn last<'a>(&'a self, stream: &'a str) -> EventFuture<'a, u64>;

    /// Makes a stream the server just opened known, with no events yet, so a reader can
    /// follow it from its start. The default does nothing (for stores that know a stream
    /// by its first event).
    fn open<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        let _ = stream;
        Box::pin(async {})
    }

    /// Whether the store knows a stream: opened, or holding events. The default asks
    /// [`last`](EventStore::last).
    fn contains<'a>(&'a self, stream: &'a str) -> EventFuture<'a, bool> {
        Box::pin(async move { self.last(stream).await > 0 })
    }

    /// Drops a complete stream whose every event, its end included, was handed to a live
    /// connection: no client will resume it. Streams whose connection broke first are kept
    /// for their retention. The default keeps everything until then.
    fn forget<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        let _ = stream;
        Box::pin(async {})
    }

    /// Drops every stream of a session that ended: nothing will resume them. The default
    /// keeps them until their retention ends.
    fn end_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        let _ = session;
        Box::pin(async {})
    }
}

/// How often complete streams past their retention are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The bounds of an [`InMemoryEventStore`]. Past any of them the oldest go first: complete
/// streams least recently touched, then a stream's oldest events. A client resuming from
/// before what was dropped does not get it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventStoreLimits {
    /// Events kept per stream (1,024).
    pub events_per_stream: usize,
    /// Bytes kept per stream (4 MiB).
    pub bytes_per_stream: usize,
    /// Streams kept per session (128): a session's clients cannot push out the resumable
    /// streams of others.
    pub streams_per_session: usize,
    /// Bytes kept in all (64 MiB).
    pub total_bytes: usize,
    /// How long a complete stream is kept after its last event (5 minutes).
    pub retention: Duration,
}

impl Default for EventStoreLimits {
    fn default() -> Self {
        EventStoreLimits {
            events_per_stream: 1024,
            bytes_per_stream: 4 << 20,
            streams_per_session: 128,
            total_bytes: 64 << 20,
            retention: Duration::from_secs(300),
        }
    }
}

/// An [`EventStore`] in this process's memory, bounded by [`EventStoreLimits`].
pub struct InMemoryEventStore {
    state: Mutex<Logs>,
    limits: EventStoreLimits,
    /// When complete streams past their retention were last dropped: once a second at
    /// most, not at every event.
    swept: Mutex<Instant>,
}

/// Every stream, how many each session has, and the bytes held in all.
#[derive(Default)]
struct Logs {
    streams: HashMap<String, StreamLog>,
    per_session: HashMap<String, usize>,
    bytes: usize,
}

struct StreamLog {
    events: VecDeque<(u64, Frame)>,
    bytes: usize,
    next: u64,
    complete: bool,
    changed: Arc<Notify>,
    touched: Instant,
}

impl StreamLog {
    fn new() -> Self {
        StreamLog {
            events: VecDeque::new(),
            bytes: 0,
            next: 1,
            complete: false,
            changed: Arc::new(Notify::new()),
            touched: Instant::now(),
        }
    }
}

/// The session a stream belongs to: its name up to the first `-`.
fn session_of(stream: &str) -> &str {
    stream
        .split_once('-')
        .map_or(stream, |(session, _)| session)
}

impl Logs {
    /// The stream's log, made when the server opens or writes to it; room is made first.
    fn log(&mut self, stream: &str, limits: &EventStoreLimits) -> &mut StreamLog {
        if !self.streams.contains_key(stream) {
            let session = session_of(stream).to_owned();
            while self.per_session.get(&session).copied().unwrap_or(0)
                >= limits.streams_per_session.max(1)
            {
                let oldest = self
                    .streams
                    .iter()
                    .filter(|(name, _)| session_of(name) == session)
                    .min_by_key(|(_, log)| (!log.complete, log.touched))
                    .map(|(name, _)| name.clone());
                match oldest {
                    Some(name) => self.remove(&name),
                    None => break,
                }
            }
            *self.per_session.entry(session).or_insert(0) += 1;
            self.streams.insert(stream.to_owned(), StreamLog::new());
        }
        self.streams
            .get_mut(stream)
            .unwrap_or_else(|| unreachable!("inserted above"))
    }

    fn remove(&mut self, stream: &str) {
        let Some(log) = self.streams.remove(stream) else {
            return;
        };
        self.bytes -= log.bytes;
        // A reader waiting on it learns it is gone.
        log.changed.notify_waiters();
        let session = session_of(stream);
        if let Some(count) = self.per_session.get_mut(session) {
            *count -= 1;
            if *count == 0 {
                self.per_session.remove(session);
            }
        }
    }

    fn drop_oldest_event(&mut self, stream: &str) -> bool {
        let Some(log) = self.streams.get_mut(stream) else {
            return false;
        };
        let Some((_, frame)) = log.events.pop_front() else {
            return false;
        };
        log.bytes -= frame.len();
        self.bytes -= frame.len();
        true
    }

    /// Brings the total under its bound: complete streams least recently touched go first,
    /// then the oldest events of the largest stream.
    fn shrink(&mut self, limits: &EventStoreLimits) {
        while self.bytes > limits.total_bytes {
            let complete = self
                .streams
                .iter()
                .filter(|(_, log)| log.complete)
                .min_by_key(|(_, log)| log.touched)
                .map(|(name, _)| name.clone());
            if let Some(name) = complete {
                self.remove(&name);
                continue;
            }
            let largest = self
                .streams
                .iter()
                .max_by_key(|(_, log)| log.bytes)
                .map(|(name, _)| name.clone());
            match largest {
                Some(name) if self.drop_oldest_event(&name) => {}
                _ => break,
            }
        }
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::with_limits(EventStoreLimits::default())
    }
}

impl InMemoryEventStore {
    /// A store keeping `capacity` events per stream and complete streams for `retention`,
    /// within the other default limits.
    pub fn new(capacity: usize, retention: Duration) -> Self {
        InMemoryEventStore::with_limits(EventStoreLimits {
            events_per_stream: capacity,
            retention,
            ..EventStoreLimits::default()
        })
    }

    /// A store within these limits.
    ///
    /// ```
    /// use mcp_runtime::http::{EventStoreLimits, InMemoryEventStore};
    ///
    /// let store = InMemoryEventStore::with_limits(EventStoreLimits {
    ///     total_bytes: 16 << 20,
    ///     ..EventStoreLimits::default()
    /// });
    /// assert_eq!(store.bytes(), 0);
    /// ```
    pub fn with_limits(limits: EventStoreLimits) -> Self {
        InMemoryEventStore {
            state: Mutex::new(Logs::default()),
            limits: EventStoreLimits {
                events_per_stream: limits.events_per_stream.max(1),
                ..limits
            },
            swept: Mutex::new(Instant::now()),
        }
    }

    fn logs(&self) -> std::sync::MutexGuard<'_, Logs> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many streams are kept (for tests that check nothing leaks).
    pub fn stream_count(&self) -> usize {
        self.logs().streams.len()
    }

    /// How many bytes of events are kept.
    pub fn bytes(&self) -> usize {
        self.logs().bytes
    }
}

impl EventStore for InMemoryEventStore {
    fn append<'a>(&'a self, stream: &'a str, frame: Frame) -> EventFuture<'a, u64> {
        let seq = self.append_now(stream, frame);
        Box::pin(async move { seq })
    }

    fn complete<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        self.complete_now(stream);
        Box::pin(async {})
    }

    fn read_after<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, StreamRead> {
        Box::pin(self.wait_after(stream, after))
    }

    fn last<'a>(&'a self, stream: &'a str) -> EventFuture<'a, u64> {
        let last = self.last_now(stream);
        Box::pin(async move { last })
    }

    fn open<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        self.logs().log(stream, &self.limits);
        Box::pin(async {})
    }

    fn contains<'a>(&'a self, stream: &'a str) -> EventFuture<'a, bool> {
        let known = self.logs().streams.contains_key(stream);
        Box::pin(async move { known })
    }

    fn forget<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        let mut logs = self.logs();
        if logs.streams.get(stream).is_some_and(|log| log.complete) {
            logs.remove(stream);
        }
        Box::pin(async {})
    }

    fn end_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        let mut logs = self.logs();
        let ended: Vec<String> = logs
            .streams
            .keys()
            .filter(|name| session_of(name) == session)
            .cloned()
            .collect();
        for name in ended {
            logs.remove(&name);
        }
        Box::pin(async {})
    }
}

impl InMemoryEventStore {
    fn append_now(&self, stream: &str, frame: Frame) -> u64 {
        let limits = &self.limits;
        let mut logs = self.logs();
        let mut swept = self.swept.lock().unwrap_or_else(|p| p.into_inner());
        if swept.elapsed() >= SWEEP_EVERY {
            let expired: Vec<String> = logs
                .streams
                .iter()
                .filter(|(_, log)| log.complete && log.touched.elapsed() > limits.retention)
                .map(|(name, _)| name.clone())
                .collect();
            for name in expired {
                logs.remove(&name);
            }
            *swept = Instant::now();
        }
        drop(swept);
        let size = frame.len();
        let log = logs.log(stream, limits);
        let seq = log.next;
        log.next += 1;
        log.events.push_back((seq, frame));
        log.bytes += size;
        log.touched = Instant::now();
        let changed = Arc::clone(&log.changed);
        logs.bytes += size;
        while let Some(log) = logs.streams.get(stream)
            && log.events.len() > 1
            && (log.events.len() > limits.events_per_stream || log.bytes > limits.bytes_per_stream)
        {
            logs.drop_oldest_event(stream);
        }
        logs.shrink(limits);
        changed.notify_waiters();
        seq
    }

    fn complete_now(&self, stream: &str) {
        let mut logs = self.logs();
        let log = logs.log(stream, &self.limits);
        log.complete = true;
        log.touched = Instant::now();
        log.changed.notify_waiters();
    }

    async fn wait_after(&self, stream: &str, after: u64) -> StreamRead {
        loop {
            let changed = {
                let logs = self.logs();
                // Never made here: only the server opens streams.
                let Some(log) = logs.streams.get(stream) else {
                    return StreamRead::default();
                };
                let events: Vec<(u64, Frame)> = log
                    .events
                    .iter()
                    .filter(|(seq, _)| *seq > after)
                    .cloned()
                    .collect();
                if !events.is_empty() || log.complete {
                    return StreamRead {
                        events,
                        complete: log.complete,
                        known: true,
                    };
                }
                Arc::clone(&log.changed)
            };
            let notified = changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // Re-check: an append (or the stream's removal) between unlocking and `enable`
            // would be missed.
            let now_known = self.logs().streams.contains_key(stream);
            if !now_known || self.last_now(stream) > after || self.is_complete(stream) {
                continue;
            }
            notified.await;
        }
    }

    fn last_now(&self, stream: &str) -> u64 {
        self.logs()
            .streams
            .get(stream)
            .map_or(0, |log| log.next - 1)
    }

    fn is_complete(&self, stream: &str) -> bool {
        self.logs()
            .streams
            .get(stream)
            .is_some_and(|log| log.complete)
    }
}

/// An event id: the stream and the position in it.
pub(crate) fn event_id(stream: &str, seq: u64) -> String {
    format!("{stream}:{seq}")
}

/// Reads a `Last-Event-ID` back into the stream and the position.
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once(':')?;
    Some((stream, seq.parse().ok()?))
}

/// How an SSE response starts and ends.
pub(crate) struct SseOptions {
    /// Send a priming event (an id and empty data) first, and this `retry` (SEP-1699).
    pub priming_retry: Option<Duration>,
    /// Ends the stream early (the handler asked, or the server is shutting down).
    pub close: Arc<CloseSignal>,
    /// Ends the stream once it has sent everything stored, instead of waiting for more
    /// (fires at shutdown when no handler is left to add any).
    pub finish: Option<CancellationToken>,
    /// Called when the response ends, however it ends.
    pub on_end: Option<Box<dyn FnOnce() + Send>>,
    /// How often a quiet stream sends a comment, so a client that is gone is noticed.
    pub keep_alive: Duration,
}

/// Ends an SSE response early, with the `retry` to announce: one allocation for the two, as
/// every POST makes one whether or not its answer becomes a stream. A POST's token is made
/// only when something waits on it or fires it: most answers are plain JSON, made before
/// anything does.
pub(crate) struct CloseSignal {
    token: std::sync::OnceLock<CancellationToken>,
    retry: Mutex<Option<Duration>>,
}

impl CloseSignal {
    /// A signal that fires with `token`.
    pub(crate) fn new(token: CancellationToken) -> Arc<CloseSignal> {
        Arc::new(CloseSignal {
            token: std::sync::OnceLock::from(token),
            retry: Mutex::new(None),
        })
    }

    /// A signal of its own, its token made when first needed.
    pub(crate) fn lazy() -> Arc<CloseSignal> {
        Arc::new(CloseSignal {
            token: std::sync::OnceLock::new(),
            retry: Mutex::new(None),
        })
    }

    pub(crate) fn token(&self) -> &CancellationToken {
        self.token.get_or_init(CancellationToken::new)
    }

    fn retry(&self) -> Option<Duration> {
        *self.retry.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The handler's side: `Context::close_stream`.
impl crate::session::StreamControl for CloseSignal {
    fn close(&self, retry: Option<Duration>) {
        *self.retry.lock().unwrap_or_else(|p| p.into_inner()) = retry;
        self.token().cancel();
    }
}

/// Runs a closure when dropped.
struct OnEnd(Option<Box<dyn FnOnce() + Send>>);

impl Drop for OnEnd {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// An SSE response that follows `stream` in `store` from after `after` until the stream is
/// complete or `options.close` fires. Extra headers are set by the caller.
pub(crate) fn sse_response(
    store: Arc<dyn EventStore>,
    stream: String,
    after: u64,
    options: SseOptions,
) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let (drained_tx, drained) = oneshot::channel();
    tokio::spawn(async move {
        let _on_end = OnEnd(options.on_end);
        if let Some(retry) = options.priming_retry {
            let priming = sse::priming(&event_id(&stream, after), retry.as_millis());
            if tx.send(priming).await.is_err() {
                return;
            }
        }
        let mut cursor = after;
        let every = options.keep_alive;
        let mut keep_alive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let read = tokio::select! {
                biased;
                () = options.close.token().cancelled() => {
                    let retry = options.close.retry();
                    if let Some(retry) = retry {
                        let _ = tx.send(sse::retry(retry.as_millis())).await;
                    }
                    return;
                }
                () = tx.closed() => return,
                read = store.read_after(&stream, cursor) => read,
                () = fired(options.finish.as_ref()) => return,
                _ = keep_alive.tick() => {
                    if tx.send(sse::KEEP_ALIVE).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            for (seq, frame) in read.events {
                let event = sse::event(Some(&event_id(&stream, seq)), None, &frame);
                if tx.send(event).await.is_err() {
                    return;
                }
                cursor = seq;
            }
            if !read.known {
                return;
            }
            if read.complete && store.last(&stream).await <= cursor {
                // Everything is out: once the connection has taken the last byte, nobody
                // will resume this stream.
                drop(tx);
                if drained.await.is_ok() {
                    store.forget(&stream).await;
                }
                return;
            }
        }
    });
    sse_body_then(rx, Some(drained_tx))
}

/// An SSE response whose body is what arrives on `rx`.
pub(crate) fn sse_body(rx: mpsc::Receiver<Bytes>) -> Response<Body> {
    sse_body_then(rx, None)
}

/// [`sse_body`], telling `drained` when the connection took the whole body.
fn sse_body_then(
    rx: mpsc::Receiver<Bytes>,
    drained: Option<oneshot::Sender<()>>,
) -> Response<Body> {
    sse(Body::from_stream(ReceiverStream { rx, drained }))
}

/// An SSE response that ends before its first event.
pub(crate) fn empty_sse() -> Response<Body> {
    sse(Body::empty())
}

/// An SSE response whose events are `body`.
fn sse(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Reverse proxies such as nginx buffer responses unless told not to; SSE must flow.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Completes when the token fires; never without one.
async fn fired(token: Option<&CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

/// A receiver as a stream of body chunks.
pub(crate) struct ReceiverStream {
    rx: mpsc::Receiver<Bytes>,
    /// Told when the body was read to its end (dropped untold when the connection went
    /// first).
    drained: Option<oneshot::Sender<()>>,
}

impl futures_core::Stream for ReceiverStream {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let next = self.rx.poll_recv(cx);
        if let Poll::Ready(None) = next
            && let Some(drained) = self.drained.take()
        {
            let _ = drained.send(());
        }
        next.map(|chunk| chunk.map(Ok))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reader_gets_every_event_after_its_position_once() {
        let store = InMemoryEventStore::default();
        store.append("s", b"one".to_vec()).await;
        store.append("s", b"two".to_vec()).await;
        let read = store.read_after("s", 1).await;
        assert_eq!(read.events, vec![(2, b"two".to_vec())]);
        assert!(!read.complete);
        store.complete("s").await;
        let read = store.read_after("s", 2).await;
        assert!(read.events.is_empty() && read.complete);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_append() {
        let store = Arc::new(InMemoryEventStore::default());
        store.open("s").await;
        let reader = {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.read_after("s", 0).await.events })
        };
        tokio::task::yield_now().await;
        store.append("s", b"x".to_vec()).await;
        assert_eq!(reader.await.unwrap(), vec![(1, b"x".to_vec())]);
    }

    #[tokio::test]
    async fn reading_a_stream_never_opened_makes_no_state() {
        let store = InMemoryEventStore::default();
        for after in [0, 1] {
            let read = store.read_after("abc-forged-name", after).await;
            assert!(!read.known && read.events.is_empty());
        }
        assert!(!store.contains("abc-forged-name").await);
        assert_eq!(store.stream_count(), 0);
    }

    #[tokio::test]
    async fn a_session_keeps_a_bounded_number_of_streams_and_others_keep_theirs() {
        let store = InMemoryEventStore::with_limits(EventStoreLimits {
            streams_per_session: 3,
            ..EventStoreLimits::default()
        });
        store.append("victim-1", b"kept".to_vec()).await;
        store.complete("victim-1").await;
        for n in 0..50 {
            let stream = format!("flood-{n}");
            store.append(&stream, b"x".to_vec()).await;
            store.complete(&stream).await;
        }
        assert_eq!(store.stream_count(), 4);
        assert!(store.contains("victim-1").await);
        assert!(store.contains("flood-49").await && !store.contains("flood-0").await);
    }

    #[tokio::test]
    async fn the_store_stays_under_its_byte_bound() {
        let store = InMemoryEventStore::with_limits(EventStoreLimits {
            total_bytes: 10_000,
            bytes_per_stream: 4_000,
            ..EventStoreLimits::default()
        });
        for n in 0..100 {
            store
                .append(&format!("s{}-x", n % 7), vec![b'a'; 300])
                .await;
        }
        assert!(store.bytes() <= 10_000, "{} bytes", store.bytes());
        let read = store.read_after("s0-x", 0).await;
        let kept: usize = read.events.iter().map(|(_, f)| f.len()).sum();
        assert!(kept <= 4_000 && !read.events.is_empty());
    }

    #[tokio::test]
    async fn an_ended_session_leaves_no_stream_behind() {
        let store = InMemoryEventStore::default();
        store.open("ab-get").await;
        store.append("ab-r-1", b"x".to_vec()).await;
        store.append("abc-r-1", b"x".to_vec()).await;
        store.end_session("ab").await;
        assert_eq!(store.stream_count(), 1);
        assert_eq!(store.bytes(), 1);
    }

    #[test]
    fn event_ids_round_trip() {
        assert_eq!(parse_event_id(&event_id("ab:cd", 7)), Some(("ab:cd", 7)));
        assert_eq!(parse_event_id("nonsense"), None);
    }
}
