//! [`InMemoryTaskStore`]: tasks in this process's memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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
/// task, not of every task), with each owner's totals and the order their tasks expire in
/// kept as they change: a change costs O(log n), never a look at every task.
#[derive(Default)]
struct Tasks {
    live: HashMap<String, Entry>,
    /// Each owner's totals, for every owner with a task here.
    owners: HashMap<Option<String>, Totals>,
    /// The tasks with a time to live, by when they expire.
    expiries: BTreeSet<(u64, String)>,
    /// The order of the latest change.
    changes: u64,
    bounds: Bounds,
    /// What keeping the bounds and dropping expired tasks did, for tests to count.
    #[cfg(test)]
    counts: Counts,
}

#[cfg(test)]
#[derive(Default, Debug)]
struct Counts {
    /// The tasks looked at.
    looked_at: u64,
    /// The finished tasks forgotten past a bound.
    forgotten: u64,
    /// The expired tasks dropped.
    dropped: u64,
}

/// One task, and what the store keeps beside it.
struct Entry {
    task: StoredTask,
    /// Wakes the task's waiters.
    changed: Arc<Notify>,
    /// The bytes the task takes as JSON.
    bytes: usize,
    /// The order of its last change (tasks of one millisecond are told apart by it).
    order: u64,
}

/// What one owner's tasks hold.
#[derive(Default, Debug, PartialEq)]
struct Totals {
    count: usize,
    bytes: usize,
    /// The finished tasks, by the order of their last change: the first is the one to
    /// forget first. A finished task never changes again, so its place stays.
    finished: BTreeMap<u64, String>,
}

/// How much one owner's tasks may hold before its finished ones are forgotten.
struct Bounds {
    tasks: usize,
    bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            tasks: MAX_TASKS_PER_OWNER,
            bytes: MAX_BYTES_PER_OWNER,
        }
    }
}

/// The most tasks one owner's tasks may be, and the most bytes, before its finished ones
/// are forgotten (its running ones are bounded by the server's quota of tasks running).
const MAX_TASKS_PER_OWNER: usize = 1_024;
const MAX_BYTES_PER_OWNER: usize = 64 << 20;

/// The bytes a task takes, as JSON: what its result, questions and answers hold.
fn bytes_of(task: &StoredTask) -> usize {
    serde_json::to_vec(task).map_or(0, |json| json.len())
}

/// When the task expires, if it does: neither its creation nor its time to live changes.
fn expiry_of(task: &StoredTask) -> Option<u64> {
    task.ttl_ms
        .map(|ttl| task.created_at_ms.saturating_add(ttl))
}

impl Tasks {
    /// Keeps `task` under its id, in place of any task of that id, counted in its owner's
    /// totals.
    fn insert(&mut self, task: StoredTask) {
        let id = task.task_id.clone();
        self.remove(&id);
        self.changes += 1;
        let entry = Entry {
            bytes: bytes_of(&task),
            order: self.changes,
            changed: Arc::new(Notify::new()),
            task,
        };
        let totals = self.owners.entry(entry.task.owner.clone()).or_default();
        totals.count += 1;
        totals.bytes += entry.bytes;
        if entry.task.status.is_final() {
            totals.finished.insert(entry.order, id.clone());
        }
        if let Some(expiry) = expiry_of(&entry.task) {
            self.expiries.insert((expiry, id.clone()));
        }
        self.live.insert(id, entry);
    }

    /// Forgets a task, and takes it out of its owner's totals.
    fn remove(&mut self, id: &str) -> Option<Entry> {
        let entry = self.live.remove(id)?;
        if let Some(expiry) = expiry_of(&entry.task) {
            self.expiries.remove(&(expiry, id.to_owned()));
        }
        if let Some(totals) = self.owners.get_mut(&entry.task.owner) {
            totals.count -= 1;
            totals.bytes -= entry.bytes;
            totals.finished.remove(&entry.order);
            if totals.count == 0 {
                self.owners.remove(&entry.task.owner);
            }
        }
        Some(entry)
    }

