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
mod headers;
#[cfg(feature = "legacy-sse")]
mod legacy_sse;
mod security;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::routing::get;
use axum::serve::ListenerExt;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use events::{EventFuture, EventStore, InMemoryEventStore, StreamRead};
pub use security::{AuthRejection, TokenVerifier};

use crate::protocol::{RpcError, error_frame};
use crate::server::Server;
use sessions::SessionTable;

/// How the HTTP endpoint behaves. Every default is the safe one: loopback hosts and origins
/// only, a 4 MiB body limit, sessions that expire after 30 idle minutes.
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

    /// The most sessions kept at once; past it, the one idle the longest is ended.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// The most requests one session may have in flight; more get 429.
    pub fn max_in_flight_per_session(mut self, requests: usize) -> Self {
        self.max_in_flight_per_session = requests;
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
        let router = router(Arc::clone(&state));
        let shutdown = state.shutdown.clone();
        let drained = state.drained.clone();
        let tasks = state.tasks.clone();
        let grace = self.shutdown_grace();
        // Without TCP_NODELAY each small SSE event waits for the peer's delayed ACK (~40 ms).
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(%e, "cannot set TCP_NODELAY");
            }
        });
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                shutdown.cancel();
                // The connections still open are the calls in flight and their streams;
                // once every handler is done, no stream has anything left to wait for.
                tokio::spawn(async move {
                    tasks.close();
                    // Calls get the grace period to finish; the streams of those still
                    // running then end, and the calls are dropped with the runtime.
                    if tokio::time::timeout(grace, tasks.wait()).await.is_err() {
                        tracing::warn!(
                            running = tasks.len(),
                            ?grace,
                            "calls still running after the shutdown grace period are stopped"
                        );
                    }
                    drained.cancel();
                });
            })
            .await?;
        // The grace period was spent above, while the connections closed.
        state.tasks.close();
        let _ = tokio::time::timeout(Duration::from_millis(100), state.tasks.wait()).await;
        state.sessions.clear();
        Ok(())
    }

    /// The endpoint as an axum `Router`, to merge into an application of yours. The router
    /// is also a `tower::Service`. Sessions expire on a background task of the runtime the
    /// router runs on.
    pub fn http_router(&self, options: HttpOptions) -> Router {
        router(self.http_state(options))
    }

    fn http_state(&self, options: HttpOptions) -> Arc<HttpState> {
        let sessions = SessionTable::new(
            options.session_idle_timeout,
            options.max_sessions,
            options.max_in_flight_per_session,
        );
        let sessionless_in_flight = Arc::new(tokio::sync::Semaphore::new(
            options.max_in_flight_sessionless.max(1),
        ));
        let state = Arc::new(HttpState {
            server: self.clone(),
            sessionless_in_flight,
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

fn router(state: Arc<HttpState>) -> Router {
    let path = state.options.path.clone();
    let max_body = state.options.max_body_bytes;
    let endpoint = Router::new()
        .route(
            &path,
            get(endpoint::get)
                .post(endpoint::post)
                .delete(endpoint::delete),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            security::authenticate,
        ));
    #[cfg(feature = "legacy-sse")]
    let endpoint = endpoint.merge(legacy_sse::routes(Arc::clone(&state)));
    Router::new()
        .merge(endpoint)
        .route(
            "/.well-known/oauth-protected-resource",
            get(security::protected_resource_metadata),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            security::check_host_and_origin,
        ))
        .layer(DefaultBodyLimit::max(max_body))
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
