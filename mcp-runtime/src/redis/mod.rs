//! Replicas behind a load balancer, sharing what they must in Redis (feature `redis`): the
//! [`Bus`](crate::cluster::Bus) on Redis pub/sub, handshake-era sessions as keys that expire
//! when idle, SSE events on Redis Streams, and tasks.
//!
//! ```no_run
//! use mcp_runtime::http::HttpOptions;
//! use mcp_runtime::redis::RedisCluster;
//!
//! # async fn run() -> mcp_runtime::Result<()> {
//! let redis = RedisCluster::connect("redis://127.0.0.1:6379").await?;
//! // Every replica the same key, so a request's `requestState` opens on any of them.
//! let key = std::env::var("MCP_STATE_KEY").expect("a shared key").into_bytes();
//! let server = redis
//!     .server(mcp_runtime::server!().request_state_keys(key, []))
//!     .build()?;
//! server
//!     .serve_http_with("0.0.0.0:8080", redis.http(HttpOptions::default()))
//!     .await
//! # }
//! ```
//!
//! All keys start with a prefix (`mcp` unless set), so several servers can share one Redis.
//! While Redis is unreachable, requests that need it are refused with HTTP 503 and a
//! JSON-RPC error saying so; service resumes on its own once Redis is back.

#[macro_use]
mod commands;
mod bus;
mod events;
mod session_store;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::cluster::StoreError;
use commands::store_error;

pub use bus::RedisBus;
pub use events::RedisEventStore;
pub use session_store::RedisSessionStore;
pub use tasks::RedisTaskStore;

/// How long one Redis command may take before the request that needs it fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// A connection to the Redis that replicas share, and the stores and bus built on it.
#[derive(Clone)]
pub struct RedisCluster {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: Arc<str>,
    bus: Arc<RedisBus>,
}

impl std::fmt::Debug for RedisCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCluster")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisCluster {
    /// Connects to Redis at `url` (`redis://host:port/db`), with keys under `mcp:`.
    pub async fn connect(url: &str) -> Result<RedisCluster, StoreError> {
        RedisCluster::connect_with_prefix(url, "mcp").await
    }

    /// Connects to Redis at `url`, with every key under `prefix:`.
    pub async fn connect_with_prefix(url: &str, prefix: &str) -> Result<RedisCluster, StoreError> {
        let client = redis::Client::open(url).map_err(store_error)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(COMMAND_TIMEOUT))
            .set_response_timeout(Some(COMMAND_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(store_error)?;
        let prefix: Arc<str> = Arc::from(prefix);
        let bus = Arc::new(
            RedisBus::new(client.clone(), connection.clone(), format!("{prefix}:bus"))
                .await
                .map_err(store_error)?,
        );
        Ok(RedisCluster {
            client,
            connection,
            prefix,
            bus,
        })
    }

    /// The bus between replicas, on Redis pub/sub.
    pub fn bus(&self) -> Arc<RedisBus> {
        Arc::clone(&self.bus)
    }

    /// Handshake-era sessions, shared.
    pub fn session_store(&self) -> Arc<RedisSessionStore> {
        Arc::new(RedisSessionStore::new(
            self.connection.clone(),
            format!("{}:session:", self.prefix),
        ))
    }

    /// SSE events, shared.
    pub fn event_store(&self) -> Arc<RedisEventStore> {
        Arc::new(RedisEventStore::new(
            self.connection.clone(),
            format!("{}:events:", self.prefix),
        ))
    }

    /// Tasks, shared.
    pub fn task_store(&self) -> Arc<RedisTaskStore> {
        Arc::new(RedisTaskStore::new(
            self.connection.clone(),
            format!("{}:task:", self.prefix),
        ))
    }

    /// A server builder that shares its bus and tasks here.
    pub fn server(&self, builder: crate::ServerBuilder) -> crate::ServerBuilder {
        builder.bus(self.bus()).task_store(self.task_store())
    }

    /// HTTP options that share sessions and SSE events here.
    pub fn http(&self, options: crate::http::HttpOptions) -> crate::http::HttpOptions {
        options
            .session_store(self.session_store())
            .event_store(self.event_store())
    }

    /// The underlying client, for what else you keep in the same Redis.
    pub fn client(&self) -> &redis::Client {
        &self.client
    }
}
