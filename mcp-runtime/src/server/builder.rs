//! [`ServerBuilder`]: what a server is made of (its items, settings, policy, audit, stores)
//! and [`ServerBuilder::build`], which checks it all and builds every schema once.

use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use super::lifecycle::{Capabilities, initialize_result};
use super::{
    DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_NESTING_DEPTH, DEFAULT_PAGE_SIZE, DEFAULT_SHUTDOWN_GRACE, MIN_STATE_KEY_BYTES,
    Server, ServerInner, listeners,
};
use crate::protocol::{CacheHint, Implementation, ProtocolVersion};
use crate::registry::{
    CatalogueError, CataloguePrompt, CatalogueResource, CatalogueTool, Items, PromptDescriptor,
    ResourceDescriptor, ToolDescriptor, build_all,
};
use crate::schema::{SchemaProfile, ServerProfiles};
use crate::session::request_state;

/// Configures and builds a [`Server`]; usually started with [`server!`](crate::server!).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Say hello.
/// #[tool]
/// fn hello(name: String) -> String { format!("Hello, {name}!") }
///
/// # fn main() {
/// let server = mcp_runtime::server!()
///     .title("Greeter")
///     .instructions("Greets people.")
///     .auto_register(false)
///     .tools(mcp_runtime::tools![hello])
///     .build()
///     .unwrap();
/// assert_eq!(server.tool_names(), ["hello"]);
/// # }
/// ```
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<&'static ToolDescriptor>,
    prompts: Vec<&'static PromptDescriptor>,
    resources: Vec<&'static ResourceDescriptor>,
    auto_register: bool,
    schema_profile: Option<SchemaProfile>,
    client_schema_profiles: Vec<(String, SchemaProfile)>,
    per_client_schema_profiles: bool,
    policy: Option<crate::policy::Policy>,
    settings: Settings,
    audit: Arc<dyn crate::audit::Audit>,
    message_log: Option<Option<crate::MessageLog>>,
    trace_redact: Option<Vec<String>>,
    state_keys: Option<request_state::StateKeys>,
    state_lifetime: Duration,
    task_store: Option<Arc<dyn crate::tasks::TaskStore>>,
    bus: Option<Arc<dyn crate::cluster::Bus>>,
    task_ttl: Option<Duration>,
    task_poll_interval: Duration,
    states: crate::state::StateValues,
    layers: Vec<Arc<dyn crate::middleware::Layer>>,
    custom: super::custom::Custom,
    /// A name given to `method` or `on_notification` twice, or one MCP keeps.
    custom_refused: Option<(String, &'static str)>,
    extensions: serde_json::Map<String, serde_json::Value>,
    skills: Option<crate::Skills>,
    #[cfg(feature = "dynamic")]
    dynamic_tools: Vec<crate::DynamicTool>,
    #[cfg(feature = "dynamic")]
    dynamic_prompts: Vec<crate::DynamicPrompt>,
    #[cfg(feature = "dynamic")]
    dynamic_resources: Vec<crate::DynamicResource>,
    #[cfg(feature = "client")]
    mounts: Vec<crate::client::Mount>,
}

/// How long a task is kept after it is created, unless set.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);

impl Server {
    /// A builder for a server with this name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            auto_register: cfg!(feature = "auto-register"),
            schema_profile: None,
            client_schema_profiles: Vec::new(),
            per_client_schema_profiles: true,
            settings: Settings::default(),
            policy: None,
            audit: Arc::new(crate::audit::TracingAudit),
            message_log: None,
            trace_redact: None,
            state_keys: None,
            state_lifetime: request_state::STATE_LIFETIME,
            task_store: None,
            bus: None,
            task_ttl: Some(DEFAULT_TASK_TTL),
            task_poll_interval: Duration::from_millis(500),
            states: crate::state::StateValues::default(),
            layers: Vec::new(),
            custom: Default::default(),
            custom_refused: None,
            extensions: serde_json::Map::new(),
            skills: None,
            #[cfg(feature = "dynamic")]
            dynamic_tools: Vec::new(),
            #[cfg(feature = "dynamic")]
            dynamic_prompts: Vec::new(),
            #[cfg(feature = "dynamic")]
            dynamic_resources: Vec::new(),
            #[cfg(feature = "client")]
            mounts: Vec::new(),
        }
    }
}

