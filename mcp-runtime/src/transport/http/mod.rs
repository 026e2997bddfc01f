//! The Streamable HTTP transport (protocol revisions 2025-03-26 to 2025-11-25) on axum: one
//! endpoint for POST (messages), GET (the session's own stream) and DELETE (end a session),
//! with sessions, resumable SSE streams, and safe defaults.
//!
//! ```no_run
//! use mcp_runtime::http::HttpOptions;
//!
//! # async fn run() -> mcp_runtime::Result<()> {
//! let server = mcp_runtime::server!().build()?;
//! // On its own, on loopback:
//! server.serve_http("127.0.0.1:8080").await?;
//! // Or mounted in an application of yours:
//! let app = axum::Router::new().merge(server.http_router(HttpOptions::default()));
//! # let _ = app;
//! # Ok(()) }
//! ```

mod endpoint;
mod events;
mod guard;
mod headers;
#[cfg(feature = "legacy-sse")]
mod legacy_sse;
mod media;
mod security;
mod serve;
mod session_table;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, Response, StatusCode, header};
use axum::routing::{MethodRouter, get};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use events::{EventFuture, EventStore, EventStoreLimits, InMemoryEventStore, StreamRead};
pub use security::{AuthRejection, BearerTokens, TokenVerifier};

use crate::protocol::{RpcError, error_frame};
use crate::server::Server;
use session_table::SessionTable;

/// How the HTTP endpoint behaves. Every default is the safe one: loopback hosts and origins
/// only, a 4 MiB body limit, sessions that expire after 30 idle minutes, a quota of sessions
/// per client, and deadlines for slow or idle connections.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::http::HttpOptions;
///
/// let options = HttpOptions::default()
///     .path("/mcp")
///     .allowed_hosts(["localhost", "127.0.0.1", "mcp.example.com"])
///     .session_idle_timeout(Duration::from_secs(600))
///     .max_body_bytes(1 << 20);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    pub(crate) path: String,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_body_bytes: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_sessions: usize,
    pub(crate) max_in_flight_per_session: usize,
    pub(crate) max_in_flight_sessionless: usize,
    pub(crate) stateless: bool,
    pub(crate) event_store: Arc<dyn EventStore>,
    pub(crate) session_store: Option<Arc<dyn crate::cluster::SessionStore>>,
    pub(crate) sse_retry: Duration,
    pub(crate) auth: Option<Arc<dyn TokenVerifier>>,
    pub(crate) required_scopes: Vec<String>,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) resource_base_url: Option<String>,
    pub(crate) max_sessions_per_client: usize,
    pub(crate) max_in_flight_per_client: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_peer: usize,
    pub(crate) sse_keep_alive: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        let loopback: Vec<String> = security::LOOPBACK_HOSTS
            .iter()
            .map(|h| (*h).to_owned())
            .collect();
        HttpOptions {
            path: "/mcp".into(),
            allowed_hosts: loopback.clone(),
            allowed_origins: loopback,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_in_flight_per_session: 64,
            max_in_flight_sessionless: 1024,
            stateless: false,
            event_store: Arc::new(InMemoryEventStore::default()),
            session_store: None,
            sse_retry: Duration::from_millis(1000),
            auth: None,
            required_scopes: Vec::new(),
            authorization_servers: Vec::new(),
            resource_base_url: None,
            max_sessions_per_client: 1_000,
            max_in_flight_per_client: 1024,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4096,
            max_connections_per_peer: 256,
            sse_keep_alive: Duration::from_secs(15),
        }
    }
}

