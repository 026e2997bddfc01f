//! The queue of serialised frames to one peer, shared by every task that may write to it.
//!
//! What must arrive — responses, and the server's own requests — is always queued: there is
//! one of each per call in flight, and calls in flight are limited. Notifications (progress,
//! log messages, changes) are dropped once the frames waiting in the queue pass a byte
//! budget: a client that does not read cannot make the server hold an unbounded backlog.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::protocol::Frame;

/// How many bytes of frames may wait for a slow peer before notifications are dropped.
pub const DEFAULT_OUTBOUND_BUDGET: usize = 16 * 1024 * 1024;

/// The sending side. Cloned into every task that may write.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    tx: mpsc::UnboundedSender<Frame>,
    queued: Arc<AtomicUsize>,
    budget: usize,
}

/// The receiving side, read by the transport's writer.
#[derive(Debug)]
pub(crate) struct OutboundQueue {
    rx: mpsc::UnboundedReceiver<Frame>,
    queued: Arc<AtomicUsize>,
}

impl Outbound {
    pub(crate) fn new() -> (Outbound, OutboundQueue) {
        Outbound::with_budget(DEFAULT_OUTBOUND_BUDGET)
    }

    pub(crate) fn with_budget(budget: usize) -> (Outbound, OutboundQueue) {
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        (
            Outbound {
                tx,
                queued: Arc::clone(&queued),
                budget,
            },
            OutboundQueue { rx, queued },
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
            self.queued.fetch_add(frame.len(), Ordering::Relaxed);
            if let Err(e) = self.tx.send(frame) {
                self.queued.fetch_sub(e.0.len(), Ordering::Relaxed);
            }
        }
    }

    /// Whether no frame waits in the queue: every frame sent has been taken (for a writer
    /// thread: written).
    pub(crate) fn is_empty(&self) -> bool {
        self.queued.load(Ordering::Relaxed) == 0
    }

    /// Queues a notification, unless the peer already has more than the budget waiting.
    pub(crate) fn notify(&self, frame: Frame) {
        if self.queued.load(Ordering::Relaxed) + frame.len() > self.budget {
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
        self.queued.load(Ordering::Relaxed)
    }

    /// Tells the writer that no more frames will come. An empty frame is never a message.
    pub(crate) fn close(&self) {
        let _ = self.tx.send(Vec::new());
    }
}

impl OutboundQueue {
    /// A further queue that frames taken from this one are moved into (for a writer thread):
    /// it shares this queue's count, so a frame still counts against the budget until the
    /// writer has taken it from there.
    pub(crate) fn forwarder(&self) -> (Outbound, OutboundQueue) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Outbound {
                tx,
                queued: Arc::clone(&self.queued),
                budget: usize::MAX,
            },
            OutboundQueue {
                rx,
                queued: Arc::clone(&self.queued),
            },
        )
    }

    /// The next frame; `None` once every sender is gone.
    pub(crate) async fn recv(&mut self) -> Option<Frame> {
        let frame = self.rx.recv().await?;
        self.queued.fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
    }

    /// The next frame when one is waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Frame> {
        let frame = self.rx.try_recv().ok()?;
        self.queued.fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
    }

    /// The next frame, blocking the thread (for writer threads).
    pub(crate) fn blocking_recv(&mut self) -> Option<Frame> {
        let frame = self.rx.blocking_recv()?;
        self.queued.fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
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
}
