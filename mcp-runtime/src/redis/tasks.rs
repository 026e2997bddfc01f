//! Tasks in Redis: one key each, holding the task as JSON; changes are compare-and-set, so
//! the client's answers, its cancellation and the handler's progress never overwrite each
//! other, whichever replica makes them.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use redis::aio::ConnectionManager;
use tokio::sync::Notify;

use crate::tasks::{StoredTask, TaskChange, TaskStore, TaskStoreError, TaskStoreFuture, now_ms};

/// How long a task without a time to live is kept.
const UNLIMITED: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// How often a waiter looks for a change another replica made.
const POLL: Duration = Duration::from_millis(100);

/// Replaces a task only if it is still what it was read as.
const SWAP: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
";

/// A [`TaskStore`] in Redis.
pub struct RedisTaskStore {
    connection: ConnectionManager,
    prefix: String,
    swap: redis::Script,
    /// Wakes this process's waiters at once when this process changes a task.
    changed: Notify,
}

impl RedisTaskStore {
    pub(super) fn new(connection: ConnectionManager, prefix: String) -> Self {
        RedisTaskStore {
            connection,
            prefix,
            swap: redis::Script::new(SWAP),
            changed: Notify::new(),
        }
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    async fn read(&self, id: &str) -> Result<Option<(String, StoredTask)>, TaskStoreError> {
        let get = redis::cmd("GET").arg(self.key(id)).clone();
        let json: Option<String> =
            retried!(self.connection, |c| get.query_async(&mut c)).map_err(fail)?;
        Ok(json.and_then(|j| {
            let task: StoredTask = serde_json::from_str(&j).ok()?;
            (!task.expired(now_ms())).then_some((j, task))
        }))
    }
}

fn fail(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError(format!("Redis: {e}"))
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: StoredTask) -> TaskStoreFuture<'_, ()> {
        Box::pin(async move {
            let ttl = task.ttl_ms.map_or(UNLIMITED, |ms| {
                Duration::from_millis(ms) + Duration::from_secs(60)
            });
            let json = serde_json::to_string(&task).map_err(|e| TaskStoreError(e.to_string()))?;
            let set = redis::cmd("SET")
                .arg(self.key(&task.task_id))
                .arg(json)
                .arg("EX")
                .arg(ttl.as_secs())
                .clone();
            retried!(self.connection, |c| set.query_async::<()>(&mut c)).map_err(fail)
        })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> TaskStoreFuture<'a, Option<StoredTask>> {
        Box::pin(async move { Ok(self.read(task_id).await?.map(|(_, t)| t)) })
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> TaskStoreFuture<'a, Option<StoredTask>> {
        Box::pin(async move {
            // Read, change, and write back only if nobody wrote in between; else again.
            loop {
                let Some((before, mut task)) = self.read(task_id).await? else {
                    return Ok(None);
                };
                if !task.apply(change.clone()) {
                    return Ok(Some(task));
                }
                let after =
                    serde_json::to_string(&task).map_err(|e| TaskStoreError(e.to_string()))?;
                // Repeating a swap that went through finds the task changed and reads again.
                let mut swap = self.swap.key(self.key(task_id));
                swap.arg(before).arg(after);
                let swapped: i64 =
                    retried!(self.connection, |c| swap.invoke_async(&mut c)).map_err(fail)?;
                if swapped == 1 {
                    self.changed.notify_waiters();
                    return Ok(Some(task));
                }
            }
        })
    }

    fn changed<'a>(
        &'a self,
        task_id: &'a str,
        seen: u64,
        timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let changed = self.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                match self.read(task_id).await {
                    Ok(Some((_, task))) if task.version <= seen => {}
                    _ => return,
                }
                tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep(POLL) => {}
                    () = tokio::time::sleep_until(deadline) => return,
                }
            }
        })
    }
}
