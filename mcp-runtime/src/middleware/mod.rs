//! Middleware: layers around every request and notification the server receives, in both
//! eras and on every transport.
//!
//! A [`Layer`] sees an [`McpRequest`] — its method, its parameters, its caller — and a
//! [`Next`] that runs the rest of the stack. It may pass the request on (changed or not),
//! change the result it gets back, or answer itself without passing it on. Layers are added
//! with [`ServerBuilder::layer`](crate::ServerBuilder::layer); the first added is the
//! outermost, so it sees a request first and its result last. A plain `async fn` becomes a
//! layer with [`from_fn`].
//!
//! What a layer sees and returns is JSON (`serde_json::Value`): the parameters as the client
//! sent them and the result the server built, before the transport frames it. A layer that
//! hides tools, prompts or resources from its caller ([`McpRequest::hide_tool`] and its
//! siblings) does so before the lists are paginated, so every page is full and every cursor
//! right, and a call to a hidden item is refused as one to an unknown item.
//!
//! Requests the server refuses before any handler would run them (unknown methods, a
//! stateless request without its `_meta`, a request before `initialize`) are answered
//! without passing through the layers. Without layers, nothing of this runs.
//!
//! ```
//! use mcp_runtime::middleware::{from_fn, McpRequest, Next};
//! use mcp_runtime::prelude::*;
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! /// Doubles every `a` a client sends to `add`.
//! async fn double_a(mut request: McpRequest, next: Next) -> mcp_runtime::middleware::LayerResult {
//!     if request.method() == "tools/call" && request.target() == Some("add") {
//!         if let Some(a) = request.params_mut().pointer_mut("/arguments/a") {
//!             *a = (a.as_i64().unwrap_or(0) * 2).into();
//!         }
//!     }
//!     next.run(request).await
//! }
//!
//! # #[mcp_runtime::main]
//! # async fn main() {
//! let server = mcp_runtime::server!()
//!     .auto_register(false)
//!     .tools(mcp_runtime::tools![add])
//!     .layer(from_fn(double_a))
//!     .build()
//!     .unwrap();
//! let client = server.connect_memory();
//! client.initialize().await.unwrap();
//! let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(result.content, vec![Content::text("7")]);
//! # }
//! ```

mod builtin;
mod rate_limit;
mod response_cache;
mod stack;
mod timing;

pub use builtin::AuditLayer;
pub use rate_limit::{RATE_LIMITED, RateLimit};
pub use response_cache::ResponseCache;
pub use stack::Next;
pub(crate) use stack::{Stack, Terminal};
pub use timing::{MethodTiming, Timing};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::auth::AuthInfo;
use crate::protocol::{Implementation, ListKind, RequestId, RpcError};
use crate::server::Server;
use crate::session::SessionVisibility;

/// What a layer answers: the result the client gets, or its JSON-RPC error. For a
/// notification the value is ignored.
pub type LayerResult = Result<Value, RpcError>;

/// The future a layer returns.
pub type LayerFuture<'a> = Pin<Box<dyn Future<Output = LayerResult> + Send + 'a>>;

/// Code around every request and notification the server receives (see the module's
/// documentation). Implement it for a type, or make one from an `async fn` with [`from_fn`].
///
/// ```
/// use mcp_runtime::middleware::{Layer, LayerFuture, McpRequest, Next};
///
/// /// Refuses every call of a tool named `shutdown`.
/// struct NoShutdown;
///
/// impl Layer for NoShutdown {
///     fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
///         Box::pin(async move {
///             if request.method() == "tools/call" && request.target() == Some("shutdown") {
///                 return Err(mcp_runtime::protocol::RpcError::invalid_params("not here"));
///             }
///             next.run(request).await
///         })
///     }
/// }
/// # let _ = mcp_runtime::server!().layer(NoShutdown);
/// ```
pub trait Layer: Send + Sync + 'static {
    /// Handles one request: `next.run(request)` passes it on.
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a>;
}

/// A layer made from an `async fn(McpRequest, Next) -> LayerResult` (or a closure returning
/// such a future).
pub fn from_fn<F, Fut>(f: F) -> FromFn<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = LayerResult> + Send + 'static,
{
    FromFn(f)
}

/// The layer [`from_fn`] makes.
pub struct FromFn<F>(F);