    /// Applies a change to a live task and returns the task after it, and what wakes its
    /// waiters when it changed.
    fn update(
        &mut self,
        id: &str,
        change: TaskChange,
        now: u64,
    ) -> Option<(StoredTask, Option<Arc<Notify>>)> {
        let entry = self.live.get_mut(id).filter(|e| !e.task.expired(now))?;
        if !entry.task.apply(change) {
            return Some((entry.task.clone(), None));
        }
        self.changes += 1;
        let bytes = bytes_of(&entry.task);
        let totals = self
            .owners
            .get_mut(&entry.task.owner)
            .expect("every live task's owner has totals");
        totals.bytes = totals.bytes - entry.bytes + bytes;
        entry.bytes = bytes;
        entry.order = self.changes;
        // `apply` changes nothing of a finished task: this one has just finished.
        if entry.task.status.is_final() {
            totals.finished.insert(entry.order, id.to_owned());
        }
        let (task, changed) = (entry.task.clone(), Arc::clone(&entry.changed));
        // A result may have made its owner's tasks larger than they may be.
        self.make_room(&task.owner, id);
        Some((task, Some(changed)))
    }

    /// Forgets `owner`'s oldest finished tasks (never `keep`) while its tasks are over
    /// either bound.
    fn make_room(&mut self, owner: &Option<String>, keep: &str) {
        loop {
            let Some(totals) = self.owners.get(owner) else {
                return;
            };
            if totals.count <= self.bounds.tasks && totals.bytes <= self.bounds.bytes {
                return;
            }
            // `keep` is one task: at most one is passed over.
            let oldest = totals.finished.values().find(|id| *id != keep).cloned();
            #[cfg(test)]
            {
                self.counts.looked_at += 1;
                self.counts.forgotten += u64::from(oldest.is_some());
            }
            let Some(oldest) = oldest else { return };
            if let Some(entry) = self.remove(&oldest) {
                // A waiter on it finds it gone.
                entry.changed.notify_waiters();
            }
        }
    }

