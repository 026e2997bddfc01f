//! The channel one request answers on: where its frames go, and what the transport knows of
//! it beyond its bytes (the caller, its response stream, its stateless round trip, the task
//! it may become).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{ClientError, Outbound, RoundTrip};
use crate::auth::AuthInfo;
use crate::protocol::Frame;

/// Where the frames of one request go (its response stream), and what the transport knows
/// about the request beyond its bytes.
#[derive(Clone)]
pub(crate) struct RequestChannel {
    pub out: Outbound,
    /// The caller's identity, when the transport authenticated it.
    pub auth: Option<Arc<AuthInfo>>,
    /// Control of the response stream, when the transport has one (Streamable HTTP).
    pub stream: Option<Arc<dyn StreamControl>>,
    /// A stateless request's answers from the client, and the input its handler still needs.
    pub round_trip: Option<Arc<RoundTrip>>,
    /// A tool call that may become a task, and the task once it has.
    pub task: Option<Arc<TaskSlot>>,
    /// Fires when the transport closes (stdio input ended, HTTP shutdown): long-lived
    /// requests such as `subscriptions/listen` end then.
    pub closing: CancellationToken,
    /// The transport already knows the request is of the stateless era (its HTTP
    /// `MCP-Protocol-Version` says so): without `_meta` it is refused as such.
    pub stateless_only: bool,
}

impl RequestChannel {
    pub(crate) fn new(out: Outbound) -> Self {
        RequestChannel {
            out,
            auth: None,
            stream: None,
            round_trip: None,
            task: None,
            closing: CancellationToken::new(),
            stateless_only: false,
        }
    }

    pub(crate) fn send(&self, frame: Frame) {
        self.out.send(frame);
    }

    /// Queues a notification of this request (progress, a log message), which a peer that
    /// does not read may lose.
    pub(crate) fn notify(&self, frame: Frame) {
        self.out.notify(frame);
    }
}

/// A transport's response stream, as a handler may steer it.
pub(crate) trait StreamControl: Send + Sync {
    /// Ends the response stream now, asking the client to reconnect after `retry`; the
    /// handler goes on and its later messages wait for the client to resume.
    fn close(&self, retry: Option<std::time::Duration>);
}

/// A call that may become a task (the tasks extension); it holds the task once it has.
#[derive(Default)]
pub(crate) struct TaskSlot {
    task: OnceLock<Arc<dyn CallTask>>,
}

impl TaskSlot {
    /// The task this call became, if it did.
    pub(crate) fn task(&self) -> Option<&Arc<dyn CallTask>> {
        self.task.get()
    }

    /// Records the task this call became (once).
    pub(crate) fn become_task(&self, task: Arc<dyn CallTask>) {
        let _ = self.task.set(task);
    }
}

/// The task a call became, as its handler sees it.
pub(crate) trait CallTask: Send + Sync {
    /// The task's id.
    fn id(&self) -> &str;

    /// Asks the client through the task (`input_required`) and waits for its
    /// `tasks/update`.
    fn ask(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ClientError>> + Send + '_>>;
}
