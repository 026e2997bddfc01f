//! The server: the [`Server`] value (its settings, its catalogue, its live sessions and
//! listeners) and what others ask of it. How it is built is `builder.rs`; what it declares
//! to clients, `lifecycle.rs`; the dispatch of one message, `dispatch.rs`, with one file per
//! area of methods beside it.

mod builder;
mod changes;
pub(crate) mod cluster;
mod completion;
mod custom;
mod dispatch;
mod handlers;
mod layered;
mod lifecycle;
mod listeners;
mod lists;
mod observe;
mod request;
mod scopes;
mod skills;
pub(crate) mod stateless;
mod subscriptions;
pub(crate) mod tasks;

use std::fmt;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use crate::protocol::{CacheHint, Implementation, Needs};
use crate::registry::{Catalogue, Items};
use crate::schema::{SchemaProfile, ServerProfiles};
use crate::session::Session;
use crate::session::request_state;
use builder::Settings;
use lifecycle::Capabilities;
#[cfg(feature = "multi-thread")]
pub(crate) use lifecycle::http_requested;

pub use crate::session::MAX_SUBSCRIPTIONS;
pub use crate::tasks::{MAX_RUNNING_TASKS, MAX_RUNNING_TASKS_PER_OWNER};
pub use builder::{DEFAULT_TASK_TTL, ServerBuilder};
pub use dispatch::MAX_BATCH_ITEMS;
pub(crate) use request::Routed;

/// The default number of items on one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 200;

/// The default limit on one incoming message, in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How long the server waits, by default, for the client to answer one of its requests
/// (sampling, elicitation, roots, ping).
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The default limit on requests one connection (or HTTP session) may have in flight.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// The default limit on how deeply arrays and objects may nest in one message.
pub const DEFAULT_MAX_NESTING_DEPTH: usize = 64;

/// How long, by default, the calls in flight may go on after a stdio client closed its
/// input, before they are cancelled.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The fewest bytes a `requestState` key may have (the output size of its HMAC-SHA256).
pub const MIN_STATE_KEY_BYTES: usize = 32;

/// Starts a [`ServerBuilder`] named after the crate that calls it (its `Cargo.toml` name and
/// version become `serverInfo`).
///
/// ```standalone_crate
/// let server = mcp_runtime::server!().instructions("Arithmetic helpers").build().unwrap();
/// assert_eq!(server.info().name, env!("CARGO_PKG_NAME"));
/// ```
#[macro_export]
macro_rules! server {
    () => {
        $crate::Server::builder(
            ::std::env!("CARGO_PKG_NAME"),
            ::std::env!("CARGO_PKG_VERSION"),
        )
    };
}

/// A built MCP server: an immutable catalogue and settings, cheap to clone and to share
/// between connections.
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

struct ServerInner {
    info: Implementation,
    settings: Settings,
    /// The values handlers take as `State<T>`.
    states: crate::state::States,
    /// The layers around every request and notification, outermost first.
    layers: crate::middleware::Stack,
    /// The server's own methods and notifications.
    custom: custom::Custom,
    /// The skills it serves (the skills extension).
    skills: crate::skills::SkillSet,
    /// The extensions the server declares, by id, with their settings.
    extensions: serde_json::Map<String, serde_json::Value>,
    /// Consulted before every tool call.
    policy: Option<crate::policy::Policy>,
    /// Takes one record per tool call.
    audit: Arc<dyn crate::audit::Audit>,
    /// Every message in and out (`MCP_TRACE`), when asked for.
    trace: Option<crate::message_log::MessageTrace>,
    /// Seals and opens the `requestState` of stateless multi round-trip requests.
    state_keys: request_state::StateKeys,
    /// Where tasks are kept, and how they are described.
    tasks: crate::tasks::TaskSettings,
    /// The `initialize` result, serialised once per revision.
    initialize_results: [String; 4],
    capabilities: Capabilities,
    /// Every item, enabled or not; changed at run time.
    items: Mutex<Items>,
    /// What is enabled now, published anew after each change.
    catalogue: RwLock<Arc<Catalogue>>,
    /// The live sessions, for notifications that go to every client.
    sessions: Mutex<Vec<Weak<Session>>>,
    /// The open `subscriptions/listen` requests (2026-07-28).
    listeners: listeners::Listeners,
    /// The other replicas, when the server is one of several.
    bus: Option<Arc<dyn crate::cluster::Bus>>,
    /// This process's sessions by their shared key (the `Mcp-Session-Id`), for events about
    /// them from other replicas.
    keyed_sessions: Mutex<std::collections::HashMap<String, Weak<Session>>>,
    /// Counts the other replicas' changes and ends of sessions, by a hash of the session's id
    /// into a few counters, so that a session's record read from the shared store while one
    /// came in is not taken as current.
    session_events: [std::sync::atomic::AtomicU64; cluster::SESSION_EVENT_COUNTERS],
    /// Kinds of list changed since the last `list_changed` notifications went out.
    pending_changes: AtomicU8,
    /// The schema profiles served, and which client gets which.
    schema_profiles: ServerProfiles,
    /// What it is doing, in numbers (kept once enabled).
    metrics: crate::metrics::Metrics,
}