    /// Drops the tasks expired at `now`, the first to expire first.
    fn drop_expired(&mut self, now: u64) {
        while let Some((expiry, id)) = self.expiries.first().cloned() {
            if expiry > now {
                return;
            }
            #[cfg(test)]
            {
                self.counts.looked_at += 1;
                self.counts.dropped += 1;
            }
            self.remove(&id);
        }
    }
}

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
                .map(|e| &e.task)
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
            tasks.drop_expired(now);
            let (id, owner) = (task.task_id.clone(), task.owner.clone());
            tasks.insert(task);
            tasks.make_room(&owner, &id);
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
        let outcome = self.with_tasks(|tasks| tasks.update(task_id, change, now));
        let task = outcome.map(|(task, changed)| {
            if let Some(changed) = changed {
                changed.notify_waiters();
            }
            task
        });
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
                self.with_tasks(|tasks| tasks.live.get(task_id).map(|e| Arc::clone(&e.changed)))
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

    fn owned(id: &str, owner: Option<&str>) -> StoredTask {
        StoredTask::new(
            id.into(),
            owner.map(str::to_owned),
            None,
            Duration::from_millis(100),
        )
    }

    impl Tasks {
        /// Each owner's totals, counted again from every task.
        fn recounted(&self) -> HashMap<Option<String>, Totals> {
            let mut owners: HashMap<Option<String>, Totals> = HashMap::new();
            for (id, entry) in &self.live {
                assert_eq!(entry.bytes, bytes_of(&entry.task), "{id}");
                let totals = owners.entry(entry.task.owner.clone()).or_default();
                totals.count += 1;
                totals.bytes += entry.bytes;
                if entry.task.status.is_final() {
                    totals.finished.insert(entry.order, id.clone());
                }
            }
            owners
        }

        /// The kept totals and expiry order are what counting every task again gives.
        fn check(&self) {
            assert_eq!(self.owners, self.recounted());
            let expiries: BTreeSet<(u64, String)> = self
                .live
                .iter()
                .filter_map(|(id, e)| Some((expiry_of(&e.task)?, id.clone())))
                .collect();
            assert_eq!(self.expiries, expiries);
        }
    }

    /// xorshift64: the same run every time, without a dependency.
    struct Dice(u64);

    impl Dice {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[tokio::test]
    async fn owners_totals_stay_what_a_recount_gives_through_every_kind_of_change() {
        let store = InMemoryTaskStore::default();
        // Small bounds, so that tasks are often forgotten past each of them.
        store.with_tasks(|tasks| {
            tasks.bounds = Bounds {
                tasks: 12,
                bytes: 6_000,
            }
        });
        let owners = [None, Some("ada"), Some("bob"), Some("eve")];
        let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
        for n in 0..3_000u64 {
            let id = format!("t{}", dice.below(200));
            let owner = owners[dice.below(4) as usize];
            match dice.below(9) {
                // A new task, or one created again under an id already kept.
                0..=2 => {
                    let mut task = owned(&id, owner);
                    if dice.below(4) == 0 {
                        // Already expired: the next creation drops it.
                        task.ttl_ms = Some(1);
                        task.created_at_ms -= 10;
                    } else if dice.below(3) == 0 {
                        task.ttl_ms = Some(3_600_000);
                    }
                    store.create(task).await.unwrap();
                }
                3 => {
                    let size = dice.below(3_000) as usize;
                    let result = json!({"content": [{"type": "text", "text": "r".repeat(size)}]});
                    store
                        .update(&id, TaskChange::Complete(result))
                        .await
                        .unwrap();
                }
                4 => {
                    store.update(&id, TaskChange::Cancel).await.unwrap();
                }
                5 => {
                    let error = json!({"code": -32603, "message": "x".repeat(100)});
                    let fail = TaskChange::Fail {
                        error,
                        message: "boom".into(),
                    };
                    store.update(&id, fail).await.unwrap();
                }
                6 => {
                    let key = format!("k{n}");
                    let request = json!({"method": "elicitation/create", "params": {"n": n}});
                    store
                        .update(&id, TaskChange::Ask { key, request })
                        .await
                        .unwrap();
                }
                7 => {
                    let answers = store.with_tasks(|tasks| {
                        tasks.live.get(&id).map(|e| e.task.input_requests.clone())
                    });
                    let answers = answers.unwrap_or_default().into_iter();
                    let answers = answers
                        .map(|(k, _)| (k, json!({"action": "accept"})))
                        .collect();
                    store
                        .update(&id, TaskChange::Answer(answers))
                        .await
                        .unwrap();
                }
                _ => {
                    let key = store.with_tasks(|tasks| {
                        tasks
                            .live
                            .get(&id)
                            .and_then(|e| e.task.answers.keys().next().cloned())
                    });
                    if let Some(key) = key {
                        store.update(&id, TaskChange::Take(key)).await.unwrap();
                    }
                }
            }
            store.with_tasks(|tasks| tasks.check());
        }
        let counts = store.with_tasks(|tasks| std::mem::take(&mut tasks.counts));
        assert!(counts.forgotten > 100 && counts.dropped > 100, "{counts:?}");
    }

    #[tokio::test]
    async fn a_change_among_a_hundred_thousand_tasks_looks_at_a_few_of_them() {
        // Counting each owner's tasks among all of them at every change took some 10^10
        // steps for 100,000 tasks. Now a change looks only at the tasks it forgets or drops,
        // and at most one it keeps.
        let store = InMemoryTaskStore::default();
        let owners: Vec<String> = (0..50).map(|n| format!("owner-{n}")).collect();
        let mut changes = 0u64;
        for n in 0..100_000 {
            let owner = owners[n % owners.len()].as_str();
            let id = format!("t{n}");
            let mut task = owned(&id, Some(owner));
            // Every owner's seventh task or so (7 is prime to 50) has already expired.
            if n % 7 == 0 {
                task.ttl_ms = Some(1);
                task.created_at_ms -= 10;
            }
            store.create(task).await.unwrap();
            store.update(&id, TaskChange::Cancel).await.unwrap();
            changes += 2;
            let looked_at = store.with_tasks(|tasks| tasks.counts.looked_at);
            assert!(
                looked_at <= 2 * changes,
                "{looked_at} tasks looked at for {changes} changes"
            );
        }
        store.with_tasks(|tasks| {
            tasks.check();
            // Some 1,700 tasks an owner that do not expire, 1,024 kept (one fewer when the
            // owner's last had expired).
            assert_eq!(tasks.owners.len(), owners.len());
            for totals in tasks.owners.values() {
                assert!((MAX_TASKS_PER_OWNER - 1..=MAX_TASKS_PER_OWNER).contains(&totals.count));
            }
            assert!(tasks.counts.forgotten > 30_000, "{:?}", tasks.counts);
        });
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
                .filter(|e| e.task.owner.as_deref() == Some("ada"))
                .map(|e| e.bytes)
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
