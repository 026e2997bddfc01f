//! The queue of serialised frames to one peer, shared by every task that may write to it.
//!
//! What must arrive — responses, and the server's own requests — is always queued: there is
//! one of each per call in flight, and calls in flight are limited. Notifications (progress,
//! log messages, changes) are dropped once the frames waiting in the queue pass a byte
//! budget: a client that does not read cannot make the server hold an unbounded backlog.
//!
//! Every HTTP request makes one (its own stream, should the handler send anything before its
//! response), and nearly all are dropped unused; so the queue is one allocation, a lock and a
//! list that takes memory only when a frame is queued, where a general channel allocates its
//! shared part, a first block of slots and the byte count apart.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use crate::protocol::Frame;

/// How many bytes of frames may wait for a slow peer before notifications are dropped.
pub const DEFAULT_OUTBOUND_BUDGET: usize = 16 * 1024 * 1024;

/// The sending side. Cloned into every task that may write.
pub(crate) struct Outbound {
    shared: Arc<Shared>,
    budget: usize,
}

/// The receiving side, read by the transport's writer.
pub(crate) struct OutboundQueue {
    shared: Arc<Shared>,
}

struct Shared {
    /// Bytes of frames waiting, counted here or, for a forwarder, in the queue it forwards.
    queued: AtomicUsize,
    counts_in: Option<Arc<Shared>>,
    senders: AtomicUsize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    frames: VecDeque<Frame>,
    /// The reader waiting for a frame.
    reader: Option<Waker>,
    /// Whether the reader is gone: frames sent then are dropped.
    closed: bool,
}

impl Shared {
    fn new(counts_in: Option<Arc<Shared>>) -> Arc<Shared> {
        Arc::new(Shared {
            queued: AtomicUsize::new(0),
            counts_in,
            senders: AtomicUsize::new(1),
            state: Mutex::new(State::default()),
        })
    }

    fn queued(&self) -> &AtomicUsize {
        self.counts_in.as_ref().map_or(&self.queued, |q| &q.queued)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; were it poisoned, the list is still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, frame: Frame) {
        let len = frame.len();
        self.queued().fetch_add(len, Ordering::Relaxed);
        let mut state = self.state();
        if state.closed {
            drop(state);
            self.queued().fetch_sub(len, Ordering::Relaxed);
            return;
        }
        state.frames.push_back(frame);
        let reader = state.reader.take();
        drop(state);
        if let Some(reader) = reader {
            reader.wake();
        }
    }

    /// The first frame waiting, no longer counted against the budget.
    fn take_first(&self, state: &mut State) -> Option<Frame> {
        let frame = state.frames.pop_front()?;
        self.queued().fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
    }

    /// The next frame, `Ready(None)` once every sender is gone and the list is empty, or
    /// `Pending` with `waker` registered.
    fn poll_pop(&self, waker: &Waker) -> Poll<Option<Frame>> {
        let mut state = self.state();
        if let Some(frame) = self.take_first(&mut state) {
            return Poll::Ready(Some(frame));
        }
        // A sender that drops last takes the lock after its count is down, so either it is
        // seen gone here or it finds the waker registered below.
        if self.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        match &mut state.reader {
            Some(reader) if reader.will_wake(waker) => {}
            reader => *reader = Some(waker.clone()),
        }
        Poll::Pending
    }
}

impl Clone for Outbound {
    fn clone(&self) -> Outbound {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Outbound {
            shared: Arc::clone(&self.shared),
            budget: self.budget,
        }
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            let reader = self.shared.state().reader.take();
            if let Some(reader) = reader {
                reader.wake();
            }
        }
    }
}