/// A server that may have been dropped (for callbacks that must not keep it alive).
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct WeakServer(Weak<ServerInner>);

#[cfg_attr(not(feature = "otel"), allow(dead_code))]
impl WeakServer {
    pub(crate) fn upgrade(&self) -> Option<Server> {
        self.0.upgrade().map(|inner| Server { inner })
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.catalogue().tools.len())
            .finish_non_exhaustive()
    }
}

impl Server {
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) fn downgrade(&self) -> WeakServer {
        WeakServer(Arc::downgrade(&self.inner))
    }

    /// The server's name and version, as sent in `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The names of the enabled tools, in the order `tools/list` gives them.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.catalogue()
            .tools
            .iter()
            .map(|t| t.descriptor.name)
            .collect()
    }

    /// The names of the enabled prompts, in the order `prompts/list` gives them.
    pub fn prompt_names(&self) -> Vec<&'static str> {
        self.catalogue()
            .prompts
            .iter()
            .map(|p| p.descriptor.name)
            .collect()
    }

    /// The state value of type `T` the server was given
    /// ([`ServerBuilder::state`](crate::ServerBuilder::state)), if any.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<crate::State<T>> {
        self.inner.states.get()
    }

    /// The behaviour hints of a tool the server offers now, by name.
    pub fn tool_annotations(&self, name: &str) -> Option<crate::protocol::ToolAnnotations> {
        self.catalogue()
            .tool(name)
            .map(|t| t.descriptor.annotations)
    }

    /// A tool's name as its descriptor holds it (for records that outlive the request).
    pub(crate) fn tool_static_name(&self, name: &str) -> Option<&'static str> {
        self.catalogue().tool(name).map(|t| t.descriptor.name)
    }

    /// The limit on one incoming message, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.inner.settings.max_message_bytes
    }

    /// How long the server waits for the client to answer one of its requests.
    pub fn client_request_timeout(&self) -> Duration {
        self.inner.settings.client_request_timeout
    }

    /// The limit on how deeply arrays and objects may nest in one message.
    pub fn max_nesting_depth(&self) -> usize {
        self.inner.settings.max_nesting_depth
    }

    /// The limit on requests one stdio connection may have in flight.
    pub fn max_in_flight(&self) -> usize {
        self.inner.settings.max_in_flight
    }

    /// How long calls in flight may go on after a stdio client closed its input, or after
    /// an HTTP server was told to stop.
    pub fn shutdown_grace(&self) -> Duration {
        self.inner.settings.shutdown_grace
    }

    pub(crate) fn tool_timeout(&self) -> Option<Duration> {
        self.inner.settings.tool_timeout
    }

    pub(crate) fn policy(&self) -> Option<&crate::policy::Policy> {
        self.inner.policy.as_ref()
    }

    pub(crate) fn audit(&self) -> &Arc<dyn crate::audit::Audit> {
        &self.inner.audit
    }

    /// Logs a message received, when the message log is on.
    pub(crate) fn trace_in(&self, message: &[u8]) {
        if let Some(trace) = &self.inner.trace {
            trace.incoming(message);
        }
    }

    /// Logs a message sent, when the message log is on.
    pub(crate) fn trace_out(&self, message: &[u8]) {
        if let Some(trace) = &self.inner.trace {
            trace.outgoing(message);
        }
    }

    /// The schema profile a client that sends this `clientInfo.name` gets in `tools/list`
    /// (tools with a `schema_profile` of their own keep theirs).
    ///
    /// ```
    /// use mcp_runtime::schema::SchemaProfile;
    ///
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .schema_profile_for_client("my-agent*", SchemaProfile::OpenAiStrict)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.schema_profile_for_client("claude-ai"), &SchemaProfile::Anthropic);
    /// assert_eq!(server.schema_profile_for_client("my-agent-2"), &SchemaProfile::OpenAiStrict);
    /// assert_eq!(server.schema_profile_for_client("unknown"), &SchemaProfile::Default);
    /// ```
    pub fn schema_profile_for_client(&self, client_name: &str) -> &SchemaProfile {
        let profiles = &self.inner.schema_profiles;
        profiles.get(profiles.slot_for_client(client_name))
    }

    pub(crate) fn schema_profiles(&self) -> &ServerProfiles {
        &self.inner.schema_profiles
    }

    /// The schema-profile slot of a session's client.
    pub(crate) fn schema_slot(&self, session: &Session) -> usize {
        let profiles = &self.inner.schema_profiles;
        if !profiles.per_client() {
            return profiles.base_slot();
        }
        session
            .schema_slot(|name| profiles.slot_for_client(name))
            .unwrap_or(profiles.base_slot())
    }

    /// What is enabled now.
    pub(crate) fn catalogue(&self) -> Arc<Catalogue> {
        Arc::clone(
            &self
                .inner
                .catalogue
                .read()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// What one session sees: the catalogue, through the session's own visibility when it
    /// has one (built once per change of either, and kept with the session).
    pub(crate) fn catalogue_for(
        &self,
        session: &Session,
        hidden: Option<&crate::session::SessionVisibility>,
    ) -> Arc<Catalogue> {
        if let Some(hidden) = hidden {
            // What the layers hid from one request: a view of its own, never kept.
            let mut visibility = if session.is_session() {
                session.data().visibility().clone()
            } else {
                Default::default()
            };
            visibility.overlay(hidden);
            return Arc::new(
                self.inner
                    .items
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .snapshot_for(Some(&visibility)),
            );
        }
        let base = self.catalogue();
        if !session.has_own_visibility() {
            return base;
        }
        let data = session.data();
        let version = data.visibility_version();
        let mut cached = session.view();
        if let Some(view) = cached.as_ref()
            && std::ptr::addr_eq(Arc::as_ptr(&view.base), Arc::as_ptr(&base))
            && view.version == version
            && let Ok(view) = Arc::clone(&view.view).downcast::<Catalogue>()
        {
            return view;
        }
        let view = Arc::new(
            self.inner
                .items
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .snapshot_for(Some(data.visibility())),
        );
        *cached = Some(crate::session::CachedView {
            base,
            version,
            view: Arc::clone(&view) as Arc<dyn std::any::Any + Send + Sync>,
        });
        view
    }

    pub(crate) fn state_keys(&self) -> &request_state::StateKeys {
        &self.inner.state_keys
    }

    pub(crate) fn read_cache(&self) -> CacheHint {
        self.inner.settings.read_cache
    }

    /// Whether the server serves what a method needs (what it declared when built).
    pub(crate) fn has(&self, needs: Needs) -> bool {
        let declared = self.inner.capabilities;
        match needs {
            Needs::Nothing => true,
            Needs::Tools => declared.tools,
            Needs::Prompts => declared.prompts,
            Needs::Resources => declared.resources,
            Needs::PromptsOrResources => declared.prompts || declared.resources,
            Needs::Tasks => declared.tasks,
            Needs::Skills => !self.inner.skills.is_empty(),
        }
    }

    pub(crate) fn register_session(&self, session: &Arc<Session>) {
        session.announce_here();
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Ended sessions are swept before the list would grow, so opening one stays
        // constant-time on average however many are live.
        if sessions.len() == sessions.capacity() {
            sessions.retain(|s| s.strong_count() > 0);
            // Mostly live: room for as many again, so the next sweep is as far off.
            let live = sessions.len();
            sessions.reserve(live);
        }
        sessions.push(Arc::downgrade(session));
    }

    /// The live sessions that finished `initialize`.
    pub(crate) fn initialized_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        sessions
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|s| s.negotiated().is_some())
            .collect()
    }
}
