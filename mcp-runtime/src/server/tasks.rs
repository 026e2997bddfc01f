//! The tasks extension on the server side: when a tool call becomes a task, the task's
//! runner, and `tasks/get`, `tasks/update` and `tasks/cancel`.
//!
//! A call to a tool with task support, from a stateless request that declares the extension,
//! carries a [`TaskSlot`]. The handler is polled in the request as usual; when it finishes
//! without waiting it is answered directly. The first time it waits, the task is stored, the
//! request is answered with a `CreateTaskResult`, and the same future goes on in a runner of
//! its own, whose outcome the store keeps. Requests to the client from then on become the
//! task's `inputRequests`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Server;
use super::request::{Request, Routed};
use crate::protocol::{Method, RequestId, RpcError, code, response_frame};
use crate::session::Session;
use crate::session::{CallTask, ClientError, TaskSlot};
use crate::tasks::{Running, StoredTask, TaskChange, TaskSupport, start_task};

/// Where a client declares the extension in its capabilities.
pub(crate) const CLIENT_CAPABILITY: [&str; 2] = ["extensions", EXTENSION];

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How long a handler waiting for the client's answer looks at the store again, for stores
/// that cannot notify.
const ANSWER_POLL: Duration = Duration::from_secs(5);

/// The `MissingRequiredClientCapabilityError` naming the extension.
pub(crate) fn missing_extension(message: &str) -> RpcError {
    RpcError::new(code::MISSING_CLIENT_CAPABILITY, message).with_data(json!({
        "requiredCapabilities": { "extensions": { EXTENSION: {} } }
    }))
}

/// The task a call became, as its handler sees it.
struct TaskHandle {
    id: String,
    server: Server,
}

impl CallTask for TaskHandle {
    fn id(&self) -> &str {
        &self.id
    }

    fn ask(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ClientError>> + Send + '_>> {
        Box::pin(self.ask_client(key, method, params))
    }
}

impl TaskHandle {
    async fn ask_client(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> Result<Value, ClientError> {
        let store = &self.server.inner.tasks.store;
        let request = json!({ "method": method, "params": params });
        let asked = store
            .update(
                &self.id,
                TaskChange::Ask {
                    key: key.clone(),
                    request,
                },
            )
            .await
            .map_err(|_| ClientError::Disconnected)?;
        let Some(mut task) = asked else {
            return Err(ClientError::Disconnected);
        };
        self.server.announce_task(&task);
        loop {
            if let Some(answer) = task.answers.get(&key).cloned() {
                if let Ok(Some(after)) = store.update(&self.id, TaskChange::Take(key)).await {
                    self.server.announce_task(&after);
                }
                return Ok(answer);
            }
            if task.status.is_final() {
                return Err(ClientError::Disconnected);
            }
            store.changed(&self.id, task.version, ANSWER_POLL).await;
            task = match store.get(&self.id).await {
                Ok(Some(task)) => task,
                _ => return Err(ClientError::Disconnected),
            };
        }
    }
}

/// A random task id: 128 bits as hex, safe in an `Mcp-Name` header.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS generator: time and address bits, hashed, are still unguessable enough not
        // to collide, and ownership is checked on every request anyway.
        use sha2::Digest;
        let seed = format!("{:p}{:?}", &bytes, std::time::SystemTime::now());
        bytes.copy_from_slice(&sha2::Sha256::digest(seed.as_bytes())[..16]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Deserialize)]
struct TaskParams {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Map<String, Value>>,
}

/// `CreateTaskResult`: the task's fields with `resultType: "task"`.
fn create_task_result(task: &StoredTask) -> String {
    let mut result = Map::new();
    result.insert("resultType".into(), "task".into());
    result.extend(task.to_wire());
    Value::Object(result).to_string()
}

impl Server {
    /// Whether a tool call may become a task: `Some(slot)` when it may, `None` when it runs
    /// as an ordinary call, an error when the tool needs tasks and the client lacks them.
    pub(crate) fn task_slot(
        &self,
        support: TaskSupport,
        session: &Session,
        stateless: bool,
    ) -> Result<Option<Arc<TaskSlot>>, RpcError> {
        if support == TaskSupport::Never || !stateless {
            // The handshake era has no tasks: the call is served directly.
            return Ok(None);
        }
        if session.client_supports(&CLIENT_CAPABILITY) {
            return Ok(Some(Arc::default()));
        }
        match support {
            TaskSupport::Required => Err(missing_extension(
                "this tool runs only as a task: declare the tasks extension in the request's client capabilities",
            )),
            _ => Ok(None),
        }
    }