/// The settings a server keeps as the builder set them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub page_size: usize,
    pub max_message_bytes: usize,
    pub max_nesting_depth: usize,
    pub max_in_flight: usize,
    pub tool_timeout: Option<Duration>,
    pub shutdown_grace: Duration,
    pub client_request_timeout: Duration,
    /// The cache hints of stateless list results and `server/discover`.
    pub list_cache: CacheHint,
    /// The cache hints of stateless `resources/read` results.
    pub read_cache: CacheHint,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            page_size: DEFAULT_PAGE_SIZE,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_nesting_depth: DEFAULT_MAX_NESTING_DEPTH,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            tool_timeout: None,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            client_request_timeout: DEFAULT_CLIENT_REQUEST_TIMEOUT,
            list_cache: CacheHint {
                ttl_ms: 60_000,
                public: true,
            },
            read_cache: CacheHint {
                ttl_ms: 0,
                public: false,
            },
        }
    }
}

impl ServerBuilder {
    /// Sets the human-readable title sent in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description sent in `serverInfo` (2025-11-25 and later).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the instructions sent at `initialize`: how and when to use this server's tools.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds tools explicitly (see [`tools!`](crate::tools!)). A tool that is also collected
    /// automatically is served once.
    pub fn tools(mut self, tools: impl IntoIterator<Item = &'static ToolDescriptor>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds prompts explicitly (see [`prompts!`](crate::prompts!)).
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = &'static PromptDescriptor>) -> Self {
        self.prompts.extend(prompts);
        self
    }

    /// Adds resources and resource templates explicitly (see [`resources!`](crate::resources!)).
    pub fn resources(
        mut self,
        resources: impl IntoIterator<Item = &'static ResourceDescriptor>,
    ) -> Self {
        self.resources.extend(resources);
        self
    }

    /// Whether to serve every `#[tool]` of the program (on by default with the
    /// `auto-register` feature). Off, only the tools given to [`ServerBuilder::tools`] are
    /// served.
    pub fn auto_register(mut self, on: bool) -> Self {
        self.auto_register = on && cfg!(feature = "auto-register");
        self
    }

    /// Sets how many items one page of a list result holds.
    pub fn page_size(mut self, items: usize) -> Self {
        self.settings.page_size = items.max(1);
        self
    }

