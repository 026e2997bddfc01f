//! [`ResponseCache`]: the results of read-only tools, kept for a while.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Layer, LayerFuture, McpRequest, Next};

/// The largest result kept, in bytes of JSON.
const MAX_KEPT_BYTES: usize = 256 * 1024;

/// Keeps the result of a `tools/call` of a tool annotated `read_only` (or `idempotent`
/// without side effects: `#[tool(annotations(read_only))]`), by caller, tool and
/// arguments, for `ttl`; the same call within that time is answered from the cache without
/// running the tool. Tool errors, calls that became tasks and multi round-trip requests are
/// never kept, nor results over 256 KiB. The cache holds at most `capacity` results,
/// forgetting the oldest first. Results are kept per caller ([`McpRequest::caller_key`]) and
/// per session, so no caller — and no other session of the same caller, which may see
/// other tools or speak another revision — is answered with another's result; requests
/// without a session or authentication are not cached.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::middleware::ResponseCache;
///
/// let server = mcp_runtime::server!().layer(ResponseCache::new(Duration::from_secs(30), 10_000));
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct ResponseCache {
    inner: Arc<Inner>,
}

struct Inner {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<String, (Value, Instant)>,
    /// Keys in the order they were stored, for forgetting the oldest.
    order: VecDeque<String>,
}

impl ResponseCache {
    /// A cache keeping each result for `ttl`, at most `capacity` of them.
    pub fn new(ttl: Duration, capacity: usize) -> ResponseCache {
        ResponseCache {
            inner: Arc::new(Inner {
                ttl,
                capacity: capacity.max(1),
                entries: Mutex::new(Entries::default()),
            }),
        }
    }

    /// How many results it holds now.
    pub fn len(&self) -> usize {
        self.entries().by_key.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.inner.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The key of a call worth caching, if it is one.
    fn key(request: &McpRequest) -> Option<String> {
        if request.method() != "tools/call" {
            return None;
        }
        let params = request.params();
        // A task, a multi round-trip request or its retry depends on more than its arguments.
        if ["task", "requestState", "inputResponses"]
            .iter()
            .any(|member| params.get(member).is_some())
        {
            return None;
        }
        let name = request.target()?;
        let annotations = request.server().tool_annotations(name)?;
        let side_effect_free = annotations.read_only == Some(true)
            || (annotations.idempotent == Some(true) && annotations.destructive == Some(false));
        if !side_effect_free {
            return None;
        }
        // What an inner layer hid changes what the call may do: such calls are not kept.
        if !request.hidden.is_empty() {
            return None;
        }
        // Kept per caller and per session: a session sees its own visibility and store, and
        // speaks its own revision, so no other session is answered with its results.
        let caller = request.caller_key()?;
        let session = request
            .session_id()
            .map(str::to_owned)
            .or_else(|| request.connection.map(|c| c.to_string()))
            .unwrap_or_default();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        Some(format!("{caller}\u{0}{session}\u{0}{name}\u{0}{arguments}"))
    }

    fn get(&self, key: &str) -> Option<Value> {
        let entries = self.entries();
        let (value, stored) = entries.by_key.get(key)?;
        (stored.elapsed() < self.inner.ttl).then(|| value.clone())
    }

    fn put(&self, key: String, value: Value) {
        let now = Instant::now();
        let mut entries = self.entries();
        let ttl = self.inner.ttl;
        // The expired go first, then the oldest while the cache is full.
        while let Some(oldest) = entries.order.front().cloned() {
            let expired = entries
                .by_key
                .get(&oldest)
                .is_none_or(|(_, stored)| now.duration_since(*stored) >= ttl);
            if !expired && entries.by_key.len() < self.inner.capacity {
                break;
            }
            entries.order.pop_front();
            entries.by_key.remove(&oldest);
        }
        if entries.by_key.insert(key.clone(), (value, now)).is_some() {
            entries.order.retain(|k| *k != key);
        }
        entries.order.push_back(key);
    }
}

impl Layer for ResponseCache {
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin(async move {
            let Some(key) = ResponseCache::key(&request) else {
                return next.run(request).await;
            };
            if let Some(cached) = self.get(&key) {
                return Ok(cached);
            }
            let result = next.run(request).await?;
            let complete = result.get("resultType").is_none_or(|t| t == "complete");
            let failed = result.get("isError").is_some_and(|e| e == true);
            let task = result.get("task").is_some();
            // A large result is not worth its memory: it is answered, not kept.
            let small = || result.to_string().len() <= MAX_KEPT_BYTES;
            if complete && !failed && !task && small() {
                self.put(key, result.clone());
            }
            Ok(result)
        })
    }
}
