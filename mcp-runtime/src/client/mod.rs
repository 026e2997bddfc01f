//! A client for MCP servers (feature `client`): a child process over stdio, or a URL over
//! Streamable HTTP in either era (the stateless 2026-07-28 found through `server/discover`,
//! the handshake otherwise) with the legacy HTTP+SSE transport of 2024-11-05 as a fallback;
//! typed calls for every server method, notifications, progress, cancellation and timeouts;
//! the server's requests (sampling, elicitation, roots) answered by handlers you give; OAuth
//! for servers that need it ([`oauth::OAuth`]).
//!
//! ```no_run
//! use mcp_runtime::client::Client;
//! use mcp_runtime::serde_json::json;
//!
//! # async fn run() -> Result<(), mcp_runtime::client::CallError> {
//! // A server run as a child process…
//! let quickstart = Client::stdio(mcp_runtime::tokio::process::Command::new("quickstart")).await?;
//! let sum = quickstart.call_tool("add", json!({ "a": 2, "b": 3 })).await?;
//! assert_eq!(sum.text(), "5");
//!
//! // …or at a URL, with a handler for the server's elicitation requests.
//! let remote = Client::builder()
//!     .on_elicitation(|request| async move {
//!         println!("the server asks: {}", request["message"]);
//!         Ok(json!({ "action": "decline" }))
//!     })
//!     .http("http://127.0.0.1:8080/mcp")
//!     .await?;
//! for tool in remote.all_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! remote.close().await;
//! # Ok(())
//! # }
//! ```

mod auth;
mod engine;
mod http;
mod memory;
mod mount;
pub mod oauth;
mod sse;
mod stdio;
mod types;
mod wire;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

pub use mount::Mount;
pub use tokio_util::sync::CancellationToken;
pub use types::{
    CallResult, CompleteResult, Notification, Page, Progress, PromptArgumentInfo, PromptInfo,
    PromptResult, ReadResult, ResourceInfo, ResourceTemplateInfo, ServerIdentity, ToolInfo,
};

use self::auth::{Authorize, BoxFuture};
use self::engine::{Engine, STATELESS_VERSION};
use self::wire::Wire;
use crate::protocol::{Implementation, LogLevel, ProtocolVersion, Root, RpcError};

/// Why a call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error.
    Rpc(RpcError),
    /// No answer came in time; the server was told the request is cancelled.
    Timeout {
        /// The method asked.
        method: String,
    },
    /// The caller cancelled the request; the server was told.
    Cancelled,
    /// The connection is gone (the child exited, a stream closed), and why.
    Closed(String),
    /// The server could not be reached, or the exchange broke off.
    Transport(String),
    /// The server answered an HTTP request with an error status.
    Http {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server no longer knows this client's session (HTTP 404): connect again.
    SessionExpired,
    /// The server sent something this client cannot read, or speaks no revision it does.
    Protocol(String),
    /// Authorisation failed (OAuth discovery, registration, or the token exchange).
    Auth(String),
    /// The call itself is malformed (e.g. parameters that are not an object).
    Usage(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Rpc(error) => {
                write!(f, "the server answered {}: {}", error.code, error.message)
            }
            CallError::Timeout { method } => write!(f, "`{method}` had no answer in time"),
            CallError::Cancelled => f.write_str("the request was cancelled"),
            CallError::Closed(reason) => write!(f, "the connection is closed: {reason}"),
            CallError::Transport(problem) => f.write_str(problem),
            CallError::Http { status, body } => {
                write!(f, "the server answered HTTP {status}")?;
                if !body.trim().is_empty() {
                    write!(f, ": {}", body.trim())?;
                }
                Ok(())
            }
            CallError::SessionExpired => {
                f.write_str("the server no longer knows this session (HTTP 404); connect again")
            }
            CallError::Protocol(problem) => write!(f, "protocol error: {problem}"),
            CallError::Auth(problem) => write!(f, "authorization failed: {problem}"),
            CallError::Usage(problem) => f.write_str(problem),
        }
    }
}

