//! The open `subscriptions/listen` requests (2026-07-28) of a server, and what each follows:
//! the state the notifications of changes are delivered to.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::protocol::{ListKind, RequestId, notification_frame};
use crate::session::Outbound;

/// The `_meta` key naming the subscription a message belongs to.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// One open `subscriptions/listen` request.
pub(crate) struct Listener {
    pub(super) id: RequestId,
    pub(super) lists: [bool; 3],
    pub(super) resources: HashSet<String>,
    /// The tasks followed, with the version of each last sent: the states of a task are
    /// announced from several tasks at once, and one overtaken by a later one is not sent.
    pub(super) tasks: std::sync::Mutex<std::collections::HashMap<String, Option<u64>>>,
    /// Who opened it (a token's subject; `None` when anonymous): a task's states go only to
    /// a listener of the caller that created it, as `tasks/get` shows it only to them.
    pub(super) owner: Option<String>,
    pub(super) out: Outbound,
}

impl Listener {
    pub(super) fn tag(&self) -> Value {
        json!({ SUBSCRIPTION_ID: self.id })
    }

    /// Sends a notification on this subscription, tagged with its id.
    pub(super) fn send(&self, method: &str, mut params: Value) {
        if let Some(obj) = params.as_object_mut() {
            obj.insert("_meta".into(), self.tag());
        }
        self.out.notify(notification_frame(method, &params));
    }

    pub(crate) fn follows_list(&self, kind: ListKind) -> bool {
        self.lists[kind as usize]
    }

    pub(crate) fn follows_resource(&self, uri: &str) -> bool {
        self.resources.contains(uri)
    }

    /// Whether to send this version of a task: one of its owner's that it follows, newer
    /// than the last sent.
    fn takes_task(&self, task_id: &str, owner: Option<&str>, version: u64) -> bool {
        if self.owner.as_deref() != owner {
            return false;
        }
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        match tasks.get_mut(task_id) {
            Some(last) if last.is_none_or(|v| v < version) => {
                *last = Some(version);
                true
            }
            _ => false,
        }
    }
}

/// The open subscriptions of a server.
#[derive(Default)]
pub(crate) struct Listeners {
    open: std::sync::Mutex<Vec<Weak<Listener>>>,
}

impl Listeners {
    pub(super) fn add(&self, listener: &Arc<Listener>) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|l| l.strong_count() > 0);
        open.push(Arc::downgrade(listener));
    }

    fn live(&self) -> Vec<Arc<Listener>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|l| l.strong_count() > 0);
        open.iter().filter_map(Weak::upgrade).collect()
    }

    /// Tells every listener following `kind` that the list changed.
    pub(crate) fn list_changed(&self, kind: ListKind) {
        let method = kind.notification();
        for listener in self.live().iter().filter(|l| l.follows_list(kind)) {
            listener.send(method, json!({}));
        }
    }

    /// Tells every listener that each resource it follows may have changed.
    pub(crate) fn retell_followed_resources(&self) {
        for listener in self.live() {
            for uri in &listener.resources {
                listener.send("notifications/resources/updated", json!({ "uri": uri }));
            }
        }
    }

    /// The tasks some listener follows, each once.
    pub(crate) fn followed_tasks(&self) -> HashSet<String> {
        let mut followed = HashSet::new();
        for listener in self.live() {
            let tasks = listener.tasks.lock().unwrap_or_else(|p| p.into_inner());
            followed.extend(tasks.keys().cloned());
        }
        followed
    }

    /// Tells every listener following `uri` that the resource changed.
    pub(crate) fn resource_updated(&self, uri: &str) {
        for listener in self.live().iter().filter(|l| l.follows_resource(uri)) {
            listener.send("notifications/resources/updated", json!({ "uri": uri }));
        }
    }

    /// Sends a task's state to every listener of its owner following it, unless a later
    /// state of it was sent already.
    pub(crate) fn task_changed(
        &self,
        task_id: &str,
        owner: Option<&str>,
        version: u64,
        task: &Value,
    ) {
        for listener in self
            .live()
            .iter()
            .filter(|l| l.takes_task(task_id, owner, version))
        {
            listener.send("notifications/tasks", task.clone());
        }
    }
}
