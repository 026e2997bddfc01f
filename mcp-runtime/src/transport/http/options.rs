//! [`HttpOptions`]: how the endpoint behaves, every default the safe one.

use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;

use super::auth::TokenVerifier;
use super::events::{EventStore, InMemoryEventStore};

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
    pub(crate) shared_session_recheck: Duration,
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
    pub(crate) metrics_path: Option<String>,
    pub(crate) metrics_scope: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        let loopback: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
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
            shared_session_recheck: Duration::from_secs(1),
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
            metrics_path: None,
            metrics_scope: None,
        }
    }
}

impl HttpOptions {
    /// The endpoint's path (`/mcp` by default). It must be no other route's: with the
    /// feature `legacy-sse`, `sse` and `messages` beside it (`/sse` and `/messages` for
    /// `/mcp`) are the older transport's; serving with a path that is refuses to start.
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
    /// the most sessions; when there is none, the new session is refused with 503. With
    /// sessions shared between replicas it bounds the copies this replica keeps: one dropped
    /// for room is read back from the store at its next request. The sessions of the legacy
    /// HTTP+SSE transport (feature `legacy-sse`) count too; they are refused past it, never
    /// ended for room.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// The most sessions one client may hold (1,000 unless set): a client is the subject of its
    /// token when [`auth`](HttpOptions::auth) is on, otherwise its peer address. Past it, a
    /// new session of that client ends its own session idle the longest, or is refused with
    /// 429 when each of them is busy; other clients' sessions are never touched.
    ///
    /// With sessions shared between replicas, each replica counts the sessions it holds
    /// copies of, and a session given up for a new one is ended on every replica.
    ///
    /// A client's sessions on the legacy HTTP+SSE transport (feature `legacy-sse`) count
    /// against the same quota: a new legacy session past it is refused with 429, and one of
    /// the endpoint gives up only another of the endpoint's.
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

    /// How long a replica serves a shared session from its own copy before it reads the
    /// shared record again (1 s unless set; at most a quarter of the idle timeout, so that
    /// a session in use never expires in the store). Meanwhile what other replicas change
    /// or end reaches the copy over the bus, and the request that made the change is
    /// answered once every replica has applied it (on the Redis bus; for at most 2 s); the
    /// recheck bounds how stale a copy can be when the bus loses an event. `Duration::ZERO`
    /// reads the shared record on every request: no copy is ever stale, and every request
    /// waits for the store.
    pub fn shared_session_recheck(mut self, every: Duration) -> Self {
        self.shared_session_recheck = every;
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
    /// headers (slowloris) holds a connection no longer than this. `Duration::MAX` sets no
    /// deadline. The connection's watchdog looks at its clock at least every
    /// min(this, [`idle_timeout`](Self::idle_timeout)), and not more often than every 10 ms:
    /// a timeout under 10 ms is kept to within 10 ms.
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

    /// How long a keep-alive connection may wait for its next request (60 s unless set);
    /// `Duration::MAX` keeps idle connections open.
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

    /// Serves the server's metrics at `path` (e.g. `/metrics`) in the Prometheus text format,
    /// and starts keeping them (see [`crate::metrics`]). Off by default. The route is behind
    /// the same checks as the MCP endpoint, the bearer token included when the server has a
    /// verifier: give the scraper a token of its own, and with
    /// [`metrics_scope`](Self::metrics_scope) keep the other callers out.
    ///
    /// ```
    /// use mcp_runtime::http::HttpOptions;
    ///
    /// let options = HttpOptions::default().metrics_route("/metrics");
    /// assert!(options.routes().iter().any(|r| r.path == "/metrics" && !r.public));
    /// ```
    ///
    /// # Panics
    ///
    /// When the routes are made ([`routes`](Self::routes), or a router for an application
    /// of your own), if `path` does not start with `/` or is another route's (the
    /// endpoint's, the metadata's, the legacy transport's). Serving answers these with an
    /// error instead, before it binds.
    pub fn metrics_route(mut self, path: impl Into<String>) -> Self {
        self.metrics_path = Some(path.into());
        self
    }

    /// The scope a token needs to read the metrics route (none by default: any token the
    /// server accepts). The metrics name every tool and how often each fails, across all
    /// callers; on a server shared by several users or tenants, keep them to the operator.
    ///
    /// ```
    /// use mcp_runtime::http::HttpOptions;
    ///
    /// let options = HttpOptions::default()
    ///     .metrics_route("/metrics")
    ///     .metrics_scope("metrics:read");
    /// let routes = options.routes();
    /// let metrics = routes.iter().find(|r| r.path == "/metrics").unwrap();
    /// assert_eq!(metrics.scope.as_deref(), Some("metrics:read"));
    /// ```
    pub fn metrics_scope(mut self, scope: impl Into<String>) -> Self {
        self.metrics_scope = Some(scope.into());
        self
    }
}

/// One route of the endpoint (see [`HttpOptions::routes`](HttpOptions::routes)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRoute {
    /// The path.
    pub path: String,
    /// The methods it answers.
    pub methods: Vec<Method>,
    /// Whether it is served without a token (the metadata that says how to get one).
    pub public: bool,
    /// The scope a token needs for it, beyond being valid (the metrics route's
    /// [`metrics_scope`](HttpOptions::metrics_scope)); none for the others.
    pub scope: Option<String>,
}

/// The host names a request may name in `Host` (any port) by default: loopback only.
pub(crate) const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

#[cfg(test)]
mod tests {
    use super::HttpOptions;

    #[test]
    #[should_panic(expected = "two routes on `/mcp`")]
    fn the_metrics_route_cannot_take_the_endpoints_path() {
        let _ = HttpOptions::default().metrics_route("/mcp").routes();
    }

    #[test]
    #[should_panic(expected = "`metrics` must start with `/`")]
    fn the_metrics_route_is_a_path() {
        let _ = HttpOptions::default().metrics_route("metrics").routes();
    }

    #[cfg(feature = "legacy-sse")]
    #[test]
    #[should_panic(expected = "two routes on `/sse`")]
    fn the_endpoint_cannot_take_the_legacy_streams_path() {
        let _ = HttpOptions::default().path("/sse").routes();
    }
}
