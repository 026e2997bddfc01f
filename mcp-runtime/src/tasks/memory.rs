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
/// One owner's tasks hold at most 1,024 tasks and 64 MiB (their results, questions and
/// answers, as JSON): past either, that owner's finished tasks are forgotten, the oldest
/// first. A client reads a result soon after its task finishes; without the bound, one that
/// never did could make the store keep every result for the tasks' whole time to live.
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
    /// Each task, what wakes its waiters, the bytes it takes as JSON, and the order of its
    /// last change (tasks of one millisecond are told apart by it).
    live: HashMap<String, (StoredTask, Arc<Notify>, usize, u64)>,
    swept_ms: u64,
    /// The order of the latest change.
    changes: u64,
}

/// The most tasks one owner's tasks may be, and the most bytes, before its finished ones
/// are forgotten (its running ones are bounded by the server's quota of tasks running).
const MAX_TASKS_PER_OWNER: usize = 1_024;
const MAX_BYTES_PER_OWNER: usize = 64 << 20;

/// The bytes a task takes, as JSON: what its result, questions and answers hold.
fn bytes_of(task: &StoredTask) -> usize {
    serde_json::to_vec(task).map_or(0, |json| json.len())
}

impl Tasks {
    /// Forgets `owner`'s oldest finished tasks (never `keep`) while its tasks are over
    /// either bound.
    fn make_room(&mut self, owner: Option<&str>, keep: &str) {
        loop {
            let (count, bytes) = self
                .live
                .values()
                .filter(|(task, _, _, _)| task.owner.as_deref() == owner)
                .fold((0, 0), |(count, bytes), (_, _, size, _)| {
                    (count + 1, bytes + size)
                });
            if count <= MAX_TASKS_PER_OWNER && bytes <= MAX_BYTES_PER_OWNER {
                return;
            }
            let oldest = self
                .live
                .iter()
                .filter(|(id, (task, _, _, _))| {
                    task.owner.as_deref() == owner && task.status.is_final() && *id != keep
                })
                .min_by_key(|(_, (_, _, _, changed))| *changed)
                .map(|(id, _)| id.clone());
            let Some(oldest) = oldest else { return };
            if let Some((_, changes, _, _)) = self.live.remove(&oldest) {
                // A waiter on it finds it gone.
                changes.notify_waiters();
            }
        }
    }
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
                .map(|(t, _, _, _)| t)
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
                tasks.live.retain(|_, (t, _, _, _)| !t.expired(now));
                tasks.swept_ms = now;
            }
            let (id, owner) = (task.task_id.clone(), task.owner.clone());
            let bytes = bytes_of(&task);
            tasks.changes += 1;
            let order = tasks.changes;
            tasks
                .live
                .insert(id.clone(), (task, Arc::new(Notify::new()), bytes, order));
            tasks.make_room(owner.as_deref(), &id);
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
        let (task, changed) = self.with_tasks(|tasks| {
            tasks.changes += 1;
            let order = tasks.changes;
            let outcome = match tasks.live.get_mut(task_id) {
                Some((task, changed, bytes, last)) if !task.expired(now) => {
                    let applied = task.apply(change);
                    if applied {
                        *bytes = bytes_of(task);
                        *last = order;
                    }
                    (Some(task.clone()), applied.then(|| Arc::clone(changed)))
                }
                _ => (None, None),
            };
            // A result may have made its owner's tasks larger than they may be.
            if let Some(task) = outcome.0.as_ref().filter(|_| outcome.1.is_some()) {
                tasks.make_room(task.owner.as_deref(), task_id);
            }
            outcome
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
                self.with_tasks(|tasks| tasks.live.get(task_id).map(|(_, n, _, _)| Arc::clone(n)))
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
    async fn an_owners_finished_tasks_are_forgotten_past_its_bounds_the_oldest_first() {
        let store = InMemoryTaskStore::default();
        let owned = |id: &str, owner: &str| {
            StoredTask::new(
                id.into(),
                Some(owner.into()),
                None,
                Duration::from_millis(100),
            )
        };
        // Bob's one task, and a running one of Ada's, are never forgotten for Ada's.
        store.create(owned("bob", "bob")).await.unwrap();
        store.create(owned("running", "ada")).await.unwrap();
        let result = json!({"content": [{"type": "text", "text": "r".repeat(1 << 20)}]});
        for n in 0..100 {
            let id = format!("done-{n}");
            store.create(owned(&id, "ada")).await.unwrap();
            store
                .update(&id, TaskChange::Complete(result.clone()))
                .await
                .unwrap()
                .expect("the task just created");
        }
        let kept: Vec<String> = store.with_tasks(|tasks| tasks.live.keys().cloned().collect());
        let bytes: usize = store.with_tasks(|tasks| {
            tasks
                .live
                .values()
                .filter(|(t, _, _, _)| t.owner.as_deref() == Some("ada"))
                .map(|(_, _, b, _)| b)
                .sum()
        });
        assert!(bytes <= MAX_BYTES_PER_OWNER, "{bytes} bytes of Ada's");
        assert!(kept.contains(&"bob".to_owned()) && kept.contains(&"running".to_owned()));
        assert!(
            kept.contains(&"done-99".to_owned()),
            "the newest result is kept"
        );
        assert!(
            !kept.contains(&"done-0".to_owned()),
            "the oldest is forgotten"
        );
        assert!(kept.len() < 70, "{} tasks kept", kept.len());
        // Past the count, too.
        let store = InMemoryTaskStore::default();
        for n in 0..=MAX_TASKS_PER_OWNER {
            let id = format!("t{n}");
            store.create(owned(&id, "eve")).await.unwrap();
            store.update(&id, TaskChange::Cancel).await.unwrap();
        }
        assert_eq!(
            store.with_tasks(|tasks| tasks.live.len()),
            MAX_TASKS_PER_OWNER
        );
        assert!(store.get("t0").await.unwrap().is_none());
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
