//! [`InMemoryTaskStore`]: tasks in this process's memory.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::{StoredTask, TaskChange, TaskStore, TaskStoreFuture, now_ms};

/// A [`TaskStore`] in this process's memory: tasks live until their time to live runs out
/// (or the process ends), and only this process can report or cancel them. Behind a load
/// balancer, use a store over shared storage.
///
/// ```
/// use std::sync::Arc;
/// use mcp_runtime::tasks::InMemoryTaskStore;
///
/// let server = mcp_runtime::server!()
///     .auto_register(false)
///     .task_store(Arc::new(InMemoryTaskStore::default()))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Default)]
pub struct InMemoryTaskStore {
    state: Mutex<Tasks>,
}

/// The tasks, each with what wakes its own waiters (one change wakes the waiters of that
/// task, not of every task), and when expired ones were last dropped.
#[derive(Default)]
struct Tasks {
    live: HashMap<String, (StoredTask, Arc<Notify>)>,
    swept_ms: u64,
}

/// How often expired tasks are dropped: at most once a second, not at every new one.
const SWEEP_EVERY_MS: u64 = 1_000;

impl InMemoryTaskStore {
    fn with_tasks<T>(&self, f: impl FnOnce(&mut Tasks) -> T) -> T {
        let mut tasks = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut tasks)
    }

    /// The task, when it is there and not expired.
    fn live(&self, task_id: &str) -> Option<StoredTask> {
        let now = now_ms();
        self.with_tasks(|tasks| {
            tasks
                .live
                .get(task_id)
                .map(|(t, _)| t)
                .filter(|t| !t.expired(now))
                .cloned()
        })
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, task: StoredTask) -> TaskStoreFuture<'_, ()> {
        let now = now_ms();
        self.with_tasks(|tasks| {
            // Expired tasks are dropped as new ones come, so the map stays bounded by what
            // is alive.
            if now.saturating_sub(tasks.swept_ms) >= SWEEP_EVERY_MS {
                tasks.live.retain(|_, (t, _)| !t.expired(now));
                tasks.swept_ms = now;
            }
            tasks
                .live
                .insert(task.task_id.clone(), (task, Arc::new(Notify::new())));
        });
        Box::pin(async { Ok(()) })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> TaskStoreFuture<'a, Option<StoredTask>> {
        let task = self.live(task_id);
        Box::pin(async move { Ok(task) })
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> TaskStoreFuture<'a, Option<StoredTask>> {
        let now = now_ms();
        let (task, changed) = self.with_tasks(|tasks| match tasks.live.get_mut(task_id) {
            Some((task, changed)) if !task.expired(now) => {
                let applied = task.apply(change);
                (Some(task.clone()), applied.then(|| Arc::clone(changed)))
            }
            _ => (None, None),
        });
        if let Some(changed) = changed {
            changed.notify_waiters();
        }
        Box::pin(async move { Ok(task) })
    }

    fn changed<'a>(
        &'a self,
        task_id: &'a str,
        seen: u64,
        timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            let Some(changes) =
                self.with_tasks(|tasks| tasks.live.get(task_id).map(|(_, n)| Arc::clone(n)))
            else {
                return;
            };
            loop {
                // Registered before looking, so a change between the look and the wait is
                // not missed.
                let notified = changes.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.live(task_id).is_none_or(|t| t.version > seen) {
                    return;
                }
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep_until(deadline) => return,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, ttl: Option<Duration>) -> StoredTask {
        StoredTask::new(id.into(), None, ttl, Duration::from_millis(100))
    }

    #[tokio::test]
    async fn a_created_task_is_found_and_changed_atomically() {
        let store = InMemoryTaskStore::default();
        store.create(task("a", None)).await.unwrap();
        assert!(store.get("a").await.unwrap().is_some());
        assert!(store.get("b").await.unwrap().is_none());
        let after = store
            .update("a", TaskChange::Complete(json!({"content": []})))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after.version, 1);
        assert!(
            store
                .update("b", TaskChange::Cancel)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn an_expired_task_is_gone() {
        let store = InMemoryTaskStore::default();
        let mut old = task("old", Some(Duration::from_millis(1)));
        old.created_at_ms -= 10;
        store.create(old).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_waiter_wakes_at_the_change() {
        let store = std::sync::Arc::new(InMemoryTaskStore::default());
        store.create(task("a", None)).await.unwrap();
        let waiter = {
            let store = std::sync::Arc::clone(&store);
            tokio::spawn(async move { store.changed("a", 0, Duration::from_secs(30)).await })
        };
        tokio::task::yield_now().await;
        store.update("a", TaskChange::Cancel).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken by the change")
            .unwrap();
    }
}