impl HttpOptions {
    /// The endpoint's path (`/mcp` by default).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The host names a request's `Host` may carry (any port); `"*"` allows any. Loopback
    /// only by default: name your public host names here when you bind elsewhere.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The host names a request's `Origin` may carry, when it carries one (browsers do);
    /// `"*"` allows any. Loopback only by default.
    pub fn allowed_origins(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The largest request body accepted; larger ones get 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How long a session may stay idle before it expires (its id then gets 404).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// The most sessions kept at once (10,000 unless set). Past it, a new session ends an
    /// idle one — one with no request in flight and no open stream — of the client holding
    /// the most sessions; when there is none, the new session is refused with 503.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// The most sessions one client may hold (1,000 unless set): a client is the subject of its
    /// token when [`auth`](HttpOptions::auth) is on, otherwise its peer address. Past it, a
    /// new session of that client ends its own session idle the longest, or is refused with
    /// 429 when each of them is busy; other clients' sessions are never touched.
    ///
    /// Behind a proxy every anonymous client shares the proxy's address: configure
    /// authentication, or raise this limit.
    pub fn max_sessions_per_client(mut self, sessions: usize) -> Self {
        self.max_sessions_per_client = sessions;
        self
    }

    /// The most requests one session may have in flight (64 unless set); more get 429.
    pub fn max_in_flight_per_session(mut self, requests: usize) -> Self {
        self.max_in_flight_per_session = requests;
        self
    }

    /// The most requests one client (token subject, or peer address) may have in flight
    /// over all its sessions (1,024 unless set); more get 429. A handshake-era call goes on
    /// when its connection closes, so without this a client could leave calls running in
    /// session after session.
    pub fn max_in_flight_per_client(mut self, requests: usize) -> Self {
        self.max_in_flight_per_client = requests;
        self
    }

    /// The most requests without a session (2026-07-28 requests, or every request of a
    /// [stateless](HttpOptions::stateless) endpoint) in flight at once, over all clients
    /// (1024 unless set); more get 503 with `Retry-After`.
    pub fn max_in_flight_sessionless(mut self, requests: usize) -> Self {
        self.max_in_flight_sessionless = requests;
        self
    }

    /// Serve without sessions: every request stands alone and is answered with JSON. For
    /// deployments behind load balancers; server-to-client requests and the GET stream are
    /// unavailable.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Where SSE events are kept for resumption ([`InMemoryEventStore`] by default).
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = store;
        self
    }