    /// Stores a new task for a call whose handler started to wait.
    pub(crate) async fn create_task(
        &self,
        slot: &TaskSlot,
        owner: Option<String>,
    ) -> Result<(StoredTask, Running), RpcError> {
        let settings = &self.inner.tasks;
        let running = start_task(&settings.running, owner.clone())?;
        let task = StoredTask::new(new_task_id(), owner, settings.ttl, settings.poll_interval);
        settings
            .store
            .create(task.clone())
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?;
        slot.become_task(Arc::new(TaskHandle {
            id: task.task_id.clone(),
            server: self.clone(),
        }));
        Ok((task, running))
    }

    /// Runs a call that became a task to its end, unless the client cancels it first.
    pub(crate) fn run_task(
        &self,
        task_id: String,
        running: Running,
        cancel: tokio_util::sync::CancellationToken,
        finish: std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<String, RpcError>> + Send>,
        >,
    ) {
        let server = self.clone();
        tokio::spawn(async move {
            let _running = running;
            let store = Arc::clone(&server.inner.tasks.store);
            let cancelled = async {
                let mut seen = 0;
                loop {
                    match store.get(&task_id).await {
                        Ok(Some(task)) if !task.status.is_final() => seen = task.version,
                        Ok(_) => return,
                        Err(e) => tracing::warn!(%e, task_id, "cannot read a task"),
                    }
                    store.changed(&task_id, seen, ANSWER_POLL).await;
                }
            };
            let change = tokio::select! {
                outcome = finish => match outcome {
                    Ok(result) => TaskChange::Complete(
                        serde_json::from_str(&result).unwrap_or_default(),
                    ),
                    Err(error) => TaskChange::Fail {
                        message: error.message.clone(),
                        error: serde_json::to_value(&error).unwrap_or_default(),
                    },
                },
                () = cancelled => {
                    // Cancelled (or gone): the handler is dropped here, after it is told.
                    cancel.cancel();
                    return;
                }
            };
            match store.update(&task_id, change).await {
                Ok(Some(task)) => server.announce_task(&task),
                Ok(None) => {}
                Err(e) => tracing::warn!(%e, task_id, "cannot store a task's outcome"),
            }
        });
    }

    /// The `CreateTaskResult` frame of a new task.
    pub(crate) fn task_created(&self, id: &RequestId, task: &StoredTask) -> Vec<u8> {
        self.announce_task(task);
        response_frame(id, &create_task_result(task))
    }

    /// Tells the listeners following a task its new state (`notifications/tasks`), here and
    /// on every other replica.
    fn announce_task(&self, task: &StoredTask) {
        self.deliver_task_changed(task);
        self.publish(crate::cluster::ClusterEvent::TaskChanged { task: task.clone() });
    }

    /// Tells this process's listeners following a task its new state.
    pub(crate) fn deliver_task_changed(&self, task: &StoredTask) {
        self.inner.listeners.task_changed(
            &task.task_id,
            task.owner.as_deref(),
            task.version,
            &Value::Object(task.to_wire()),
        );
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(super) fn task_request(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let method = req.method;
        if !req.session.client_supports(&CLIENT_CAPABILITY) {
            return Err(missing_extension(&format!(
                "`{}` needs the client to declare the tasks extension",
                method.name()
            )));
        }
        let caller = req.channel.auth.as_ref().map(|a| a.subject.clone());
        let p: TaskParams = req.params()?;
        let server = self.clone();
        Ok(req.answer_later(
            async move {
                let store = &server.inner.tasks.store;
                let not_found = || {
                    RpcError::invalid_params(format!(
                        "Failed to retrieve task: no task `{}` (unknown, expired, or not yours)",
                        p.task_id
                    ))
                };
                // A task is only ever shown to the caller that created it.
                let found = store
                    .get(&p.task_id)
                    .await
                    .map_err(|e| RpcError::internal(e.to_string()))?
                    .filter(|t| t.owner == caller)
                    .ok_or_else(not_found)?;
                let change = match method {
                    Method::TasksGet => return Ok(Value::Object(found.to_wire()).to_string()),
                    Method::TasksUpdate => {
                        TaskChange::Answer(p.input_responses.unwrap_or_default())
                    }
                    _ => TaskChange::Cancel,
                };
                let before = found.version;
                let after = store
                    .update(&p.task_id, change)
                    .await
                    .map_err(|e| RpcError::internal(e.to_string()))?
                    .ok_or_else(not_found)?;
                if after.version != before {
                    server.announce_task(&after);
                }
                Ok("{}".to_owned())
            },
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_random_hex() {
        let (a, b) = (new_task_id(), new_task_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn a_created_task_says_so_and_carries_no_payload() {
        let task = StoredTask::new("t".into(), None, None, Duration::from_millis(500));
        let result: Value = serde_json::from_str(&create_task_result(&task)).unwrap();
        assert_eq!(result["resultType"], "task");
        assert_eq!(result["status"], "working");
        assert!(result["ttlMs"].is_null());
        for absent in ["result", "error", "inputRequests", "requestState"] {
            assert!(result.get(absent).is_none(), "{absent}");
        }
    }
}
