//! How a server keeps its tasks (store, time to live, poll interval), and how many it runs:
//! a task outlives the request that made it, so it is counted on its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::TaskStore;
use crate::protocol::{RpcError, code};

/// How tasks are kept and described.
#[derive(Clone)]
pub(crate) struct TaskSettings {
    pub store: Arc<dyn TaskStore>,
    pub ttl: Option<Duration>,
    pub poll_interval: Duration,
    /// The tasks this process runs, by owner.
    pub running: Arc<Mutex<HashMap<Option<String>, usize>>>,
}

/// The most tasks this process runs at once: a task outlives the request that made it, so
/// no limit on requests in flight bounds it.
pub const MAX_RUNNING_TASKS: usize = 1024;

/// The most tasks one caller (a token's subject; every anonymous caller together) runs at
/// once.
pub const MAX_RUNNING_TASKS_PER_OWNER: usize = 64;

/// A running task's place in the counts, given back when the task ends.
pub(crate) struct Running {
    counts: Arc<Mutex<HashMap<Option<String>, usize>>>,
    owner: Option<String>,
}

impl Running {
    pub(crate) fn start(
        counts: &Arc<Mutex<HashMap<Option<String>, usize>>>,
        owner: Option<String>,
    ) -> Result<Running, RpcError> {
        let mut map = counts.lock().unwrap_or_else(|p| p.into_inner());
        let total: usize = map.values().sum();
        let mine = map.get(&owner).copied().unwrap_or(0);
        if total >= MAX_RUNNING_TASKS || mine >= MAX_RUNNING_TASKS_PER_OWNER {
            return Err(RpcError::new(
                code::SERVER_BUSY,
                format!(
                    "too many tasks running ({} for this caller, {MAX_RUNNING_TASKS_PER_OWNER} \
                     at most; {total} in all, {MAX_RUNNING_TASKS} at most): wait for one to \
                     finish or cancel one",
                    mine
                ),
            ));
        }
        *map.entry(owner.clone()).or_insert(0) += 1;
        Ok(Running {
            counts: Arc::clone(counts),
            owner,
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut map = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = map.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.owner);
            }
        }
    }
}