    /// Keeps handshake-era sessions in `store`, shared with other replicas, so that any of
    /// them serves a request naming a session (see [`cluster`](crate::cluster)).
    pub fn session_store(mut self, store: Arc<dyn crate::cluster::SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// The reconnection delay announced to clients in SSE `retry` fields.
    pub fn sse_retry(mut self, retry: Duration) -> Self {
        self.sse_retry = retry;
        self
    }

    /// Requires a bearer token on every request, checked by `verifier`; the caller it names
    /// is available to handlers as [`Context::auth`](crate::Context::auth).
    pub fn auth(mut self, verifier: impl TokenVerifier) -> Self {
        self.auth = Some(Arc::new(verifier));
        self
    }

    /// Scopes every token must grant (403 `insufficient_scope` otherwise).
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The authorisation servers named in the protected-resource metadata (RFC 9728).
    pub fn authorization_servers(
        mut self,
        servers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.authorization_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// The public `scheme://host[:port]` of this server, for the metadata and the
    /// `WWW-Authenticate` challenge (taken from the request's `Host` when unset).
    pub fn resource_base_url(mut self, url: impl Into<String>) -> Self {
        self.resource_base_url = Some(url.into());
        self
    }

    /// How long a client may take to send a request's head once its first byte arrived
    /// (10 s unless set); past it, the connection is closed. A client that trickles its
    /// headers (slowloris) holds a connection no longer than this.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's whole body (30 s unless set); past
    /// it, the request gets 408 and the connection is closed.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long a keep-alive connection may wait for its next request (60 s unless set).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most connections open at once (4096 unless set, and never more than the
    /// process's file-descriptor limit allows, less a reserve); past it, a new connection
    /// gets 503 and is closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// The most connections open at once from one peer address (256 unless set). Behind a
    /// proxy every client shares the proxy's address: raise it to the proxy's own limit.
    pub fn max_connections_per_peer(mut self, connections: usize) -> Self {
        self.max_connections_per_peer = connections;
        self
    }

    /// How often a quiet SSE stream sends a comment (15 s unless set), so intermediaries keep
    /// it open and a client that is gone is noticed by the write that fails.
    pub fn sse_keep_alive(mut self, every: Duration) -> Self {
        self.sse_keep_alive = every;
        self
    }

    /// Every route the endpoint serves with these options, each with its methods and whether
    /// it needs a token: the MCP endpoint, the legacy HTTP+SSE routes (feature
    /// `legacy-sse`), and the protected-resource metadata, the only public one. Every route
    /// is behind the same checks of `Host`, `Origin`, body size and time, and (unless
    /// public) the bearer token.
    ///
    /// ```
    /// use mcp_runtime::http::HttpOptions;
    ///
    /// let routes = HttpOptions::default().path("/api/mcp").routes();
    /// assert!(routes.iter().any(|r| r.path == "/api/mcp" && !r.public));
    /// assert!(routes.iter().all(|r| r.public == r.path.starts_with("/.well-known/")));
    /// ```
    pub fn routes(&self) -> Vec<HttpRoute> {
        route_table(self)
            .into_iter()
            .map(|(route, _)| route)
            .collect()
    }
}

/// One route of the endpoint (see [`HttpOptions::routes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRoute {
    /// The path.
    pub path: String,
    /// The methods it answers.
    pub methods: Vec<Method>,
    /// Whether it is served without a token (the metadata that says how to get one).
    pub public: bool,
}

/// Every route, with its handlers: the one list both the router and
/// [`HttpOptions::routes`] are made from.
fn route_table(options: &HttpOptions) -> Vec<(HttpRoute, MethodRouter<Arc<HttpState>>)> {
    let route = |path: &str, methods: &[Method], public: bool| HttpRoute {
        path: path.to_owned(),
        methods: methods.to_vec(),
        public,
    };
    let mut table = vec![(
        route(
            &options.path,
            &[Method::GET, Method::POST, Method::DELETE],
            false,
        ),
        get(endpoint::get)
            .post(endpoint::post)
            .delete(endpoint::delete),
    )];
    let path_specific = format!("{}{}", security::METADATA_PATH, options.path);
    let mut metadata = vec![security::METADATA_PATH.to_owned()];
    if options.path != "/" && path_specific != security::METADATA_PATH {
        metadata.push(path_specific);
    }
    for path in metadata {
        table.push((
            route(&path, &[Method::GET], true),
            get(security::protected_resource_metadata),
        ));
    }
    #[cfg(feature = "legacy-sse")]
    table.extend(
        legacy_sse::routes(&options.path)
            .into_iter()
            .map(|(path, method, handler)| (route(&path, &[method], false), handler)),
    );
    table
}

/// What every request of the endpoint shares.
pub(crate) struct HttpState {
    pub server: Server,
    pub options: HttpOptions,
    pub sessions: SessionTable,
    /// Handler tasks, waited for at shutdown.
    pub tasks: TaskTracker,
    /// Fires at shutdown: the sessions' own streams end.
    pub shutdown: CancellationToken,
    /// Fires at shutdown once every handler has finished: the streams that follow a request
    /// send what is stored and end, even one whose events the store no longer has.
    pub drained: CancellationToken,
    /// Requests without a session in flight (see `max_in_flight_sessionless`).
    pub sessionless_in_flight: Arc<tokio::sync::Semaphore>,
    /// Open `subscriptions/listen` streams: as many again, counted apart, so that
    /// long-lived listeners cannot take every slot of the requests that come and go.
    pub listeners: Arc<tokio::sync::Semaphore>,
    /// The routes served without a token (the metadata).
    pub public_paths: Vec<String>,
    #[cfg(feature = "legacy-sse")]
    pub legacy: legacy_sse::LegacySessions,
}

impl Server {
    /// Serves the Streamable HTTP endpoint at `addr` (`/mcp`) with the default options, until
    /// Ctrl-C or SIGTERM; then finishes the calls in flight and returns.
    pub async fn serve_http(&self, addr: impl tokio::net::ToSocketAddrs) -> crate::Result<()> {
        self.serve_http_with(addr, HttpOptions::default()).await
    }