impl<F, Fut> Layer for FromFn<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = LayerResult> + Send + 'static,
{
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin((self.0)(request, next))
    }
}

/// One request (or notification) on its way through the layers.
pub struct McpRequest {
    pub(crate) method: String,
    pub(crate) params: Value,
    pub(crate) id: Option<RequestId>,
    pub(crate) server: Server,
    pub(crate) auth: Option<Arc<AuthInfo>>,
    pub(crate) session_id: Option<String>,
    /// The session as this process knows it, when there is one (with or without an id).
    pub(crate) connection: Option<u64>,
    pub(crate) client: Option<Implementation>,
    pub(crate) stateless: bool,
    /// Whether the server knows the method (a notification may name anything).
    pub(crate) known: bool,
    /// What the layers hid from this request.
    pub(crate) hidden: SessionVisibility,
}

impl McpRequest {
    /// The method (`tools/call`, `resources/read`, `notifications/cancelled`, …).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The parameters as the client sent them (`null` when it sent none).
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// The parameters, to change before passing the request on.
    pub fn params_mut(&mut self) -> &mut Value {
        &mut self.params
    }

    /// What the request names: the tool of `tools/call`, the prompt of `prompts/get`, the URI
    /// of `resources/read` (and of `resources/subscribe`).
    pub fn target(&self) -> Option<&str> {
        let key = match self.method.as_str() {
            "tools/call" | "prompts/get" => "name",
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
            _ => return None,
        };
        self.params.get(key).and_then(Value::as_str)
    }

    /// The request's id; `None` for a notification.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// Whether this is a notification, whose result no one receives.
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }

    /// The server serving the request.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Who is calling, when the transport authenticated the request.
    pub fn auth(&self) -> Option<&AuthInfo> {
        self.auth.as_deref()
    }

    /// The session's id over Streamable HTTP (see [`Context::session_id`](crate::Context::session_id)).
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The client's name and version (from `initialize`, or from the stateless request's
    /// `_meta`).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.client.as_ref()
    }

    /// Whether the server knows the method: always for a request (one it does not know is
    /// refused before the layers); for a notification, whether it is MCP's or one the server
    /// handles (`ServerBuilder::on_notification`). The server ignores the others.
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// Whether the request is of the stateless era (2026-07-28).
    pub fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// Who the request is from, as one key: the token's subject, else the session (its
    /// `Mcp-Session-Id`, or for a stdio or in-memory connection, the connection), else `None`
    /// (a request without a session or authentication).
    pub fn caller_key(&self) -> Option<String> {
        match (&self.auth, &self.session_id, self.connection) {
            (Some(auth), _, _) => Some(format!("subject:{}", auth.subject)),
            (None, Some(session), _) => Some(format!("session:{session}")),
            (None, None, Some(connection)) => Some(format!("connection:{connection}")),
            (None, None, None) => None,
        }
    }

    /// Hides a tool from this request: it leaves `tools/list` (pagination stays exact) and
    /// a call to it is refused as one to an unknown tool.
    pub fn hide_tool(&mut self, name: &str) {
        self.hide(ListKind::Tools, name);
    }

    /// Hides a prompt from this request.
    pub fn hide_prompt(&mut self, name: &str) {
        self.hide(ListKind::Prompts, name);
    }

    /// Hides a resource or template (by the URI it was declared with) from this request.
    pub fn hide_resource(&mut self, uri: &str) {
        self.hide(ListKind::Resources, uri);
    }

    fn hide(&mut self, kind: ListKind, name: &str) {
        let hidden = match kind {
            ListKind::Tools => &mut self.hidden.tools,
            ListKind::Prompts => &mut self.hidden.prompts,
            ListKind::Resources => &mut self.hidden.resources,
        };
        hidden.insert(name.to_owned(), false);
    }
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("method", &self.method)
            .field("id", &self.id)
            .field("caller", &self.caller_key())
            .finish_non_exhaustive()
    }
}

/// The result of a refused call, as a tool error a model can read, with what a program
/// needs in its `_meta` (`code`, and any other members of `detail`).
pub(crate) fn tool_error_result(message: &str, code: &str, detail: Value) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("code".into(), code.into());
    if let Value::Object(detail) = detail {
        meta.extend(detail);
    }
    serde_json::json!({
        "content": [{"type": "text", "text": message}],
        "isError": true,
        "_meta": {"io.mcp-runtime/error": meta},
    })
}