impl std::error::Error for CallError {}

type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// The handlers of the server's requests, and what they make the client declare.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    sampling: Option<Handler>,
    elicitation: Option<Handler>,
    roots: Option<Arc<Mutex<Vec<Root>>>>,
    extra_capabilities: Map<String, Value>,
}

/// Which protocol era to speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// Ask `server/discover` first, and fall back to the handshake when the server does not
    /// know it (the default).
    #[default]
    Auto,
    /// The handshake (`initialize`), at the revision [`ClientBuilder::protocol_version`] names.
    Handshake,
    /// Only the stateless revision, 2026-07-28.
    Stateless,
}

/// Answers the server's requests made on behalf of one request (a proxy passes them on to
/// its own caller).
pub(crate) type Forward =
    Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// How one request is made: its timeout, where its progress goes, what cancels it.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// How long to wait for the answer (the client's default when `None`).
    pub timeout: Option<Duration>,
    /// Where the server's progress reports about this request go; asking for them sends a
    /// `progressToken`.
    pub progress: Option<ProgressSender>,
    /// Cancels the request when cancelled: the server is told, and the call returns
    /// [`CallError::Cancelled`]. Dropping the call's future cancels it too.
    pub cancel: Option<CancellationToken>,
    /// Answers the server's requests made for this request, instead of the client's
    /// handlers.
    pub(crate) forward: Option<Forward>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}

impl RequestOptions {
    /// Options with a timeout.
    pub fn timeout(timeout: Duration) -> Self {
        RequestOptions {
            timeout: Some(timeout),
            ..RequestOptions::default()
        }
    }

    /// These options, with progress reports sent to `progress`: a Tokio
    /// `mpsc::UnboundedSender<Progress>`, which holds every report until it is read, or an
    /// `mpsc::Sender<Progress>`, which holds as many as its capacity and drops the reports
    /// that come while it is full (a server may send reports faster than they are read).
    pub fn with_progress(mut self, progress: impl Into<ProgressSender>) -> Self {
        self.progress = Some(progress.into());
        self
    }

    /// These options, cancelled by `token`.
    pub fn with_cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

/// Where a request's progress reports go ([`RequestOptions::with_progress`]): made from a
/// Tokio `mpsc::UnboundedSender<Progress>` or `mpsc::Sender<Progress>`.
///
/// A bounded sender is the one to choose when the server is not trusted: the reports that
/// come while it is full are dropped, not held, so a server that sends a hundred thousand
/// reports for one call costs the client no more than the sender's capacity.
///
/// ```
/// use mcp_runtime::client::{Progress, ProgressSender, RequestOptions};
/// use mcp_runtime::tokio::sync::mpsc;
///
/// let (sender, _reports) = mpsc::channel::<Progress>(64);
/// let options = RequestOptions::default().with_progress(sender);
/// assert!(options.progress.is_some());
/// let (sender, _reports) = mpsc::unbounded_channel::<Progress>();
/// let _: ProgressSender = sender.into();
/// ```
#[derive(Clone, Debug)]
pub struct ProgressSender(ProgressSink);

#[derive(Clone, Debug)]
enum ProgressSink {
    Unbounded(mpsc::UnboundedSender<Progress>),
    Bounded(mpsc::Sender<Progress>),
}

impl ProgressSender {
    /// Hands `report` on, or drops it when a bounded sender is full (or the receiver is
    /// gone); returns whether it was handed on.
    pub(crate) fn offer(&self, report: Progress) -> bool {
        match &self.0 {
            ProgressSink::Unbounded(sender) => sender.send(report).is_ok(),
            ProgressSink::Bounded(sender) => sender.try_send(report).is_ok(),
        }
    }
}

impl From<mpsc::UnboundedSender<Progress>> for ProgressSender {
    fn from(sender: mpsc::UnboundedSender<Progress>) -> Self {
        ProgressSender(ProgressSink::Unbounded(sender))
    }
}

impl From<mpsc::Sender<Progress>> for ProgressSender {
    fn from(sender: mpsc::Sender<Progress>) -> Self {
        ProgressSender(ProgressSink::Bounded(sender))
    }
}

/// How to connect: who this client is, what it answers, which era it speaks. Finish with
/// [`stdio`](ClientBuilder::stdio), [`http`](ClientBuilder::http) or
/// [`connect`](ClientBuilder::connect).
#[must_use = "a builder does nothing until it connects"]
pub struct ClientBuilder {
    info: Implementation,
    handlers: Handlers,
    timeout: Duration,
    era: Era,
    version: ProtocolVersion,
    headers: Vec<(String, String)>,
    auth: Option<Arc<dyn Authorize>>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation::new("mcp-runtime-client", env!("CARGO_PKG_VERSION")),
            handlers: Handlers::default(),
            timeout: Duration::from_secs(60),
            era: Era::Auto,
            version: ProtocolVersion::LATEST_HANDSHAKE,
            headers: Vec::new(),
            auth: None,
        }
    }
}

