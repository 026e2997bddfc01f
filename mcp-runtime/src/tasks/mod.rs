//! The tasks extension (`io.modelcontextprotocol/tasks`, with protocol revision 2026-07-28):
//! a long-running tool call answers at once with a task handle, and the client polls
//! `tasks/get` for its status, answers its questions with `tasks/update`, and may end it with
//! `tasks/cancel`.
//!
//! A tool opts in with `#[tool(task)]` (the client may get a task) or
//! `#[tool(task = "required")]` (the tool is only served as a task). The call becomes a task
//! the first time its handler has to wait — or when it calls
//! [`Context::continue_as_task`](crate::Context::continue_as_task) — so a handler that
//! finishes at once, or that still needs the client's input (a multi round-trip request), is
//! answered directly. From then on `ctx.elicit(…)`, `ctx.sample(…)` and `ctx.roots()` put the
//! task in `input_required` and wait for the client's `tasks/update`.
//!
//! ```
//! use std::time::Duration;
//! use mcp_runtime::prelude::*;
//!
//! /// Build the project (takes minutes).
//! #[tool(task)]
//! async fn build(target: String) -> String {
//!     mcp_runtime::tokio::time::sleep(Duration::from_millis(10)).await;
//!     format!("built {target}")
//! }
//! # fn main() {}
//! ```
//!
//! Tasks are kept in a [`TaskStore`]: [`InMemoryTaskStore`] by default, which serves one
//! process; implement the trait over shared storage to let any replica report or cancel any
//! task.

mod memory;
mod running;
mod time;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use memory::InMemoryTaskStore;
pub use running::{MAX_RUNNING_TASKS, MAX_RUNNING_TASKS_PER_OWNER};
pub(crate) use running::{Running, TaskSettings, running_tasks, start_task};
pub(crate) use time::{iso8601, now_ms};

/// Whether a tool may run as a task (`#[tool(task)]`, `#[tool(task = "required")]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Always answered directly (the default).
    #[default]
    Never,
    /// A task for clients that declare the extension; answered directly for the others.
    Optional,
    /// Only a task: clients that do not declare the extension are refused with
    /// `MissingRequiredClientCapabilityError` (-32021).
    Required,
}

/// Where a task is in its life. `completed`, `failed` and `cancelled` are final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client to answer the task's `inputRequests`.
    InputRequired,
    /// Finished with a result (a tool error too: `isError` is part of the result).
    Completed,
    /// Ended by a JSON-RPC error.
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskStatus {
    /// Whether the status never changes again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// One task as a [`TaskStore`] keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredTask {
    /// The task's id: random, unguessable, safe in an HTTP header.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A message about the status, for people.
    pub status_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub updated_at_ms: u64,
    /// How long it is kept after creation; `None` for as long as the store lasts.
    pub ttl_ms: Option<u64>,
    /// How often the client is asked to poll.
    pub poll_interval_ms: u64,
    /// The caller that created it (its authenticated subject), the only one who may see it.
    pub owner: Option<String>,
    /// The requests to the client still unanswered, by key.
    pub input_requests: Map<String, Value>,
    /// The client's answers not yet taken by the handler, by key.
    pub answers: Map<String, Value>,
    /// Every key ever issued, so none is reused.
    pub issued: u64,
    /// The result, once completed.
    pub result: Option<Value>,
    /// The JSON-RPC error, once failed.
    pub error: Option<Value>,
    /// Incremented by every change, so a waiter can tell that something changed.
    pub version: u64,
}

/// A change to a task, applied atomically by [`TaskStore::update`] with
/// [`StoredTask::apply`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskChange {
    /// The handler asks the client: adds an input request; the task is `input_required`.
    Ask {
        /// The request's key (unique over the task's life).
        key: String,
        /// The request: `{"method": …, "params": …}`.
        request: Value,
    },
    /// The client answers (`tasks/update`): answers to outstanding keys are kept, others are
    /// ignored; the task works again once nothing is outstanding.
    Answer(Map<String, Value>),
    /// The handler took the answer to a key.
    Take(String),
    /// The handler finished with a result.
    Complete(Value),
    /// The handler failed with a JSON-RPC error.
    Fail {
        /// The error object.
        error: Value,
        /// What went wrong, for people.
        message: String,
    },
    /// The client cancelled it.
    Cancel,
}

impl StoredTask {
    /// A new working task.
    pub fn new(
        task_id: String,
        owner: Option<String>,
        ttl: Option<Duration>,
        poll: Duration,
    ) -> Self {
        let now = now_ms();
        StoredTask {
            task_id,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: ttl.map(|t| t.as_millis() as u64),
            poll_interval_ms: poll.as_millis() as u64,
            owner,
            input_requests: Map::new(),
            answers: Map::new(),
            issued: 0,
            result: None,
            error: None,
            version: 0,
        }
    }

