//! [`ResponseCache`]: the results of read-only tools, kept for a while.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Layer, LayerFuture, McpRequest, Next};

/// The largest result kept, in bytes of JSON.
const MAX_KEPT_BYTES: usize = 256 * 1024;

/// The most bytes of results and keys (which hold the arguments) kept in all: without it,
/// one caller could make a cache of 10,000 hold 2.5 GB.
const MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;

/// Keeps the result of a `tools/call` of a tool annotated `read_only` (or `idempotent`
/// without side effects: `#[tool(annotations(read_only))]`), by caller, tool and
/// arguments, for `ttl`; the same call within that time is answered from the cache without
/// running the tool (nor anything below the cache: put checks that must run on every call,
/// such as a policy, outside it). Tool errors, calls that became tasks and multi round-trip requests are
/// never kept, nor results over 256 KiB. The cache holds at most `capacity` results, and
/// 64 MiB of results and arguments in all, forgetting the oldest first. Results are kept per caller ([`McpRequest::caller_key`]),
/// per grant (a token's scopes, client and claims: another token of the same subject is
/// answered only by the tool, whose scope check then runs) and per session, so no caller — and no other session of the same caller, which may see
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
    /// Each result, when it was stored, and the bytes it and its key take.
    by_key: HashMap<String, (Value, Instant, usize)>,
    /// Keys in the order they were stored, for forgetting the oldest.
    order: VecDeque<String>,
    /// The bytes of every result and key held.
    bytes: usize,
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
        // And per grant, not per subject alone: two tokens of one subject may hold other
        // scopes (a tool's scope check runs below the cache, so a result kept for the one
        // would be the other's without its scopes), belong to another client, or carry
        // other claims a tool reads.
        let grant = request.auth.as_deref().map(|auth| {
            let mut scopes: Vec<&str> = auth.scopes.iter().map(String::as_str).collect();
            scopes.sort_unstable();
            format!("{scopes:?}\u{0}{:?}\u{0}{}", auth.client_id, auth.claims)
        });
        let session = request
            .session_id()
            .map(str::to_owned)
            .or_else(|| request.connection.map(|c| c.to_string()))
            .unwrap_or_default();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let grant = grant.unwrap_or_default();
        Some(format!(
            "{caller}\u{0}{grant}\u{0}{session}\u{0}{name}\u{0}{arguments}"
        ))
    }

    fn get(&self, key: &str) -> Option<Value> {
        let entries = self.entries();
        let (value, stored, _) = entries.by_key.get(key)?;
        (stored.elapsed() < self.inner.ttl).then(|| value.clone())
    }

    fn put(&self, key: String, value: Value, result_bytes: usize) {
        let bytes = key.len() + result_bytes;
        if bytes > MAX_TOTAL_BYTES {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries();
        let ttl = self.inner.ttl;
        // The expired go first, then the oldest while the cache is full.
        while let Some(oldest) = entries.order.front().cloned() {
            let expired = entries
                .by_key
                .get(&oldest)
                .is_none_or(|(_, stored, _)| now.duration_since(*stored) >= ttl);
            let full = entries.by_key.len() >= self.inner.capacity
                || entries.bytes + bytes > MAX_TOTAL_BYTES;
            if !expired && !full {
                break;
            }
            entries.order.pop_front();
            if let Some((_, _, freed)) = entries.by_key.remove(&oldest) {
                entries.bytes -= freed;
            }
        }
        if let Some((_, _, replaced)) = entries.by_key.insert(key.clone(), (value, now, bytes)) {
            entries.bytes -= replaced;
            entries.order.retain(|k| *k != key);
        }
        entries.bytes += bytes;
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
            if complete && !failed && !task {
                let bytes = result.to_string().len();
                if bytes <= MAX_KEPT_BYTES {
                    self.put(key, result.clone(), bytes);
                }
            }
            Ok(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_holds_at_most_its_bytes_forgetting_the_oldest() {
        let cache = ResponseCache::new(Duration::from_secs(3600), 10_000);
        for n in 0..300 {
            cache.put(format!("key {n}"), Value::Null, MAX_KEPT_BYTES);
        }
        let entries = cache.entries();
        assert!(entries.bytes <= MAX_TOTAL_BYTES, "{} bytes", entries.bytes);
        // 64 MiB holds 255 results of 256 KiB with their keys, not 256.
        assert_eq!(entries.by_key.len(), 255);
        assert!(entries.by_key.contains_key("key 299"), "the newest is kept");
        assert!(
            !entries.by_key.contains_key("key 0"),
            "the oldest is forgotten"
        );
        let counted: usize = entries.by_key.values().map(|(_, _, bytes)| bytes).sum();
        assert_eq!(counted, entries.bytes);
    }
}
