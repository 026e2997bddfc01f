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
    /// one or the stream is complete.
    fn read_after<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, StreamRead>;

    /// The sequence number of the last event of a stream (0 when it has none).
    fn last<'a>(&'a self, stream: &'a str) -> EventFuture<'a, u64>;

    /// Drops a complete stream whose every event, its end included, was handed to a live
    /// connection: no client will resume it. Streams whose connection broke first are kept
    /// for their retention. The default keeps everything until then.
    fn forget<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        let _ = stream;
        Box::pin(async {})
    }
}

/// How often complete streams past their retention are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How many complete streams are kept for resumption at most; beyond, the longest
/// untouched go first. Streams delivered whole are dropped at once, so only streams whose
/// connection broke count here.
const MAX_COMPLETE_STREAMS: usize = 4096;

/// An [`EventStore`] in this process's memory: each stream keeps its latest `capacity`
/// events, and complete streams are forgotten after `retention`.
pub struct InMemoryEventStore {
    streams: Mutex<HashMap<String, StreamLog>>,
    capacity: usize,
    retention: Duration,
    /// When complete streams past their retention were last dropped: once a second at
    /// most, not at every event.
    swept: Mutex<Instant>,
}

struct StreamLog {
    events: VecDeque<(u64, Frame)>,
    next: u64,
    complete: bool,
    changed: Arc<Notify>,
    touched: Instant,
}

impl StreamLog {
    fn new() -> Self {
        StreamLog {
            events: VecDeque::new(),
            next: 1,
            complete: false,
            changed: Arc::new(Notify::new()),
            touched: Instant::now(),
        }
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::new(1024, Duration::from_secs(300))
    }
}

impl InMemoryEventStore {
    /// A store keeping `capacity` events per stream and complete streams for `retention`.
    pub fn new(capacity: usize, retention: Duration) -> Self {
        InMemoryEventStore {
            streams: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            retention,
            swept: Mutex::new(Instant::now()),
        }
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<String, StreamLog>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many streams are kept (for tests that check nothing leaks).
    pub fn stream_count(&self) -> usize {
        self.streams().len()
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

    fn forget<'a>(&'a self, stream: &'a str) -> EventFuture<'a, ()> {
        let mut streams = self.streams();
        if streams.get(stream).is_some_and(|log| log.complete) {
            streams.remove(stream);
        }
        Box::pin(async {})
    }
}

impl InMemoryEventStore {
    fn append_now(&self, stream: &str, frame: Frame) -> u64 {
        let mut streams = self.streams();
        let retention = self.retention;
        let mut swept = self.swept.lock().unwrap_or_else(|p| p.into_inner());
        if swept.elapsed() >= SWEEP_EVERY {
            streams.retain(|_, log| !(log.complete && log.touched.elapsed() > retention));
            let complete = streams.values().filter(|log| log.complete).count();
            if complete > MAX_COMPLETE_STREAMS {
                let mut ages: Vec<Instant> = streams
                    .values()
                    .filter(|log| log.complete)
                    .map(|log| log.touched)
                    .collect();
                let excess = complete - MAX_COMPLETE_STREAMS;
                ages.select_nth_unstable(excess - 1);
                let cutoff = ages[excess - 1];
                streams.retain(|_, log| !(log.complete && log.touched <= cutoff));
            }
            *swept = Instant::now();
        }
        drop(swept);
        let log = streams
            .entry(stream.to_owned())
            .or_insert_with(StreamLog::new);
        let seq = log.next;
        log.next += 1;
        log.events.push_back((seq, frame));
        if log.events.len() > self.capacity {
            log.events.pop_front();
        }
        log.touched = Instant::now();
        log.changed.notify_waiters();
        seq
    }

    fn complete_now(&self, stream: &str) {
        let mut streams = self.streams();
        let log = streams
            .entry(stream.to_owned())
            .or_insert_with(StreamLog::new);
        log.complete = true;
        log.touched = Instant::now();
        log.changed.notify_waiters();
    }

    async fn wait_after(&self, stream: &str, after: u64) -> StreamRead {
        {
            loop {
                let changed = {
                    let mut streams = self.streams();
                    if after > 0 && !streams.contains_key(stream) {
                        // Resuming a stream that is gone: there is nothing to follow.
                        return StreamRead::default();
                    }
                    // A stream followed from its start may not have its first event yet.
                    let log = streams
                        .entry(stream.to_owned())
                        .or_insert_with(StreamLog::new);
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
                // Re-check: an append between unlocking and `enable` would be missed.
                if self.last_now(stream) > after || self.is_complete(stream) {
                    continue;
                }
                notified.await;
            }
        }
    }

    fn last_now(&self, stream: &str) -> u64 {
        self.streams().get(stream).map_or(0, |log| log.next - 1)
    }

    fn is_complete(&self, stream: &str) -> bool {
        self.streams().get(stream).is_some_and(|log| log.complete)
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
    pub close: CancellationToken,
    /// The `retry` to announce when closing early.
    pub close_retry: Arc<Mutex<Option<Duration>>>,
    /// Ends the stream once it has sent everything stored, instead of waiting for more
    /// (fires at shutdown when no handler is left to add any).
    pub finish: Option<CancellationToken>,
    /// Called when the response ends, however it ends.
    pub on_end: Option<Box<dyn FnOnce() + Send>>,
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
            let priming = format!(
                "id: {}\nretry: {}\ndata: \n\n",
                event_id(&stream, after),
                retry.as_millis()
            );
            if tx.send(Bytes::from(priming)).await.is_err() {
                return;
            }
        }
        let mut cursor = after;
        loop {
            let read = tokio::select! {
                biased;
                () = options.close.cancelled() => {
                    let retry = *options.close_retry.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(retry) = retry {
                        let _ = tx.send(Bytes::from(format!("retry: {}\n\n", retry.as_millis()))).await;
                    }
                    return;
                }
                () = tx.closed() => return,
                read = store.read_after(&stream, cursor) => read,
                () = fired(options.finish.as_ref()) => return,
            };
            for (seq, frame) in read.events {
                let mut event = Vec::with_capacity(frame.len() + stream.len() + 32);
                event.extend_from_slice(b"id: ");
                event.extend_from_slice(event_id(&stream, seq).as_bytes());
                event.extend_from_slice(b"\ndata: ");
                event.extend_from_slice(&frame);
                event.extend_from_slice(b"\n\n");
                if tx.send(Bytes::from(event)).await.is_err() {
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
    let mut response = Response::new(Body::from_stream(ReceiverStream { rx, drained }));
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
        let reader = {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.read_after("s", 0).await.events })
        };
        tokio::task::yield_now().await;
        store.append("s", b"x".to_vec()).await;
        assert_eq!(reader.await.unwrap(), vec![(1, b"x".to_vec())]);
    }

    #[test]
    fn event_ids_round_trip() {
        assert_eq!(parse_event_id(&event_id("ab:cd", 7)), Some(("ab:cd", 7)));
        assert_eq!(parse_event_id("nonsense"), None);
    }
}
