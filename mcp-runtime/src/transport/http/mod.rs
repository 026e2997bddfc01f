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

mod auth;
mod endpoint;
mod events;
mod guard;
mod headers;
#[cfg(feature = "legacy-sse")]
mod legacy_sse;
mod media;
mod memo;
mod options;
mod security;
mod serve;
mod session_table;
mod sse;
mod state;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::transport::tracker::Tasks;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode};
use axum::response::IntoResponse as _;
use axum::routing::{MethodRouter, get};
use tokio_util::sync::CancellationToken;

pub use auth::{AuthRejection, BearerTokens, TokenVerifier};
pub use events::{EventFuture, EventStore, EventStoreLimits, InMemoryEventStore, StreamRead};
pub use options::{HttpOptions, HttpRoute};

pub use crate::session::HttpRequest;

use crate::server::Server;
use session_table::SessionTable;
use state::{HttpState, json_error};

impl HttpOptions {
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

/// The metrics route: the server's metrics in the Prometheus text format.
async fn metrics_text(
    axum::extract::State(state): axum::extract::State<Arc<HttpState>>,
) -> axum::response::Response {
    let text = state
        .server
        .metrics()
        .render_prometheus(state.server.session_count());
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// Every route, with its handlers: the one list both the router and
/// [`HttpOptions::routes`] are made from.
fn route_table(options: &HttpOptions) -> Vec<(HttpRoute, MethodRouter<Arc<HttpState>>)> {
    let table = route_table_unchecked(options);
    if let Err(conflict) = check_routes(options, &table) {
        panic!("{conflict}");
    }
    table
}

/// The routes, in the order the router is given them, whether or not their paths conflict.
fn route_table_unchecked(options: &HttpOptions) -> Vec<(HttpRoute, MethodRouter<Arc<HttpState>>)> {
    let route = |path: &str, methods: &[Method], public: bool| HttpRoute {
        path: path.to_owned(),
        methods: methods.to_vec(),
        public,
        scope: None,
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
    if let Some(path) = &options.metrics_path {
        let metrics = HttpRoute {
            scope: options.metrics_scope.clone(),
            ..route(path, &[Method::GET], false)
        };
        table.push((metrics, get(metrics_text)));
    }
    #[cfg(feature = "legacy-sse")]
    table.extend(
        legacy_sse::routes(&options.path)
            .into_iter()
            .map(|(path, method, handler)| (route(&path, &[method], false), handler)),
    );
    table
}

/// Whether every route has a path of its own: two on one path would have the router refuse
/// to start (or one hide the other), so the conflict is said in words instead.
fn check_routes(
    options: &HttpOptions,
    table: &[(HttpRoute, MethodRouter<Arc<HttpState>>)],
) -> Result<(), String> {
    if let Some(path) = &options.metrics_path
        && !path.starts_with('/')
    {
        return Err(format!(
            "HttpOptions::metrics_route: `{path}` must start with `/`"
        ));
    }
    for (at, (route, _)) in table.iter().enumerate() {
        if table[..at].iter().any(|(r, _)| r.path == route.path) {
            return Err(format!(
                "HttpOptions: two routes on `{}` (the endpoint is at `{}`; beside it are the \
                 authorization metadata, the metrics route if any, and with `legacy-sse` the \
                 `sse` and `messages` routes of its parent): give the endpoint or the metrics \
                 route a path of its own",
                route.path, options.path
            ));
        }
    }
    Ok(())
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
        // Said before anything is bound or served, rather than as a panic of the router.
        check_routes(&options, &route_table_unchecked(&options)).map_err(crate::Error::Usage)?;
        let listener = tokio::net::TcpListener::bind(addr).await?;
        if crate::__private::on_single_threaded_main() {
            return self.serve_http_on_threads(listener, options).await;
        }
        self.serve_listener(listener, options).await
    }

    /// Serves HTTP on a multi-threaded scheduler of its own, for a `main` that runs on one
    /// thread because its command line named no HTTP address (stdio is fastest there; HTTP
    /// connections want every core). The caller's runtime waits, and keeps driving what was
    /// made on it.
    async fn serve_http_on_threads(
        &self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
    ) -> crate::Result<()> {
        let listener = listener.into_std()?;
        let server = self.clone();
        let (done, finished) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("mcp-http".into())
            .spawn(move || {
                let serve = || -> crate::Result<()> {
                    let runtime = tokio::runtime::Builder::new_multi_thread()
                        .enable_all()
                        .build()?;
                    let result = runtime.block_on(async {
                        let listener = tokio::net::TcpListener::from_std(listener)?;
                        server.serve_listener(listener, options).await
                    });
                    runtime.shutdown_timeout(Duration::from_millis(100));
                    result
                };
                let _ = done.send(serve());
            })?;
        finished.await.unwrap_or_else(|_| {
            Err(std::io::Error::other("the HTTP server's thread ended without an outcome").into())
        })
    }

    async fn serve_listener(
        &self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
    ) -> crate::Result<()> {
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
            Arc::clone(&state),
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
        let sessions = SessionTable::new(&options, self.clone());
        let sessionless_in_flight = Arc::new(tokio::sync::Semaphore::new(
            options.max_in_flight_sessionless.max(1),
        ));
        if options.metrics_path.is_some() {
            self.metrics().enable();
        }
        let routes = options.routes();
        let public_paths = routes
            .iter()
            .filter(|r| r.public)
            .map(|r| r.path.clone())
            .collect();
        let scoped_paths = routes
            .into_iter()
            .filter_map(|r| Some((r.path, r.scope?)))
            .collect();
        let listeners = Arc::new(tokio::sync::Semaphore::new(
            options.max_in_flight_sessionless.max(1),
        ));
        let state = Arc::new(HttpState {
            server: self.clone(),
            sessionless_in_flight,
            listeners,
            public_paths,
            scoped_paths,
            options,
            sessions,
            tasks: Tasks::new(),
            shutdown: CancellationToken::new(),
            drained: CancellationToken::new(),
            #[cfg(feature = "legacy-sse")]
            legacy: session_table::LegacySessions::default(),
        });
        spawn_expiry(&state);
        state
    }
}

/// The router: every route of the table, then the guard over all of them (and over the
/// fallback for unknown paths when the router stands alone; mounted in an application, the
/// application's own fallback is left alone), so no route can be served around it. Standing
/// alone, the endpoint's POSTs reach the endpoint without it, through the same guard
/// ([`serve::serve`]).
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