impl Drop for OutboundQueue {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        state.closed = true;
        let left = std::mem::take(&mut state.frames);
        drop(state);
        let bytes = left.iter().map(Vec::len).sum::<usize>();
        self.shared.queued().fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("queued", &self.shared.queued().load(Ordering::Relaxed))
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OutboundQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundQueue")
            .field("queued", &self.shared.queued().load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Outbound {
    pub(crate) fn new() -> (Outbound, OutboundQueue) {
        Outbound::with_budget(DEFAULT_OUTBOUND_BUDGET)
    }

    pub(crate) fn with_budget(budget: usize) -> (Outbound, OutboundQueue) {
        let shared = Shared::new(None);
        (
            Outbound {
                shared: Arc::clone(&shared),
                budget,
            },
            OutboundQueue { shared },
        )
    }

    /// A queue whose reader is gone: what is sent to it is dropped, and not counted as a
    /// notification a slow peer lost. Every caller gets a sender of the same queue, made once
    /// (a request's stand-in session takes one per request).
    #[cfg(feature = "http")]
    pub(crate) fn closed() -> Outbound {
        static CLOSED: std::sync::LazyLock<Outbound> =
            std::sync::LazyLock::new(|| Outbound::with_budget(usize::MAX).0);
        CLOSED.clone()
    }

    /// Queues a frame that must arrive (a response, a request); frames for a peer that is
    /// gone are dropped.
    pub(crate) fn send(&self, frame: Frame) {
        if !frame.is_empty() {
            self.shared.push(frame);
        }
    }

    /// Whether no frame waits in the queue: every frame sent has been taken (for a writer
    /// thread: written).
    pub(crate) fn is_empty(&self) -> bool {
        self.shared.queued().load(Ordering::Relaxed) == 0
    }

    /// Queues a notification, unless the peer already has more than the budget waiting.
    pub(crate) fn notify(&self, frame: Frame) {
        if self.shared.queued().load(Ordering::Relaxed) + frame.len() > self.budget {
            tracing::debug!(
                bytes = frame.len(),
                "the peer is not reading: a notification is dropped"
            );
            crate::metrics::Metrics::notification_dropped();
            return;
        }
        self.send(frame);
    }

    /// How many bytes of frames wait for the peer.
    #[cfg(feature = "legacy-sse")]
    pub(crate) fn queued_bytes(&self) -> usize {
        self.shared.queued().load(Ordering::Relaxed)
    }

    /// Tells the writer that no more frames will come. An empty frame is never a message.
    pub(crate) fn close(&self) {
        self.shared.push(Vec::new());
    }
}

/// Wakes a thread parked in [`OutboundQueue::blocking_recv`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

impl OutboundQueue {
    /// A further queue that frames taken from this one are moved into (for a writer thread):
    /// it shares this queue's count, so a frame still counts against the budget until the
    /// writer has taken it from there.
    pub(crate) fn forwarder(&self) -> (Outbound, OutboundQueue) {
        let shared = Shared::new(Some(Arc::clone(&self.shared)));
        (
            Outbound {
                shared: Arc::clone(&shared),
                budget: usize::MAX,
            },
            OutboundQueue { shared },
        )
    }

    /// The next frame; `None` once every sender is gone. Cancel-safe: a frame is taken only
    /// by the poll that returns it.
    pub(crate) async fn recv(&mut self) -> Option<Frame> {
        std::future::poll_fn(|cx: &mut Context<'_>| self.shared.poll_pop(cx.waker())).await
    }

    /// The next frame when one is waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Frame> {
        self.shared.take_first(&mut self.shared.state())
    }

    /// The next frame, blocking the thread (for writer threads).
    pub(crate) fn blocking_recv(&mut self) -> Option<Frame> {
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        loop {
            if let Poll::Ready(frame) = self.shared.poll_pop(&waker) {
                return frame;
            }
            // A wake-up before the park makes the park return at once.
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notifications_are_dropped_past_the_budget_and_responses_never_are() {
        let (out, mut queue) = Outbound::with_budget(10);
        let dropped = crate::metrics::Metrics::default().notifications_dropped();
        out.notify(b"123456".to_vec());
        out.notify(b"789012".to_vec()); // 12 > 10: dropped
        // Counted for the metrics (of the whole process: other tests may drop too).
        let now = crate::metrics::Metrics::default().notifications_dropped();
        assert!(now > dropped, "{now} > {dropped}");
        out.send(b"response-1".to_vec()); // always kept
        assert_eq!(queue.recv().await.unwrap(), b"123456");
        assert_eq!(queue.recv().await.unwrap(), b"response-1");
        out.notify(b"abc".to_vec()); // the queue drained: room again
        assert_eq!(queue.try_recv().unwrap(), b"abc");
        assert!(queue.try_recv().is_none());
    }

    #[tokio::test]
    async fn frames_moved_to_a_writer_thread_count_until_the_thread_takes_them() {
        let (out, mut queue) = Outbound::with_budget(10);
        let (forward, mut writer) = queue.forwarder();
        out.notify(b"123456".to_vec());
        // Moved on, not yet written: the budget still sees it.
        forward.send(queue.try_recv().unwrap());
        out.notify(b"789012".to_vec()); // dropped
        assert!(queue.try_recv().is_none());
        assert_eq!(writer.recv().await.unwrap(), b"123456");
        out.notify(b"abc".to_vec()); // written: room again
        assert_eq!(queue.try_recv().unwrap(), b"abc");
    }

    #[tokio::test]
    async fn a_waiting_reader_learns_when_the_last_sender_is_gone() {
        let (out, mut queue) = Outbound::new();
        let second = out.clone();
        let reader = tokio::spawn(async move {
            let first = queue.recv().await;
            (first, queue.recv().await)
        });
        second.send(b"one".to_vec());
        drop(second);
        drop(out);
        let (first, end) = reader.await.unwrap();
        assert_eq!(first.as_deref(), Some(&b"one"[..]));
        assert_eq!(end, None);
    }

    #[test]
    fn frames_sent_after_the_reader_is_gone_are_dropped_and_not_counted() {
        let (out, queue) = Outbound::with_budget(10);
        out.send(b"waiting".to_vec());
        assert!(!out.is_empty());
        drop(queue);
        assert!(out.is_empty(), "what waited went with the reader");
        out.send(b"late".to_vec());
        assert!(out.is_empty());
    }

    #[test]
    fn a_writer_thread_is_woken_for_each_frame_and_at_the_end() {
        let (out, mut queue) = Outbound::new();
        let writer = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(frame) = queue.blocking_recv() {
                got.push(frame);
            }
            got
        });
        for n in 0..100u8 {
            out.send(vec![n]);
            if n % 10 == 0 {
                std::thread::yield_now();
            }
        }
        drop(out);
        let got = writer.join().unwrap();
        assert_eq!(got, (0..100u8).map(|n| vec![n]).collect::<Vec<_>>());
    }
}