impl ClientBuilder {
    /// The name and version this client gives the server.
    pub fn name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// How long a request waits for its answer unless its [`RequestOptions`] say otherwise
    /// (60 seconds by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Which era to speak (by default: discover, then the handshake).
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// The revision to ask for in the handshake (the latest by default).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// Answers the server's `sampling/createMessage` requests, and declares `sampling`.
    /// The handler gets the request's parameters and returns the result.
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.sampling = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Answers the server's `elicitation/create` requests, and declares `elicitation`.
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.elicitation = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// The roots this client exposes, and declares `roots` (change them with
    /// [`Client::set_roots`]).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.roots = Some(Arc::new(Mutex::new(roots)));
        self
    }

    /// Declares sampling, elicitation and roots for a client that passes the server's
    /// requests on (a [`Mount`]): those made during a mounted call go to the client of that
    /// call; any other is refused.
    pub fn proxy(self) -> Self {
        let refuse = |method: &'static str| {
            move |_params: Value| async move {
                Err(RpcError::new(
                    crate::protocol::code::METHOD_NOT_FOUND,
                    format!("`{method}` reaches a client only from a call in progress"),
                ))
            }
        };
        let mut builder = self
            .on_sampling(refuse("sampling/createMessage"))
            .on_elicitation(refuse("elicitation/create"));
        builder.handlers.roots = Some(Arc::new(Mutex::new(Vec::new())));
        builder
    }

    /// A further client capability to declare, e.g. an extension's.
    pub fn capability(mut self, name: impl Into<String>, value: Value) -> Self {
        self.handlers.extra_capabilities.insert(name.into(), value);
        self
    }

    /// A header sent with every HTTP request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A bearer token sent with every HTTP request.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.auth = Some(Arc::new(auth::Bearer(token.into())));
        self
    }

    /// OAuth for a server that needs it: discovery, registration, the authorization code
    /// flow with PKCE, refresh and step-up, as [`oauth::OAuth`] is set.
    pub fn oauth(mut self, oauth: oauth::OAuth) -> Self {
        self.auth = Some(Arc::new(oauth.into_flow()));
        self
    }

    /// Starts `command` and speaks to it over its standard input and output.
    pub async fn stdio(self, command: tokio::process::Command) -> Result<Client, CallError> {
        let engine = Engine::new(self.info.clone(), self.handlers.clone(), self.timeout);
        let stdio = stdio::Stdio::spawn(command, &engine)?;
        engine.set_wire(Wire::Stdio(Box::new(stdio)));
        self.negotiate(engine, None).await
    }

    /// Connects to a server built in this program, through the same dispatch a transport
    /// uses (no process, no socket): to test it, or to mount it into another
    /// ([`Mount`]).
    pub async fn in_process(self, server: &crate::Server) -> Result<Client, CallError> {
        let engine = Engine::new(self.info.clone(), self.handlers.clone(), self.timeout);
        let memory = memory::Memory::connect(server, &engine);
        engine.set_wire(Wire::Memory(memory));
        self.negotiate(engine, None).await
    }

    /// Connects to the server at `url` over HTTP.
    pub async fn http(self, url: &str) -> Result<Client, CallError> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| CallError::Usage(format!("`{url}` is not a URL: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(CallError::Usage(format!(
                "`{url}` is not an http or https URL"
            )));
        }
        let mut headers = Vec::new();
        for (name, value) in &self.headers {
            let name = hyper::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| CallError::Usage(format!("`{name}`: {e}")))?;
            let value = hyper::header::HeaderValue::from_str(value)
                .map_err(|e| CallError::Usage(format!("the value of `{name}`: {e}")))?;
            headers.push((name, value));
        }
        let engine = Engine::new(self.info.clone(), self.handlers.clone(), self.timeout);
        let http = http::Http::new(uri, headers, self.auth.clone(), &engine)?;
        engine.set_wire(Wire::Http(Box::new(http)));
        self.negotiate(engine, Some(url)).await
    }

    /// Connects to `target`: a URL (`http://…`, `https://…`), or a command line run as a
    /// child process (split at spaces; use [`stdio`](ClientBuilder::stdio) for arguments
    /// with spaces).
    pub async fn connect(self, target: &str) -> Result<Client, CallError> {
        if target.starts_with("http://") || target.starts_with("https://") {
            return self.http(target).await;
        }
        let mut words = target.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| CallError::Usage("the command to run is empty".into()))?;
        let mut command = tokio::process::Command::new(program);
        command.args(words);
        self.stdio(command).await
    }

    async fn negotiate(self, engine: Arc<Engine>, url: Option<&str>) -> Result<Client, CallError> {
        let client = Client {
            engine: Arc::new(Closer(engine)),
        };
        let engine = &client.engine.0;
        if self.era != Era::Handshake {
            match client.discover().await {
                Ok(identity) => {
                    if let Wire::Http(http) = engine.wire() {
                        http.set_version(&identity.protocol_version);
                    }
                    engine.set_identity(identity);
                    return Ok(client);
                }
                Err(error) if self.era == Era::Stateless => return Err(error),
                Err(CallError::Rpc(_) | CallError::Http { .. } | CallError::Protocol(_)) => {}
                Err(CallError::Timeout { .. }) if url.is_none() => {}
                Err(error) => return Err(error),
            }
        }
        let initialize = json!({
            "protocolVersion": self.version.as_str(),
            "capabilities": engine.capabilities(),
            "clientInfo": engine.info,
        });
        let options = RequestOptions::default();
        let result = match engine
            .request("initialize", initialize.clone(), &options)
            .await
        {
            Err(CallError::Http { status, .. })
                if (400..500).contains(&status) && status != 401 =>
            {
                // A server of 2024-11-05: the HTTP+SSE transport.
                let Wire::Http(http) = engine.wire() else {
                    unreachable!("only HTTP answers with a status")
                };
                http.connect_legacy().await?;
                engine.request("initialize", initialize, &options).await?
            }
            result => result?,
        };
        let version = result["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if version.parse::<ProtocolVersion>().is_err() {
            return Err(CallError::Protocol(format!(
                "the server speaks revision `{version}`, which this client does not"
            )));
        }
        let identity = ServerIdentity {
            protocol_version: version.clone(),
            stateless: false,
            server_info: serde_json::from_value(result["serverInfo"].clone()).unwrap_or_default(),
            capabilities: result["capabilities"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
            instructions: result["instructions"].as_str().map(str::to_owned),
        };
        engine.set_identity(identity);
        if let Wire::Http(http) = engine.wire() {
            http.set_version(&version);
        }
        engine
            .notify("notifications/initialized", Value::Null)
            .await?;
        if let Wire::Http(http) = engine.wire() {
            http.listen().await;
        }
        Ok(client)
    }
}

