//! [`RateLimit`]: a token bucket per caller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Layer, LayerFuture, McpRequest, Next, tool_error_result};
use crate::protocol::RpcError;

/// The JSON-RPC error code of a request refused by [`RateLimit`] (a server error, in the
/// range JSON-RPC leaves to implementations).
pub const RATE_LIMITED: i32 = -32029;

/// The most callers one limit keeps buckets for; past it, the buckets that are full again
/// (whose callers have been quiet) are forgotten first, and then the half heard from
/// longest ago (which start again with a full bucket).
const MAX_CALLERS: usize = 100_000;

/// A token bucket per caller (the token's subject, else the session; stateless requests
/// without authentication share one bucket): each request takes a token, and tokens come
/// back at a steady rate up to the bucket's size. Notifications are never limited.
///
/// A refused `tools/call` is a tool error the model can read ("rate limit exceeded: retry in
/// 2.5 s"), whose `_meta` says `"code": "rate_limited"` and `"retryAfterMs"`; any other
/// refused method is the JSON-RPC error [`RATE_LIMITED`] with `retryAfterMs` in its data.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::middleware::RateLimit;
///
/// // 10 requests at once, then one every 100 ms.
/// let limit = RateLimit::new(10, Duration::from_millis(100));
/// let server = mcp_runtime::server!().layer(limit);
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct RateLimit {
    inner: Arc<Inner>,
}

struct Inner {
    burst: f64,
    /// Tokens per second.
    rate: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// A bucket of `burst` tokens per caller, one token back every `every`.
    pub fn new(burst: u32, every: Duration) -> RateLimit {
        RateLimit {
            inner: Arc::new(Inner {
                burst: f64::from(burst.max(1)),
                rate: 1.0 / every.as_secs_f64().max(1e-9),
                buckets: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// `per_minute` requests a minute per caller, all of them at once if it likes.
    pub fn per_minute(per_minute: u32) -> RateLimit {
        let per_minute = per_minute.max(1);
        RateLimit::new(per_minute, Duration::from_secs(60) / per_minute)
    }

    /// Takes a token for `caller`; when there is none, how long until there is.
    fn take(&self, caller: &str) -> Result<(), Duration> {
        let inner = &self.inner;
        let now = Instant::now();
        let mut buckets = inner.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_CALLERS && !buckets.contains_key(caller) {
            let (burst, rate) = (inner.burst, inner.rate);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
            // Still full (many callers at once): the half heard from longest ago go, so the
            // map stays bounded and this scan is paid once per half of the callers at most.
            if buckets.len() >= MAX_CALLERS {
                let mut by_age: Vec<Instant> = buckets.values().map(|b| b.at).collect();
                let (_, median, _) = by_age.select_nth_unstable(buckets.len() / 2);
                let median = *median;
                buckets.retain(|_, b| b.at > median);
            }
        }
        let bucket = buckets.entry(caller.to_owned()).or_insert(Bucket {
            tokens: inner.burst,
            at: now,
        });
        let refilled = now.duration_since(bucket.at).as_secs_f64() * inner.rate;
        bucket.tokens = (bucket.tokens + refilled).min(inner.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / inner.rate))
        }
    }
}

impl Layer for RateLimit {
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin(async move {
            if request.is_notification() {
                return next.run(request).await;
            }
            let caller = request
                .caller_key()
                .unwrap_or_else(|| "anonymous".to_owned());
            let Err(wait) = self.take(&caller) else {
                return next.run(request).await;
            };
            let retry_after_ms = wait.as_millis().max(1) as u64;
            let message = format!(
                "rate limit exceeded: retry in {:.1} s",
                retry_after_ms as f64 / 1000.0
            );
            if request.method() == "tools/call" {
                return Ok(tool_error_result(
                    &message,
                    "rate_limited",
                    json!({ "retryAfterMs": retry_after_ms }),
                ));
            }
            Err(RpcError::new(RATE_LIMITED, message)
                .with_data(json!({ "retryAfterMs": retry_after_ms })))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_at_its_rate_and_the_map_stays_bounded() {
        let limit = RateLimit::new(2, Duration::from_millis(50));
        assert!(limit.take("a").is_ok());
        assert!(limit.take("a").is_ok());
        let wait = limit.take("a").unwrap_err();
        assert!(wait <= Duration::from_millis(50), "{wait:?}");
        assert!(
            limit.take("b").is_ok(),
            "each caller has a bucket of its own"
        );
        std::thread::sleep(Duration::from_millis(60));
        assert!(limit.take("a").is_ok(), "a token came back");

        // Many callers at once, none of them quiet: the map never holds more than the cap.
        let busy = RateLimit::new(1, Duration::from_secs(3600));
        for i in 0..(MAX_CALLERS + 10) {
            let _ = busy.take(&i.to_string());
        }
        let held = busy.inner.buckets.lock().unwrap().len();
        assert!(held <= MAX_CALLERS, "{held}");
    }
}
