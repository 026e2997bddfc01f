//! What a handler can do while it runs: report progress, log to the client, notice
//! cancellation, learn about the client, and ask the client for sampling, elicitation and
//! its roots.

mod client;
mod elicitation;
mod roots;
mod sampling;
mod session;

pub use client::ClientError;
pub(crate) use session::notify_lists_changed;
pub use session::{SessionData, SessionError};

/// The message of a progress report ([`Context::progress`]): made from text (`&str`,
/// `String`, `&String`) or an `Option<String>` (`None`: no message).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgressMessage(pub Option<String>);

impl From<&str> for ProgressMessage {
    fn from(text: &str) -> Self {
        ProgressMessage(Some(text.to_owned()))
    }
}

impl From<String> for ProgressMessage {
    fn from(text: String) -> Self {
        ProgressMessage(Some(text))
    }
}

impl From<&String> for ProgressMessage {
    fn from(text: &String) -> Self {
        ProgressMessage(Some(text.clone()))
    }
}

impl From<Option<String>> for ProgressMessage {
    fn from(text: Option<String>) -> Self {
        ProgressMessage(text)
    }
}
pub use elicitation::{Elicitation, ElicitationAction};
pub use sampling::{
    CreateMessageResult, IncludeContext, ModelHint, ModelPreferences, SampleRequest,
    SamplingContent, SamplingMessage, SamplingTool,
};

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::auth::AuthInfo;
use crate::protocol::{
    Implementation, LogLevel, ProgressToken, ProtocolVersion, RequestId,
    messages::{LoggingMessageParams, ProgressParams},
    notification_frame,
};
use crate::server::Server;
use crate::session::{Outbound, RequestChannel, Session};

/// The handle a tool receives when it declares a `Context` parameter.
///
/// A `Context` parameter is recognised by its type and never appears in the tool's schema.
/// It is cheap to clone and may be moved into spawned tasks.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Count to `n`, reporting progress.
/// #[tool]
/// async fn count(ctx: Context, n: u32) -> String {
///     for i in 0..n {
///         if ctx.is_cancelled() {
///             return "cancelled".into();
///         }
///         ctx.progress(f64::from(i + 1), Some(f64::from(n)), None).await;
///     }
///     ctx.info("done counting").await;
///     format!("counted to {n}")
/// }
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<RequestContext>,
}

struct RequestContext {
    server: Option<Server>,
    session: Arc<Session>,
    out: RequestChannel,
    request_id: Option<RequestId>,
    progress_token: Option<ProgressToken>,
    cancel: CancellationToken,
    /// When the call's time limit runs out, if it has one.
    deadline: Option<tokio::time::Instant>,
}

impl Context {
    pub(crate) fn new(
        server: Server,
        session: Arc<Session>,
        out: RequestChannel,
        request_id: RequestId,
        progress_token: Option<ProgressToken>,
        cancel: CancellationToken,
        deadline: Option<tokio::time::Instant>,
    ) -> Context {
        Context {
            inner: Arc::new(RequestContext {
                server: Some(server),
                session,
                out,
                request_id: Some(request_id),
                progress_token,
                cancel,
                deadline,
            }),
        }
    }

    /// Where every future of the runtime's own begins. Once the call is cancelled or past its
    /// time limit it never completes, so the cancellation or the limit — which race the
    /// handler — win at this `.await`; otherwise it spends a unit of the task's scheduling
    /// budget, so a handler that awaits nothing but these (a loop of `ctx.info(…).await`)
    /// still yields to the other requests and to its own timer.
    async fn checkpoint(&self) {
        let past_deadline = self
            .inner
            .deadline
            .is_some_and(|deadline| tokio::time::Instant::now() >= deadline);
        if past_deadline || self.is_cancelled() {
            std::future::pending::<()>().await;
        }
        tokio::task::coop::consume_budget().await;
    }