    /// Sets the limit on one incoming message, in bytes.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_message_bytes = bytes;
        self
    }

    /// Sets how deeply arrays and objects may nest in one message (64 unless set; at most
    /// 128, serde_json's own limit); a deeper message is refused as invalid JSON-RPC.
    pub fn max_nesting_depth(mut self, depth: usize) -> Self {
        self.settings.max_nesting_depth = depth.clamp(1, 128);
        self
    }

    /// Sets how many requests one stdio connection may have in flight (64 unless set); more
    /// are refused with a JSON-RPC error until some finish. Calls that finish without
    /// waiting never count. Over HTTP the limit is the endpoint's
    /// (`HttpOptions::max_in_flight_per_session`, with the `http` feature).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.settings.max_in_flight = requests.max(1);
        self
    }

    /// Sets how long any tool may run (tools with `#[tool(timeout = "…")]` keep theirs):
    /// at the limit the call is stopped — its handler dropped at its next `.await` — and
    /// answered with a tool error saying so. Unlimited unless set.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.settings.tool_timeout = Some(timeout);
        self
    }

    /// Consults `policy` before every tool call: a call it refuses does not run, and is
    /// answered with a tool error whose `_meta` says `permission_denied` and names the stage
    /// that refused (see [`Policy`](crate::policy::Policy)).
    pub fn policy(mut self, policy: crate::policy::Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Hands one record per tool call to `sink` instead of `tracing` (see
    /// [`audit`](crate::audit)).
    pub fn audit(mut self, sink: Arc<dyn crate::audit::Audit>) -> Self {
        self.audit = sink;
        self
    }

    /// Logs every JSON-RPC message in and out to `log` (`None`: no log), whatever
    /// `MCP_TRACE` says; unset, the `MCP_TRACE` environment variable decides (`1` for
    /// standard error, a path for a file).
    pub fn message_log(mut self, log: Option<crate::MessageLog>) -> Self {
        self.message_log = Some(log);
        self
    }

    /// Replaces the values of members with these names (in any case, anywhere in a
    /// message: arguments, results, answers) with `"[redacted]"` in the message log;
    /// unset, the `MCP_TRACE_REDACT` environment variable names them (comma-separated).
    ///
    /// ```
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .trace_redact(["password", "api_key"])
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn trace_redact(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.trace_redact = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets how long the calls in flight may go on after a stdio client closed its input,
    /// or after an HTTP server got SIGTERM or Ctrl-C (5 s unless set); then they are
    /// cancelled and the server exits.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.settings.shutdown_grace = grace;
        self
    }

    /// Sets how long the server waits for the client to answer one of its requests; a
    /// handler whose request times out gets [`ClientError::Timeout`](crate::ClientError).
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.settings.client_request_timeout = timeout;
        self
    }

    /// Sets the key that seals the `requestState` of stateless multi round-trip requests, and
    /// older keys still accepted while clients may hold states they sealed. Unset, a random
    /// key is made for this process: a state it seals is refused by any other replica, so
    /// replicas behind a load balancer must share a key.
    ///
    /// Every key must have at least 32 bytes ([`MIN_STATE_KEY_BYTES`]): [`build`]
    /// (and so every `serve…`) fails naming the short one. Read keys from a secret store or
    /// the environment, never from a literal in code.
    ///
    /// ```
    /// let weak = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .request_state_keys(b"password".to_vec(), [])
    ///     .build();
    /// assert!(weak.unwrap_err().to_string().contains("at least 32"));
    /// ```
    ///
    /// [`build`]: ServerBuilder::build
    pub fn request_state_keys(
        mut self,
        current: impl Into<Vec<u8>>,
        previous: impl IntoIterator<Item = Vec<u8>>,
    ) -> Self {
        self.state_keys = Some(request_state::StateKeys::new(
            current.into(),
            previous.into_iter().collect(),
        ));
        self
    }

    /// Sets how long a `requestState` this server seals stays valid (15 minutes unless
    /// set; whole seconds, at least one): a client that retries later is refused with an
    /// invalid-params error and starts the request again. Replicas should agree on it.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .request_state_lifetime(Duration::from_secs(120))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn request_state_lifetime(mut self, lifetime: Duration) -> Self {
        self.state_lifetime = lifetime;
        self
    }

    /// Sets the cache hints of stateless list results (`ttlMs`, `cacheScope`): one minute,
    /// public, unless set.
    pub fn list_cache_hint(mut self, ttl: Duration, public: bool) -> Self {
        self.settings.list_cache = CacheHint {
            ttl_ms: ttl.as_millis() as u64,
            public,
        };
        self
    }

    /// Sets the cache hints of stateless `resources/read` results: not cached, private,
    /// unless set.
    pub fn read_cache_hint(mut self, ttl: Duration, public: bool) -> Self {
        self.settings.read_cache = CacheHint {
            ttl_ms: ttl.as_millis() as u64,
            public,
        };
        self
    }

    /// Keeps tasks (the tasks extension) in this store: an [`InMemoryTaskStore`] unless set,
    /// which only this process can read — replicas behind a load balancer need a shared
    /// one.
    ///
    /// [`InMemoryTaskStore`]: crate::tasks::InMemoryTaskStore
    pub fn task_store(mut self, store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Makes this server one replica of several: changes, task states, session states and
    /// clients' answers go to the others over `bus`, and theirs come here (see
    /// [`cluster`](crate::cluster); the `redis` feature provides one).
    pub fn bus(mut self, bus: Arc<dyn crate::cluster::Bus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// How long a task is kept after it is created (its `ttlMs`; one hour unless set);
    /// `None` keeps tasks for as long as the store does.
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How often clients are asked to poll a task (`pollIntervalMs`; half a second unless
    /// set).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.task_poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Sends every tool's schemas in this profile, to every client (tools with a
    /// `schema_profile` of their own keep theirs). This turns off the choice of a profile per
    /// client (see [`ServerBuilder::per_client_schema_profiles`]).
    ///
    /// ```
    /// use mcp_runtime::schema::SchemaProfile;
    ///
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .schema_profile(SchemaProfile::Draft07)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.schema_profile_for_client("claude-ai"), &SchemaProfile::Draft07);
    /// ```
    pub fn schema_profile(mut self, profile: SchemaProfile) -> Self {
        self.schema_profile = Some(profile);
        self
    }

    /// Gives clients whose `clientInfo.name` matches `name_pattern` this profile. The pattern
    /// is compared without regard to ASCII case, and `*` stands for any run of characters.
    /// Entries added later are tried first, and all before the built-in table
    /// ([`known_clients`](crate::schema::known_clients)); to keep a known client on the
    /// default, give it [`SchemaProfile::Default`].
    pub fn schema_profile_for_client(
        mut self,
        name_pattern: impl Into<String>,
        profile: SchemaProfile,
    ) -> Self {
        self.client_schema_profiles
            .push((name_pattern.into(), profile));
        self
    }

    /// Whether each session's schema profile is chosen from the `clientInfo.name` its client
    /// sends at `initialize` (on by default). The built-in table only names clients known to
    /// refuse what the default schemas contain, and only gives them profiles that accept
    /// every argument the default schema accepts, so a client it names can only gain; a
    /// client it does not name gets the default.
    pub fn per_client_schema_profiles(mut self, on: bool) -> Self {
        self.per_client_schema_profiles = on;
        self
    }

    /// Gives the server a value that handlers take as a [`State<T>`](crate::State) parameter
    /// (a database pool, a configuration, an HTTP client), one of each type. Every call
    /// shares it; `T` is often an `Arc` or a pool that is cheap to share already, and
    /// whatever changes in it needs its own lock. A server whose handlers take a type it was
    /// not given fails to [`build`](Self::build), naming the handler and the type.
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::State;
    ///
    /// struct Config {
    ///     greeting: String,
    /// }
    ///
    /// /// Greet someone.
    /// #[tool]
    /// fn hello(config: State<Config>, name: String) -> String {
    ///     format!("{}, {name}", config.greeting)
    /// }
    ///
    /// # fn main() {
    /// let refused = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .tools(mcp_runtime::tools![hello])
    ///     .build()
    ///     .unwrap_err();
    /// assert!(refused.to_string().contains("takes `State<Config>`"), "{refused}");
    ///
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .tools(mcp_runtime::tools![hello])
    ///     .state(Config { greeting: "Hello".into() })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.state::<Config>().unwrap().greeting, "Hello");
    /// # }
    /// ```
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(Arc::new(value));
        self
    }

    /// Adds a layer around every request and notification the server receives (see
    /// [`middleware`](crate::middleware)). The first layer added is the outermost: it sees a
    /// request first and its result last.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_runtime::middleware::{RateLimit, Timing};
    ///
    /// let timing = Timing::new();
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .layer(timing.clone())
    ///     .layer(RateLimit::per_minute(600))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn layer(mut self, layer: impl crate::middleware::Layer) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Adds a JSON-RPC method of the server's own (`acme/reindex`, `fs/readFile`): its
    /// parameters are read into `P` (a wrong shape is `-32602`, naming the problem), its
    /// handler gets a [`Context`](crate::Context) as a tool does (cancellation, progress,
    /// the caller), and its result is serialised as the response. It is served in both eras,
    /// through the server's layers and limits. A name MCP uses or keeps (`tools/…`,
    /// `notifications/…`, `initialize`, `rpc.…`) or given twice fails [`build`](Self::build).
    ///
    /// ```
    /// use mcp_runtime::protocol::RpcError;
    /// use mcp_runtime::serde::{Deserialize, Serialize};
    ///
    /// #[derive(Deserialize)]
    /// #[serde(crate = "mcp_runtime::serde")]
    /// struct Reindex {
    ///     collection: String,
    /// }
    ///
    /// #[derive(Serialize)]
    /// #[serde(crate = "mcp_runtime::serde")]
    /// struct Reindexed {
    ///     documents: u64,
    /// }
    ///
    /// # #[mcp_runtime::main]
    /// # async fn main() {
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .method("acme/reindex", |_ctx, p: Reindex| async move {
    ///         if p.collection.is_empty() {
    ///             return Err(RpcError::invalid_params("name a collection"));
    ///         }
    ///         Ok(Reindexed { documents: 42 })
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let client = server.connect_memory();
    /// client.initialize().await.unwrap();
    /// let done = client.request("acme/reindex", serde_json::json!({"collection": "docs"})).await;
    /// assert_eq!(done.unwrap(), serde_json::json!({"documents": 42}));
    /// # }
    /// ```
    pub fn method<P, R, F, Fut>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        P: serde::de::DeserializeOwned + Send + 'static,
        R: serde::Serialize + 'static,
        F: Fn(crate::Context, P) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R, crate::protocol::RpcError>> + Send + 'static,
    {
        let name = name.into();
        self.check_custom_name(&name);
        self.custom
            .methods
            .insert(name, super::custom::method_handler(handler));
        self
    }

    /// Handles a notification of the client's that is the server's own (`acme/ping`); its
    /// parameters are read into `P`, and unreadable ones are ignored (a notification has no
    /// answer). The same names are refused as for [`method`](Self::method).
    pub fn on_notification<P, F>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        P: serde::de::DeserializeOwned + 'static,
        F: Fn(&Server, P) + Send + Sync + 'static,
    {
        let name = name.into();
        self.check_custom_name(&name);
        let handler = super::custom::notification_handler(&name, handler);
        self.custom.notifications.insert(name, handler);
        self
    }

    /// Declares an extension the server speaks (its id, e.g. `com.acme/search`, and its
    /// settings, usually `{}`): under `capabilities.extensions` in the stateless era's
    /// `server/discover`, and under `capabilities.experimental` in the `initialize` result
    /// of the handshake era, which has no `extensions`.
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Mounts another server's catalogue under a prefix (feature `client`; see
    /// [`Mount`](crate::client::Mount)): its tools and prompts listed as `{prefix}_{name}`,
    /// its resources under their own URIs, everything routed to it. A name or URI that is
    /// already taken is refused by [`build`](ServerBuilder::build).
    #[cfg(feature = "client")]
    pub fn mount(mut self, mount: crate::client::Mount) -> Self {
        let (tools, prompts, resources) = mount.items();
        self.dynamic_tools.extend(tools);
        self.dynamic_prompts.extend(prompts);
        self.dynamic_resources.extend(resources);
        self.mounts.push(mount);
        self
    }

    /// Adds a tool made at run time (feature `dynamic`; see [`DynamicTool`](crate::DynamicTool)).
    /// Its schema is checked when the server is built, against the server's schema profile.
    #[cfg(feature = "dynamic")]
    pub fn dynamic_tool(mut self, tool: crate::DynamicTool) -> Self {
        self.dynamic_tools.push(tool);
        self
    }

    /// Adds a prompt made at run time (feature `dynamic`; see
    /// [`DynamicPrompt`](crate::DynamicPrompt)).
    #[cfg(feature = "dynamic")]
    pub fn dynamic_prompt(mut self, prompt: crate::DynamicPrompt) -> Self {
        self.dynamic_prompts.push(prompt);
        self
    }

    /// Adds a resource or resource template made at run time (feature `dynamic`; see
    /// [`DynamicResource`](crate::DynamicResource)). Its URI template is checked when the
    /// server is built.
    #[cfg(feature = "dynamic")]
    pub fn dynamic_resource(mut self, resource: crate::DynamicResource) -> Self {
        self.dynamic_resources.push(resource);
        self
    }

    /// Serves Agent Skills as the `io.modelcontextprotocol/skills` extension (see
    /// [`Skills`](crate::Skills)): `skills/list`, `skills/get`, `resources/directory/read`,
    /// and each file as a `skill://` resource. Skills that break the extension's rules fail
    /// [`build`](Self::build), saying which and why.
    pub fn skills(mut self, skills: crate::Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    fn check_custom_name(&mut self, name: &str) {
        if self.custom_refused.is_some() {
            return;
        }
        let taken =
            self.custom.methods.contains_key(name) || self.custom.notifications.contains_key(name);
        let problem = if taken {
            Some("it was given twice")
        } else {
            super::custom::reserved(name)
        };
        if let Some(problem) = problem {
            self.custom_refused = Some((name.to_owned(), problem));
        }
    }

    /// Serves the tools of a [`#[toolbox]`](crate::toolbox) `impl` block, whose `&self` is
    /// `value` (which is also state of its type, as [`state`](Self::state) gives).
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    ///
    /// struct Counter {
    ///     step: u64,
    /// }
    ///
    /// #[toolbox]
    /// impl Counter {
    ///     /// Add the step to a number.
    ///     #[tool]
    ///     fn step(&self, n: u64) -> u64 {
    ///         n + self.step
    ///     }
    /// }
    ///
    /// # fn main() {
    /// let server = mcp_runtime::server!()
    ///     .auto_register(false)
    ///     .toolbox(Counter { step: 2 })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.tool_names(), ["step"]);
    /// # }
    /// ```
    pub fn toolbox<T: crate::state::Toolbox>(mut self, value: T) -> Self {
        self.states.insert(Arc::new(value));
        self.tools.extend(T::__tools());
        self
    }

    /// Builds the server: collects and checks the catalogue and builds every schema.
    pub fn build(#[allow(unused_mut)] mut self) -> Result<Server, CatalogueError> {
        #[cfg(feature = "client")]
        let mounts = std::mem::take(&mut self.mounts);
        if let Some(keys) = &self.state_keys {
            keys.check(MIN_STATE_KEY_BYTES)
                .map_err(|(which, bytes)| CatalogueError::WeakRequestStateKey { which, bytes })?;
        }
        if let Some((name, problem)) = self.custom_refused {
            return Err(CatalogueError::ReservedMethod { name, problem });
        }
        let skills = match self.skills {
            Some(skills) => skills
                .build()
                .map_err(|problem| CatalogueError::InvalidSkills { problem })?,
            None => Default::default(),
        };
        let mut extensions = self.extensions;
        if !skills.is_empty() {
            extensions.insert(
                crate::skills::SKILLS_EXTENSION.into(),
                serde_json::json!({ "directoryRead": true }),
            );
        }
        let states = self
            .states
            .finish()
            .map_err(|type_name| CatalogueError::DuplicateState { type_name })?;
        let mut items = Items::new(&states);
        if self.auto_register {
            items.add_registered()?;
        }
        items
            .tools
            .add(build_all(self.tools, CatalogueTool::build)?)?;
        #[cfg(feature = "dynamic")]
        {
            let profile = self.schema_profile.clone().unwrap_or_default();
            let built = self
                .dynamic_tools
                .iter()
                .map(|tool| tool.build(&profile))
                .collect::<Result<Vec<_>, _>>()?;
            items.tools.add(built)?;
            let prompts = self
                .dynamic_prompts
                .iter()
                .map(crate::DynamicPrompt::build)
                .collect::<Result<Vec<_>, _>>()?;
            let resources = self
                .dynamic_resources
                .iter()
                .map(crate::DynamicResource::build)
                .collect::<Result<Vec<_>, _>>()?;
            items.prompts.add(prompts)?;
            items.resources.add(resources)?;
        }
        items
            .prompts
            .add(build_all(self.prompts, CataloguePrompt::build)?)?;
        items
            .resources
            .add(build_all(self.resources, CatalogueResource::build)?)?;
        let catalogue = items.snapshot();
        let capabilities = Capabilities {
            tasks: catalogue
                .tools
                .iter()
                .any(|t| t.descriptor.task != crate::tasks::TaskSupport::Never),
            tools: !items.tools.is_empty(),
            prompts: !items.prompts.is_empty(),
            resources: !items.resources.is_empty() || !skills.is_empty(),
            completions: catalogue
                .prompts
                .iter()
                .any(|p| !p.descriptor.completions.is_empty() || p.completer.is_some())
                || catalogue
                    .templates
                    .iter()
                    .any(|t| !t.descriptor.completions.is_empty() || t.completer.is_some()),
        };
        let initialize_results = ProtocolVersion::HANDSHAKE.map(|v| {
            initialize_result(
                &self.info,
                self.instructions.as_deref(),
                capabilities,
                &extensions,
                v,
            )
        });
        let server = Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                settings: self.settings,
                states,
                layers: crate::middleware::Stack::new(self.layers),
                custom: self.custom,
                extensions,
                skills,
                policy: self.policy,
                audit: self.audit,
                trace: self
                    .message_log
                    .unwrap_or_else(crate::MessageLog::from_env)
                    .and_then(|log| {
                        match crate::message_log::MessageTrace::open(
                            &log,
                            self.trace_redact
                                .unwrap_or_else(crate::message_log::redact_from_env),
                        ) {
                            Ok(trace) => Some(trace),
                            Err(e) => {
                                eprintln!("mcp: cannot open the message log {log:?}: {e}");
                                None
                            }
                        }
                    }),
                state_keys: self
                    .state_keys
                    .unwrap_or_else(request_state::StateKeys::random)
                    .lasting(self.state_lifetime),
                tasks: crate::tasks::TaskSettings {
                    store: self
                        .task_store
                        .unwrap_or_else(|| Arc::new(crate::tasks::InMemoryTaskStore::default())),
                    ttl: self.task_ttl,
                    poll_interval: self.task_poll_interval,
                    running: crate::tasks::running_tasks(),
                },
                initialize_results,
                capabilities,
                items: Mutex::new(items),
                catalogue: RwLock::new(Arc::new(catalogue)),
                sessions: Mutex::new(Vec::new()),
                listeners: listeners::Listeners::default(),
                bus: self.bus.clone(),
                keyed_sessions: Mutex::new(std::collections::HashMap::new()),
                session_events: std::array::from_fn(|_| std::sync::atomic::AtomicU64::new(0)),
                pending_changes: AtomicU8::new(0),
                schema_profiles: ServerProfiles::new(
                    self.schema_profile,
                    self.per_client_schema_profiles,
                    self.client_schema_profiles,
                ),
                metrics: crate::metrics::Metrics::default(),
            }),
        };
        server.join_cluster();
        #[cfg(feature = "client")]
        for mount in mounts {
            mount.follow(&server);
        }
        Ok(server)
    }

    /// Builds the server and serves it on standard input and output until the client closes
    /// standard input.
    pub async fn serve_stdio(self) -> crate::Result<()> {
        self.build()?.serve_stdio().await
    }

    /// Builds the server and serves it as the command line says: on standard input and
    /// output by default, on Streamable HTTP with `--http ADDR` (feature `http`).
    pub async fn serve(self) -> crate::Result<()> {
        self.build()?.serve().await
    }

    /// Builds the server and serves Streamable HTTP at `addr` (feature `http`).
    #[cfg(feature = "http")]
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> crate::Result<()> {
        self.build()?.serve_http(addr).await
    }
}
