//! The tasks a connection or an endpoint spawned, counted, so that closing it can wait for
//! them: what `tokio_util::task::TaskTracker` does, in the few lines the transports need,
//! without the `futures-util` that crate's `rt` feature compiles into every build.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;

use tokio::sync::Notify;

/// Spawned tasks not finished yet; [`wait`](Tasks::wait) finishes once it is closed and
/// they all are. Clones count the same tasks.
#[derive(Clone, Default)]
pub(crate) struct Tasks {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    running: AtomicUsize,
    closed: AtomicBool,
    /// Told when the last task finishes or the set closes.
    changed: Notify,
}

impl Inner {
    fn done(&self) -> bool {
        self.closed.load(Ordering::Acquire) && self.running.load(Ordering::Acquire) == 0
    }
}

/// Counts its task as finished when dropped: at its end, and when it panics or the runtime
/// drops it unfinished (or never polled).
struct Running(Arc<Inner>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.changed.notify_waiters();
        }
    }
}

pin_project_lite::pin_project! {
    /// A task and its place in the count. The task is declared first, so it is dropped
    /// first: what it holds is gone before the count says it finished.
    struct Counted<F> {
        #[pin]
        task: F,
        running: Running,
    }
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        self.project().task.poll(cx)
    }
}

impl Tasks {
    pub(crate) fn new() -> Tasks {
        Tasks::default()
    }

    /// Spawns `task` on the current runtime, counted until it finishes.
    #[track_caller]
    pub(crate) fn spawn<F>(&self, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.running.fetch_add(1, Ordering::AcqRel);
        let running = Running(Arc::clone(&self.inner));
        tokio::spawn(Counted { task, running })
    }

    /// How many tasks have not finished.
    pub(crate) fn len(&self) -> usize {
        self.inner.running.load(Ordering::Acquire)
    }

    /// No more tasks are expected: [`wait`](Tasks::wait) may finish. Tasks spawned after it
    /// are still counted.
    pub(crate) fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.changed.notify_waiters();
    }

    /// Finishes once the set is closed and every task has finished.
    pub(crate) async fn wait(&self) {
        loop {
            let changed = self.inner.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the check, so a change between the two is not missed.
            changed.as_mut().enable();
            if self.inner.done() {
                return;
            }
            changed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn waits_for_every_task_once_closed() {
        let tasks = Tasks::new();
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        tasks.spawn(async move {
            let _ = finished.await;
        });
        tasks.spawn(async {});
        // Not closed: waiting does not finish even with no task left running.
        tokio::task::yield_now().await;
        let waited = tokio::time::timeout(Duration::from_millis(20), tasks.wait()).await;
        assert!(waited.is_err(), "finished before it was closed");
        tasks.close();
        let waited = tokio::time::timeout(Duration::from_millis(20), tasks.wait()).await;
        assert!(waited.is_err(), "finished with a task running");
        assert_eq!(tasks.len(), 1);
        finish.send(()).unwrap();
        tasks.wait().await;
        assert_eq!(tasks.len(), 0);
    }

    #[tokio::test]
    async fn a_task_dropped_unpolled_still_counts_while_what_it_holds_is_dropped() {
        /// Notes how many tasks still counted as running when it was dropped.
        struct Held(Tasks, Arc<AtomicUsize>);
        impl Drop for Held {
            fn drop(&mut self) {
                self.1.store(self.0.len() + 1, Ordering::Release);
            }
        }
        let tasks = Tasks::new();
        let running_then = Arc::new(AtomicUsize::new(0));
        let held = Held(tasks.clone(), Arc::clone(&running_then));
        // Aborted before this one-thread runtime ever polls it.
        tasks
            .spawn(async move {
                let _held = held;
                std::future::pending::<()>().await
            })
            .abort();
        tasks.close();
        tasks.wait().await;
        assert_eq!(
            running_then.load(Ordering::Acquire),
            2,
            "what the task held was dropped after it counted as finished"
        );
    }

    #[tokio::test]
    async fn a_task_that_panics_or_is_aborted_counts_as_finished() {
        let tasks = Tasks::new();
        let panicked = tasks.spawn(async { panic!("a handler's bug") });
        let aborted = tasks.spawn(std::future::pending::<()>());
        aborted.abort();
        assert!(panicked.await.is_err());
        assert!(aborted.await.is_err());
        tasks.close();
        tasks.wait().await;
        assert_eq!(tasks.len(), 0);
    }
}