    /// A context attached to no client, for calling tools directly in unit tests: progress
    /// and log messages go nowhere and it is never cancelled.
    ///
    /// ```
    /// let ctx = mcp_runtime::Context::detached();
    /// assert!(!ctx.is_cancelled());
    /// assert!(ctx.request_id().is_none());
    /// ```
    pub fn detached() -> Context {
        let (out, _) = Outbound::new();
        Context {
            inner: Arc::new(RequestContext {
                server: None,
                session: Arc::new(Session::new(out.clone())),
                out: RequestChannel::new(out),
                request_id: None,
                progress_token: None,
                cancel: CancellationToken::new(),
                deadline: None,
            }),
        }
    }

    /// The server serving this request (none for a detached context): to enable or disable
    /// tools, or to announce that a resource changed.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    ///
    /// /// Unlocks the administrative tools.
    /// #[tool]
    /// fn unlock(ctx: Context) -> &'static str {
    ///     if let Some(server) = ctx.server() {
    ///         server.enable_tool("drop_table");
    ///     }
    ///     "unlocked"
    /// }
    /// # fn main() {}
    /// ```
    pub fn server(&self) -> Option<&Server> {
        self.inner.server.as_ref()
    }

    /// The state value of type `T` the server was given
    /// ([`ServerBuilder::state`](crate::ServerBuilder::state)); what a `State<T>` parameter
    /// receives. `None` for a detached context, or a type the server was not given.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<crate::State<T>> {
        self.server()?.state()
    }

    /// Who is calling, when the transport authenticated the request (see the HTTP
    /// transport's `auth`).
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.inner.out.auth.as_deref()
    }

    /// The HTTP request that carried this message (its headers, method, path and peer
    /// address), over Streamable HTTP; `None` on other transports. See
    /// [`HttpRequest`](crate::http::HttpRequest).
    #[cfg(feature = "http")]
    pub fn http_request(&self) -> Option<&crate::http::HttpRequest> {
        self.inner.out.http.as_deref()
    }

    /// Ends this request's response stream now, when the transport streams responses
    /// (Streamable HTTP); the client reconnects after `retry` and receives the rest of the
    /// handler's messages from where it left off. Does nothing on other transports.
    pub fn close_stream(&self, retry: Option<std::time::Duration>) {
        if let Some(stream) = &self.inner.out.stream {
            stream.close(retry);
        }
    }

    /// The id of the request being served (none for a detached context).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }

    /// The protocol revision negotiated with the client.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner.session.negotiated().map(|n| n.version)
    }

    /// The client's name and version, as it gave them at `initialize`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.session.negotiated().map(|n| &n.client_info)
    }

    /// The capabilities the client declared at `initialize` (`sampling`, `roots`, …).
    pub fn client_capabilities(&self) -> Option<&serde_json::Map<String, Value>> {
        self.inner
            .session
            .negotiated()
            .map(|n| &n.client_capabilities)
    }

    /// The task this call became (the tasks extension), if it did.
    pub(crate) fn task(&self) -> Option<&std::sync::Arc<dyn crate::session::CallTask>> {
        self.inner.out.task.as_ref().and_then(|slot| slot.task())
    }

    /// The id of the task this call became, if it did (see [`crate::tasks`]).
    pub fn task_id(&self) -> Option<&str> {
        self.task().map(|t| t.id())
    }

    /// Makes this call a task now, when it may become one (a `#[tool(task)]` called by a
    /// client that declares the tasks extension): the client gets its task handle at once,
    /// and this handler goes on. Returns whether the call is a task. A call becomes a task
    /// anyway the first time its handler waits; call this first when the handler is about to
    /// ask the client something that should wait in the task rather than end the request.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::{schemars, serde};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// #[serde(crate = "mcp_runtime::serde")]
    /// #[schemars(crate = "mcp_runtime::schemars")]
    /// struct Confirm {
    ///     confirm: bool,
    /// }
    ///
    /// /// Delete a file, after the user confirms.
    /// #[tool(task)]
    /// async fn delete(ctx: Context, path: String) -> Result<String, ToolError> {
    ///     ctx.continue_as_task().await;
    ///     let answer = ctx.elicit::<Confirm>(format!("Delete {path}?")).await?;
    ///     Ok(match answer.accepted() {
    ///         Some(Confirm { confirm: true }) => format!("deleted {path}"),
    ///         _ => "kept".into(),
    ///     })
    /// }
    /// # fn main() {}
    /// ```
    pub async fn continue_as_task(&self) -> bool {
        let Some(slot) = &self.inner.out.task else {
            return false;
        };
        if slot.task().is_none() {
            // Waiting once is what turns the call into a task.
            tokio::task::yield_now().await;
        }
        slot.task().is_some()
    }

    /// Whether the client has cancelled this request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the client cancels this request.
    ///
    /// A cancelled handler is also dropped at its next `.await`, so this is only needed to
    /// clean up or to stop blocking work.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// Reports progress, when the client asked for it with a `progressToken`; otherwise does
    /// nothing. `progress` should increase with each call. The message is any text
    /// (`"step 2"`, a `String`) or `None`.
    ///
    /// ```
    /// # async fn report(ctx: mcp_runtime::Context) {
    /// ctx.progress(1.0, Some(3.0), "step 1").await;
    /// ctx.progress(2.0, Some(3.0), format!("step {}", 2)).await;
    /// ctx.progress(3.0, Some(3.0), None).await;
    /// # }
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: impl Into<ProgressMessage>,
    ) {
        self.checkpoint().await;
        let Some(token) = &self.inner.progress_token else {
            return;
        };
        if self.task().is_some() {
            // Tasks report their state through `tasks/get`, never with notifications.
            return;
        }
        let ProgressMessage(message) = message.into();
        let with_message = self
            .protocol_version()
            .is_none_or(ProtocolVersion::has_progress_message);
        let params = ProgressParams {
            progress_token: token,
            progress,
            total,
            message: message.as_deref().filter(|_| with_message),
        };
        self.inner
            .out
            .notify(notification_frame("notifications/progress", &params));
    }

    /// Sends a notification of the server's own (`acme/progress`, `fs/didChange`) to the
    /// client, with this request's messages (on its response stream over Streamable HTTP).
    /// To reach every connected client at once, see
    /// [`Server::notify_clients`](crate::Server::notify_clients).
    pub async fn notify(&self, method: &str, params: impl serde::Serialize) {
        self.checkpoint().await;
        self.inner.out.notify(notification_frame(method, &params));
    }

    /// Sends a log message to the client (`notifications/message`) when `level` is at or above
    /// the level the client set with `logging/setLevel` (`info` until it sets one).
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(level, None, data.into());
    }

    /// Like [`Context::log`], naming the logger.
    pub async fn log_as(&self, logger: &str, level: LogLevel, data: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(level, Some(logger), data.into());
    }

    /// Logs at `debug`.
    pub async fn debug(&self, message: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(LogLevel::Debug, None, message.into());
    }

    /// Logs at `info`.
    pub async fn info(&self, message: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(LogLevel::Info, None, message.into());
    }

    /// Logs at `warning`.
    pub async fn warning(&self, message: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(LogLevel::Warning, None, message.into());
    }

    /// Logs at `error`.
    pub async fn error(&self, message: impl Into<Value>) {
        self.checkpoint().await;
        self.log_to(LogLevel::Error, None, message.into());
    }

    fn log_to(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if self.task().is_some() {
            return;
        }
        match self.inner.session.log_level() {
            Some(least) if level >= least => {}
            _ => return,
        }
        let params = LoggingMessageParams {
            level,
            logger,
            data: &data,
        };
        self.inner
            .out
            .notify(notification_frame("notifications/message", &params));
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.request_id)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