/// Closes the connection when the last [`Client`] handle is dropped.
struct Closer(Arc<Engine>);

impl Drop for Closer {
    fn drop(&mut self) {
        self.0.shutdown.cancel();
    }
}

/// A connection to one MCP server. Cheap to clone: clones share the connection, which closes
/// when the last one is dropped (or at [`close`](Client::close)).
#[derive(Clone)]
pub struct Client {
    engine: Arc<Closer>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.engine.0.identity())
            .finish_non_exhaustive()
    }
}

/// A `subscriptions/listen` in progress ([`Client::listen`]): dropping it ends it.
#[derive(Debug)]
pub struct Listening {
    acknowledged: Value,
    token: CancellationToken,
}

impl Listening {
    /// What the server acknowledged it will send (its `notifications/subscriptions/acknowledged`).
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// The notifications the server sends, in order. A listener that falls more than 1,024
/// behind loses the oldest.
pub struct Notifications {
    receiver: broadcast::Receiver<Notification>,
}

impl Notifications {
    /// The next notification; `None` once the connection is closed.
    pub async fn next(&mut self) -> Option<Notification> {
        loop {
            match self.receiver.recv().await {
                Ok(notification) => return Some(notification),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "a notification listener fell behind");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl Client {
    /// A builder, to set handlers, a timeout, headers or OAuth before connecting.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Starts `command` and connects to it over stdio, with the default settings.
    pub async fn stdio(command: tokio::process::Command) -> Result<Client, CallError> {
        Client::builder().stdio(command).await
    }

    /// Connects to the server at `url`, with the default settings.
    pub async fn http(url: &str) -> Result<Client, CallError> {
        Client::builder().http(url).await
    }

    fn engine(&self) -> &Arc<Engine> {
        &self.engine.0
    }

    /// Who the server is and what it offers.
    pub fn server(&self) -> &ServerIdentity {
        self.engine()
            .identity()
            .expect("a client is returned only once the server is known")
    }

    async fn discover(&self) -> Result<ServerIdentity, CallError> {
        let result = self
            .engine()
            .request("server/discover", json!({}), &RequestOptions::default())
            .await?;
        let supported = result["supportedVersions"]
            .as_array()
            .is_some_and(|versions| versions.iter().any(|v| v == STATELESS_VERSION));
        if !supported {
            return Err(CallError::Protocol(format!(
                "the server supports none of the revisions this client speaks statelessly ({STATELESS_VERSION})"
            )));
        }
        Ok(ServerIdentity {
            protocol_version: STATELESS_VERSION.to_owned(),
            stateless: true,
            server_info: serde_json::from_value(
                result["_meta"]["io.modelcontextprotocol/serverInfo"].clone(),
            )
            .unwrap_or_default(),
            capabilities: result["capabilities"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
            instructions: result["instructions"].as_str().map(str::to_owned),
        })
    }

    /// Sends any request and returns its result as JSON (for methods without a typed call,
    /// such as an extension's).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, CallError> {
        self.engine()
            .request(method, params, &RequestOptions::default())
            .await
    }

    /// [`request`](Client::request) with options: a timeout, progress, cancellation.
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, CallError> {
        self.engine().request(method, params, options).await
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<T, CallError> {
        let result = self.engine().request(method, params, options).await?;
        serde_json::from_value(result)
            .map_err(|e| CallError::Protocol(format!("the result of `{method}` is malformed: {e}")))
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), CallError> {
        self.engine().notify(method, params).await
    }

    /// The server's notifications from now on (log messages, list changes, resource
    /// updates, progress).
    pub fn notifications(&self) -> Notifications {
        Notifications {
            receiver: self.engine().subscribe(),
        }
    }

    /// In the stateless era (2026-07-28), asks the server for change notifications:
    /// `filter` is a `SubscriptionFilter` (`{"toolsListChanged": true,
    /// "resourceSubscriptions": ["file:///…"]}`). They arrive on
    /// [`notifications`](Client::notifications) until the returned [`Listening`] is dropped.
    /// Returns once the server acknowledged what it will send; a server that sends no
    /// acknowledgement within the client's [timeout](ClientBuilder::timeout) fails the call
    /// with [`CallError::Timeout`] (and is told the request is cancelled). (In the
    /// handshake era, notifications need no asking; use [`subscribe`](Client::subscribe)
    /// for a resource's updates.)
    pub async fn listen(&self, filter: Value) -> Result<Listening, CallError> {
        if !self.server().stateless {
            return Err(CallError::Usage(
                "`subscriptions/listen` is of the stateless era; this server speaks the handshake"
                    .into(),
            ));
        }
        let mut notifications = self.notifications();
        let token = CancellationToken::new();
        let options = RequestOptions {
            // The request lasts as long as the listener.
            timeout: Some(Duration::from_secs(365 * 24 * 3600)),
            cancel: Some(token.clone()),
            ..RequestOptions::default()
        };
        let client = self.clone();
        let request = tokio::spawn(async move {
            client
                .request_with(
                    "subscriptions/listen",
                    json!({ "notifications": filter }),
                    &options,
                )
                .await
        });
        let acknowledged = async {
            while let Some(notification) = notifications.next().await {
                if notification.method == "notifications/subscriptions/acknowledged" {
                    return Ok(notification.params);
                }
            }
            Err(CallError::Closed(
                "the connection closed before the server acknowledged".into(),
            ))
        };
        tokio::pin!(acknowledged);
        let mut request = request;
        // The request lasts as long as the listener, but its acknowledgement comes at once
        // from a server that sends one: a server that never does fails the call after the
        // client's timeout, not never.
        let answered = tokio::time::timeout(self.engine().timeout, async {
            tokio::select! {
                acknowledged = &mut acknowledged => acknowledged,
                ended = &mut request => match ended {
                    Ok(Err(error)) => Err(error),
                    _ => Err(CallError::Protocol("the server ended `subscriptions/listen` at once".into())),
                },
            }
        })
        .await
        .unwrap_or_else(|_| {
            Err(CallError::Timeout {
                method: "subscriptions/listen".into(),
            })
        });
        match answered {
            Ok(acknowledged) => Ok(Listening {
                acknowledged,
                token,
            }),
            Err(error) => {
                // The server is told, and the request's task ends.
                token.cancel();
                Err(error)
            }
        }
    }

    /// Whether the server answers: `ping`, or in the stateless era (which has no `ping`)
    /// `server/discover`.
    pub async fn ping(&self) -> Result<(), CallError> {
        let method = if self.server().stateless {
            "server/discover"
        } else {
            "ping"
        };
        self.request(method, json!({})).await.map(drop)
    }

    async fn page(
        &self,
        method: &str,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>), CallError> {
        let params = match cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let mut result = self.request(method, params).await?;
        let items = match result.get_mut(key).map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => {
                return Err(CallError::Protocol(format!(
                    "the result of `{method}` has no `{key}` list"
                )));
            }
        };
        let mut items = items;
        if method == "tools/list" {
            // Which arguments each tool mirrors into headers; a tool with invalid marks is
            // left out.
            self.engine().learn_tools(&mut items);
        }
        let next = result["nextCursor"].as_str().map(str::to_owned);
        Ok((items, next))
    }

    /// Every item of a list, page after page, up to [`MAX_PAGES`] pages and [`MAX_ITEMS`]
    /// items: a server that hands out cursors for ever fails the call instead of holding
    /// the client for ever. Each cursor is remembered by a hash of it (not its text), to
    /// refuse pages that come round in a circle.
    async fn all<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>, CallError> {
        use std::hash::BuildHasher as _;
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let hasher = std::collections::hash_map::RandomState::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let (items, next) = self.page(method, key, cursor.as_deref()).await?;
            if all.len() + items.len() > MAX_ITEMS {
                return Err(CallError::Protocol(format!(
                    "`{method}` lists more than {MAX_ITEMS} items; the client stops there"
                )));
            }
            for item in items {
                all.push(read_item(method, item)?);
            }
            match next {
                Some(next) if seen.insert(hasher.hash_one(&next)) => cursor = Some(next),
                Some(_) => {
                    return Err(CallError::Protocol(format!(
                        "the pages of `{method}` come round in a circle"
                    )));
                }
                None => return Ok(all),
            }
        }
        Err(CallError::Protocol(format!(
            "`{method}` has more than {MAX_PAGES} pages; the client stops there"
        )))
    }

    async fn one_page<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<Page<T>, CallError> {
        let (items, next_cursor) = self.page(method, key, cursor).await?;
        let items = items
            .into_iter()
            .map(|item| read_item(method, item))
            .collect::<Result<_, _>>()?;
        Ok(Page { items, next_cursor })
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<Page<ToolInfo>, CallError> {
        self.one_page("tools/list", "tools", cursor).await
    }

    /// Every tool, following the pages (at most [`MAX_PAGES`] of them, [`MAX_ITEMS`] tools:
    /// beyond, a [`CallError::Protocol`] naming the list).
    pub async fn all_tools(&self) -> Result<Vec<ToolInfo>, CallError> {
        self.all("tools/list", "tools").await
    }

    /// Calls a tool. A tool's own failure is a result with
    /// [`is_error`](CallResult::is_error) set, not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallResult, CallError> {
        self.call_tool_with(name, arguments, &RequestOptions::default())
            .await
    }

    /// [`call_tool`](Client::call_tool) with options: a timeout, progress, cancellation.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallResult, CallError> {
        let params = json!({ "name": name, "arguments": arguments });
        self.typed("tools/call", params, options).await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<Page<PromptInfo>, CallError> {
        self.one_page("prompts/list", "prompts", cursor).await
    }

    /// Every prompt, following the pages (at most [`MAX_PAGES`] of them, [`MAX_ITEMS`]
    /// prompts).
    pub async fn all_prompts(&self) -> Result<Vec<PromptInfo>, CallError> {
        self.all("prompts/list", "prompts").await
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<PromptResult, CallError> {
        let params = json!({ "name": name, "arguments": arguments });
        self.typed("prompts/get", params, &RequestOptions::default())
            .await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceInfo>, CallError> {
        self.one_page("resources/list", "resources", cursor).await
    }

    /// Every resource, following the pages (at most [`MAX_PAGES`] of them, [`MAX_ITEMS`]
    /// resources).
    pub async fn all_resources(&self) -> Result<Vec<ResourceInfo>, CallError> {
        self.all("resources/list", "resources").await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplateInfo>, CallError> {
        self.one_page("resources/templates/list", "resourceTemplates", cursor)
            .await
    }

    /// Every resource template, following the pages (at most [`MAX_PAGES`] of them,
    /// [`MAX_ITEMS`] templates).
    pub async fn all_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, CallError> {
        self.all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResult, CallError> {
        self.typed(
            "resources/read",
            json!({ "uri": uri }),
            &RequestOptions::default(),
        )
        .await
    }

    /// Subscribes to a resource's updates (`notifications/resources/updated`).
    pub async fn subscribe(&self, uri: &str) -> Result<(), CallError> {
        self.request("resources/subscribe", json!({ "uri": uri }))
            .await
            .map(drop)
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), CallError> {
        self.request("resources/unsubscribe", json!({ "uri": uri }))
            .await
            .map(drop)
    }

    /// Asks for completions of one argument. `reference` is `{"type": "ref/prompt", "name":
    /// …}` or `{"type": "ref/resource", "uri": …}`; `context` holds the arguments already
    /// chosen.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        context: Option<Map<String, Value>>,
    ) -> Result<CompleteResult, CallError> {
        let mut params = json!({
            "ref": reference,
            "argument": { "name": argument, "value": value },
        });
        if let Some(arguments) = context {
            params["context"] = json!({ "arguments": arguments });
        }
        let mut result = self.request("completion/complete", params).await?;
        serde_json::from_value(result["completion"].take()).map_err(|e| {
            CallError::Protocol(format!(
                "the result of `completion/complete` is malformed: {e}"
            ))
        })
    }

    /// The least severe log messages the server should send: `logging/setLevel` in the
    /// handshake era, the request metadata of every later request in the stateless one.
    pub async fn set_level(&self, level: LogLevel) -> Result<(), CallError> {
        let name = serde_json::to_value(level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".to_owned());
        self.engine().set_log_level(&name);
        if self.server().stateless {
            return Ok(());
        }
        self.request("logging/setLevel", json!({ "level": name }))
            .await
            .map(drop)
    }

    /// Changes the roots this client exposes, and tells the server.
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), CallError> {
        let Some(current) = &self.engine().handlers.roots else {
            return Err(CallError::Usage(
                "this client was built without roots (`ClientBuilder::roots`)".into(),
            ));
        };
        *current.lock().unwrap_or_else(|p| p.into_inner()) = roots;
        if self.server().stateless {
            return Ok(());
        }
        self.notify("notifications/roots/list_changed", Value::Null)
            .await
    }

    /// `tasks/get`: a task's status.
    pub async fn get_task(&self, task_id: &str) -> Result<Value, CallError> {
        self.request("tasks/get", json!({ "taskId": task_id }))
            .await
    }

    /// `tasks/result`: a finished task's result (waits for it in the handshake era).
    pub async fn task_result(&self, task_id: &str) -> Result<Value, CallError> {
        self.request("tasks/result", json!({ "taskId": task_id }))
            .await
    }

    /// `tasks/cancel`: cancels a task.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Value, CallError> {
        self.request("tasks/cancel", json!({ "taskId": task_id }))
            .await
    }

    /// `tasks/list`: this client's tasks.
    pub async fn list_tasks(&self) -> Result<Value, CallError> {
        self.request("tasks/list", json!({})).await
    }

    /// Closes the connection: a child process's input is closed (and the child killed if it
    /// has not exited two seconds later); an HTTP session is ended with `DELETE`.
    pub async fn close(self) {
        let engine = self.engine();
        engine.close("the client closed the connection");
        engine.wire().close().await;
    }
}

/// The most pages of one list that [`Client::all_tools`] and the other `all_` calls follow
/// (10,000): far more than a real server sends, and an end to a server that hands out a
/// fresh cursor for ever.
pub const MAX_PAGES: usize = 10_000;

/// The most items of one list that [`Client::all_tools`] and the other `all_` calls gather
/// (1,000,000).
pub const MAX_ITEMS: usize = 1_000_000;

/// The most requests of the server (sampling, elicitation, roots, ping) a client answers at
/// once (64, as many as a server takes from one client by default): past it, a request is
/// answered at once with a busy error (-32000) naming the limit, so a server flooding its
/// client with requests holds a bounded share of it.
pub const MAX_SERVER_REQUESTS: usize = crate::server::DEFAULT_MAX_IN_FLIGHT;

fn read_item<T: DeserializeOwned>(method: &str, item: Value) -> Result<T, CallError> {
    serde_json::from_value(item)
        .map_err(|e| CallError::Protocol(format!("an item of `{method}` is malformed: {e}")))
}
