//! How a server keeps its tasks (store, time to live, poll interval), and how many it runs:
//! a task outlives the request that made it, so it is counted on its own.

use std::sync::Arc;
use std::time::Duration;

use super::TaskStore;
use crate::protocol::{RpcError, code};
use crate::quota::{Full, Held, Quota};

/// How tasks are kept and described.
#[derive(Clone)]
pub(crate) struct TaskSettings {
    pub store: Arc<dyn TaskStore>,
    pub ttl: Option<Duration>,
    pub poll_interval: Duration,
    /// The tasks this process runs, by owner.
    pub running: Quota<Option<String>>,
}

/// The most tasks this process runs at once: a task outlives the request that made it, so
/// no limit on requests in flight bounds it.
pub const MAX_RUNNING_TASKS: usize = 1024;

/// The most tasks one caller (a token's subject; every anonymous caller together) runs at
/// once.
pub const MAX_RUNNING_TASKS_PER_OWNER: usize = 64;

/// A running task's place in the counts, given back when the task ends.
pub(crate) type Running = Held<Option<String>>;

/// The counts of running tasks, by owner (a token's subject; `None` for every anonymous
/// caller together).
pub(crate) fn running_tasks() -> Quota<Option<String>> {
    Quota::new(MAX_RUNNING_TASKS_PER_OWNER, MAX_RUNNING_TASKS)
}

/// Counts a task of `owner` as running, or refuses it when the owner or the process runs
/// as many as it may.
pub(crate) fn start_task(
    running: &Quota<Option<String>>,
    owner: Option<String>,
) -> Result<Running, RpcError> {
    running.take(owner).map_err(|Full { held, total }| {
        RpcError::new(
            code::SERVER_BUSY,
            format!(
                "too many tasks running ({held} for this caller, {MAX_RUNNING_TASKS_PER_OWNER} \
                 at most; {total} in all, {MAX_RUNNING_TASKS} at most): wait for one to \
                 finish or cancel one"
            ),
        )
    })
}
