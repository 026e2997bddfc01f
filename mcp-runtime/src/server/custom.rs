//! Methods and notifications of a server's own (`acme/reindex`, `fs/readFile`): what
//! `ServerBuilder::method` and `ServerBuilder::on_notification` register, the names MCP keeps
//! for itself, and the serving of such a request like any other handler call (cancellable,
//! panic-contained, through the layers). Also the server's own notifications to its clients.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Server;
use super::request::{Request, Routed, parse_params};
use crate::context::Context;
use crate::protocol::{Method, RpcError, notification_frame};

/// The future of a custom method's handler, with its result as JSON.
type MethodFuture = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send>>;

/// A custom method: reads its parameters and starts its handler.
pub(crate) type MethodHandler =
    Arc<dyn Fn(Context, Option<&RawValue>) -> Result<MethodFuture, RpcError> + Send + Sync>;

/// A custom notification's handler.
pub(crate) type NotificationHandler = Arc<dyn Fn(&Server, Option<&RawValue>) + Send + Sync>;

/// The custom methods and notifications of one server.
#[derive(Clone, Default)]
pub(crate) struct Custom {
    pub methods: HashMap<String, MethodHandler>,
    pub notifications: HashMap<String, NotificationHandler>,
}

/// The namespaces MCP's own methods and notifications live in: a server's own names must be
/// elsewhere, so that no revision of the protocol ever means something else by them.
const RESERVED_PREFIXES: &[&str] = &[
    "notifications/",
    "tools/",
    "prompts/",
    "resources/",
    "completion/",
    "logging/",
    "sampling/",
    "elicitation/",
    "roots/",
    "tasks/",
    "server/",
    "subscriptions/",
    "skills/",
    // JSON-RPC 2.0 keeps these.
    "rpc.",
];

/// Why a name cannot be a server's own method or notification, if it cannot.
pub(crate) fn reserved(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if Method::parse(name).is_some() || matches!(name, "initialize" | "ping") {
        return Some("MCP defines a method of that name");
    }
    RESERVED_PREFIXES
        .iter()
        .find(|prefix| name.starts_with(**prefix))
        .map(|_| "MCP (or JSON-RPC) keeps that namespace for itself")
}

/// Makes a method handler from a typed function.
pub(crate) fn method_handler<P, R, F, Fut>(handler: F) -> MethodHandler
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + 'static,
    F: Fn(Context, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
{
    Arc::new(move |ctx, params| {
        let params: P = parse_params(params)?;
        let call = handler(ctx, params);
        Ok(Box::pin(async move {
            let result = call.await?;
            serde_json::to_value(result)
                .map_err(|e| RpcError::internal(format!("the result does not serialise: {e}")))
        }))
    })
}

/// Makes a notification handler from a typed function; parameters it cannot read are
/// ignored, as a notification has no one to answer.
pub(crate) fn notification_handler<P, F>(name: &str, handler: F) -> NotificationHandler
where
    P: DeserializeOwned + 'static,
    F: Fn(&Server, P) + Send + Sync + 'static,
{
    let name = name.to_owned();
    Arc::new(move |server, params| match parse_params::<P>(params) {
        Ok(params) => handler(server, params),
        Err(e) => {
            tracing::debug!(notification = %name, %e.message, "ignoring unreadable parameters")
        }
    })
}

impl Server {
    /// Whether the server has a method of its own of this name.
    pub(super) fn has_custom_method(&self, name: &str) -> bool {
        self.inner.custom.methods.contains_key(name)
    }

    /// Whether the server handles a notification of this name of its own.
    pub(super) fn has_custom_notification(&self, name: &str) -> bool {
        self.inner.custom.notifications.contains_key(name)
    }

    /// Handles a notification of the server's own; false when it has none of that name. A
    /// handler that panics is logged; the connection goes on.
    pub(super) fn custom_notification(&self, name: &str, params: Option<&RawValue>) -> bool {
        match self.inner.custom.notifications.get(name) {
            Some(handler) => {
                let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    handler(self, params);
                }));
                if let Err(panic) = handled {
                    let panic = super::request::panic_message(&*panic);
                    tracing::error!(notification = name, panic, "notification handler panicked");
                }
                true
            }
            None => false,
        }
    }

    /// Serves a request of a method of the server's own, as a handler call.
    pub(super) fn call_custom(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let handler = self
            .inner
            .custom
            .methods
            .get(req.name)
            .cloned()
            .ok_or_else(|| RpcError::method_not_found(req.name))?;
        #[derive(serde::Deserialize)]
        struct MetaOnly {
            #[serde(rename = "_meta", default)]
            meta: Option<crate::protocol::messages::RequestMeta>,
        }
        let meta = parse_params::<MetaOnly>(req.params)
            .ok()
            .and_then(|m| m.meta);
        let (ctx, cancel) = req.begin_custom(meta)?;
        let call = handler(ctx, req.params)?;
        let name = req.name.to_owned();
        Ok(req.run_custom(cancel, call, move |outcome| match outcome {
            Ok(result) => result.map(|value| value.to_string()),
            Err(panic) => {
                tracing::error!(method = %name, panic, "method panicked");
                Err(RpcError::internal(format!(
                    "method `{name}` failed with an internal error"
                )))
            }
        }))
    }

    /// Sends a notification of the server's own (`fs/didChange`) to every client connected
    /// to this process that finished `initialize`.
    ///
    /// ```
    /// let server = mcp_runtime::server!().auto_register(false).build().unwrap();
    /// server.notify_clients("acme/reindexed", &serde_json::json!({"documents": 42}));
    /// ```
    pub fn notify_clients(&self, method: &str, params: &impl Serialize) {
        let frame = notification_frame(method, params);
        for session in self.initialized_sessions() {
            session.notifications().notify(frame.clone());
        }
    }
}