    /// Like [`Server::serve_http`], with options.
    ///
    /// At Ctrl-C or SIGTERM it stops accepting connections, closes the idle ones, and gives
    /// the calls in flight the [shutdown grace](crate::ServerBuilder::shutdown_grace) to
    /// finish; then it cancels those still running, closes every connection, and returns.
    pub async fn serve_http_with(
        &self,
        addr: impl tokio::net::ToSocketAddrs,
        options: HttpOptions,
    ) -> crate::Result<()> {
        crate::transport::init_stderr_logging();
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local: SocketAddr = listener.local_addr()?;
        // One line on standard error (never standard output) says where to connect; with
        // port 0 it is the only way to learn the port.
        eprintln!(
            "mcp: serving Streamable HTTP on http://{local}{}",
            options.path
        );
        let state = self.http_state(options);
        let stopping = serve::Stopping {
            graceful: CancellationToken::new(),
            hard: CancellationToken::new(),
        };
        let grace = self.shutdown_grace();
        {
            let state = Arc::clone(&state);
            let graceful = stopping.graceful.clone();
            let hard = stopping.hard.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                let deadline = tokio::time::Instant::now() + grace;
                graceful.cancel();
                state.shutdown.cancel();
                // Calls get the grace period to finish; the streams that follow them end
                // once they have.
                state.tasks.close();
                let finished = tokio::time::timeout_at(deadline, state.tasks.wait()).await;
                if finished.is_err() {
                    tracing::warn!(
                        running = state.tasks.len(),
                        ?grace,
                        "calls still running after the shutdown grace period are stopped"
                    );
                    state.sessions.clear();
                    #[cfg(feature = "legacy-sse")]
                    state.legacy.clear();
                }
                state.drained.cancel();
                // The streams send what they still hold within the grace period (a moment,
                // when it is spent); then every connection is closed.
                let flush = tokio::time::Instant::now() + Duration::from_millis(100);
                tokio::time::sleep_until(deadline.max(flush)).await;
                hard.cancel();
            });
        }
        serve::serve(
            listener,
            router(Arc::clone(&state), true),
            state.options.clone(),
            stopping,
        )
        .await;
        state.sessions.clear();
        Ok(())
    }

    /// The endpoint as an axum `Router`, to merge into an application of yours. The router
    /// is also a `tower::Service`. Sessions expire on a background task of the runtime the
    /// router runs on.
    ///
    /// Every route of the endpoint is behind its checks (`Host`, `Origin`, body size and
    /// time, the token); the connection-level ones — connection limits, head and idle
    /// timeouts — are those of the server you run the application with.
    pub fn http_router(&self, options: HttpOptions) -> Router {
        router(self.http_state(options), false)
    }

    fn http_state(&self, options: HttpOptions) -> Arc<HttpState> {
        let sessions = SessionTable::new(
            options.session_idle_timeout,
            options.max_sessions,
            options.max_sessions_per_client,
            options.max_in_flight_per_session,
            options.max_in_flight_per_client,
            options.session_store.is_some(),
        );
        let sessionless_in_flight = Arc::new(tokio::sync::Semaphore::new(
            options.max_in_flight_sessionless.max(1),
        ));
        let public_paths = options
            .routes()
            .into_iter()
            .filter(|r| r.public)
            .map(|r| r.path)
            .collect();
        let listeners = Arc::new(tokio::sync::Semaphore::new(
            options.max_in_flight_sessionless.max(1),
        ));
        let state = Arc::new(HttpState {
            server: self.clone(),
            sessionless_in_flight,
            listeners,
            public_paths,
            options,
            sessions,
            tasks: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            drained: CancellationToken::new(),
            #[cfg(feature = "legacy-sse")]
            legacy: legacy_sse::LegacySessions::default(),
        });
        spawn_expiry(&state);
        state
    }
}

/// The router: every route of the table, then the guard over all of them (and over the
/// fallback for unknown paths when the router stands alone; mounted in an application, the
/// application's own fallback is left alone), so no route can be served around it.
fn router(state: Arc<HttpState>, standalone: bool) -> Router {
    let mut router = Router::new();
    for (route, handler) in route_table(&state.options) {
        router = router.route(&route.path, handler);
    }
    if standalone {
        router = router.fallback(|| async { json_error(StatusCode::NOT_FOUND, "no such route") });
    }
    router
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            guard::admit,
        ))
        // The guard reads and bounds the body; the extractors behind it need no lower limit.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

/// Ends idle sessions, checking at a quarter of the idle timeout (at most every 30 s).
fn spawn_expiry(state: &Arc<HttpState>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = Arc::downgrade(state);
    let every = (state.options.session_idle_timeout / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(30));
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(state) = weak.upgrade() else { return };
            if state.shutdown.is_cancelled() {
                return;
            }
            let expired = state.sessions.expire_idle();
            if expired > 0 {
                tracing::debug!(expired, "idle sessions expired");
            }
        }
    });
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// An HTTP error whose body is a JSON-RPC error object with a null id.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response<Body> {
    let code = match status {
        StatusCode::NOT_FOUND => -32001,
        StatusCode::BAD_REQUEST
        | StatusCode::NOT_ACCEPTABLE
        | StatusCode::UNSUPPORTED_MEDIA_TYPE => crate::protocol::code::INVALID_REQUEST,
        _ => -32000,
    };
    json_response(status, error_frame(None, &RpcError::new(code, message)))
}

pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