    /// Whether the task outlived its time to live at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| now_ms >= self.created_at_ms.saturating_add(ttl))
    }

    /// Applies a change; false when it changed nothing (a final task stays as it is).
    pub fn apply(&mut self, change: TaskChange) -> bool {
        if self.status.is_final() {
            return false;
        }
        match change {
            TaskChange::Ask { key, request } => {
                self.issued += 1;
                self.input_requests.insert(key, request);
                self.status = TaskStatus::InputRequired;
            }
            TaskChange::Answer(responses) => {
                let mut any = false;
                for (key, answer) in responses {
                    if self.input_requests.remove(&key).is_some() {
                        self.answers.insert(key, answer);
                        any = true;
                    }
                }
                if !any {
                    return false;
                }
                if self.input_requests.is_empty() {
                    self.status = TaskStatus::Working;
                }
            }
            TaskChange::Take(key) => {
                if self.answers.remove(&key).is_none() {
                    return false;
                }
            }
            TaskChange::Complete(result) => {
                self.status = TaskStatus::Completed;
                self.result = Some(result);
                self.input_requests.clear();
            }
            TaskChange::Fail { error, message } => {
                self.status = TaskStatus::Failed;
                self.status_message = Some(message);
                self.error = Some(error);
                self.input_requests.clear();
            }
            TaskChange::Cancel => {
                self.status = TaskStatus::Cancelled;
                self.status_message = Some("cancelled by the client".into());
                self.input_requests.clear();
            }
        }
        self.updated_at_ms = now_ms().max(self.updated_at_ms);
        self.version += 1;
        true
    }

    /// The task as the wire shows it (`DetailedTask`): its fields, and `inputRequests`,
    /// `result` or `error` as its status has them.
    pub fn to_wire(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), self.task_id.clone().into());
        task.insert(
            "status".into(),
            serde_json::to_value(self.status).unwrap_or_default(),
        );
        if let Some(message) = &self.status_message {
            task.insert("statusMessage".into(), message.clone().into());
        }
        task.insert("createdAt".into(), iso8601(self.created_at_ms).into());
        task.insert("lastUpdatedAt".into(), iso8601(self.updated_at_ms).into());
        task.insert("ttlMs".into(), self.ttl_ms.map_or(Value::Null, Value::from));
        task.insert("pollIntervalMs".into(), self.poll_interval_ms.into());
        match self.status {
            TaskStatus::InputRequired => {
                task.insert(
                    "inputRequests".into(),
                    Value::Object(self.input_requests.clone()),
                );
            }
            TaskStatus::Completed => {
                task.insert("result".into(), self.result.clone().unwrap_or_default());
            }
            TaskStatus::Failed => {
                task.insert("error".into(), self.error.clone().unwrap_or_default());
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        task
    }
}

/// Why a [`TaskStore`] could not do what it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStoreError(pub String);

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the task store failed: {}", self.0)
    }
}

impl std::error::Error for TaskStoreError {}

/// The future a [`TaskStore`] method returns.
pub type TaskStoreFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// Where tasks are kept. Every method may be called from any replica.
///
/// An implementation over shared storage applies [`StoredTask::apply`] inside whatever
/// atomic read-modify-write the storage offers, so that the client's answers, its
/// cancellation and the handler's progress never overwrite each other.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. Once this completes, [`TaskStore::get`] finds it everywhere: the
    /// client is told of the task only then.
    fn create(&self, task: StoredTask) -> TaskStoreFuture<'_, ()>;

    /// The task with this id, unless it is unknown or expired.
    fn get<'a>(&'a self, task_id: &'a str) -> TaskStoreFuture<'a, Option<StoredTask>>;

    /// Applies a change atomically and returns the task as it is after it (`None` for an
    /// unknown or expired task).
    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> TaskStoreFuture<'a, Option<StoredTask>>;

    /// Completes once the task's `version` is past `seen` or the task is gone — or, at the
    /// latest, after `timeout` (a store that cannot notify may simply wait that long).
    fn changed<'a>(
        &'a self,
        task_id: &'a str,
        seen: u64,
        timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task() -> StoredTask {
        StoredTask::new(
            "t".into(),
            None,
            Some(Duration::from_secs(60)),
            Duration::from_millis(500),
        )
    }

    #[test]
    fn answers_to_outstanding_keys_resume_the_task_and_others_are_ignored() {
        let mut t = task();
        t.apply(TaskChange::Ask {
            key: "a".into(),
            request: json!({"method": "x"}),
        });
        t.apply(TaskChange::Ask {
            key: "b".into(),
            request: json!({"method": "y"}),
        });
        assert_eq!(t.status, TaskStatus::InputRequired);
        let mut answers = Map::new();
        answers.insert("zzz".into(), json!({"ignored": true}));
        assert!(
            !t.apply(TaskChange::Answer(answers)),
            "an unknown key changes nothing"
        );
        let mut answers = Map::new();
        answers.insert("a".into(), json!({"action": "accept"}));
        assert!(t.apply(TaskChange::Answer(answers)));
        assert_eq!(
            t.status,
            TaskStatus::InputRequired,
            "b is still outstanding"
        );
        assert!(t.input_requests.contains_key("b") && !t.input_requests.contains_key("a"));
        let mut answers = Map::new();
        answers.insert("b".into(), json!({"action": "decline"}));
        t.apply(TaskChange::Answer(answers));
        assert_eq!(t.status, TaskStatus::Working);
        assert_eq!(t.answers.len(), 2);
    }

    #[test]
    fn a_final_status_never_changes() {
        let mut t = task();
        assert!(t.apply(TaskChange::Cancel));
        assert!(!t.apply(TaskChange::Complete(json!({"content": []}))));
        assert_eq!(t.status, TaskStatus::Cancelled);
        assert!(t.result.is_none());
    }

    #[test]
    fn the_wire_form_carries_what_the_status_has() {
        let mut t = task();
        let wire = t.to_wire();
        assert_eq!(wire["status"], "working");
        assert_eq!(wire["ttlMs"], 60_000);
        assert!(!wire.contains_key("result") && !wire.contains_key("inputRequests"));
        assert!(wire["createdAt"].as_str().unwrap().ends_with('Z'));
        t.apply(TaskChange::Fail {
            error: json!({"code": -32603, "message": "boom"}),
            message: "boom".into(),
        });
        let wire = t.to_wire();
        assert_eq!(wire["status"], "failed");
        assert_eq!(wire["error"]["code"], -32603);
        assert!(!wire.contains_key("result"));
    }
}
