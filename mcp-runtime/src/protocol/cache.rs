//! Cache hints of the stateless era (2026-07-28): how long a result stays fresh (`ttlMs`)
//! and for whom (`cacheScope`).

use serde_json::{Map, Value};

/// How long clients may cache a list or a read, and for whom (2026-07-28 cache hints:
/// `ttlMs` and `cacheScope`). Set per server with
/// [`ServerBuilder::list_cache_hint`](crate::ServerBuilder::list_cache_hint) and
/// [`ServerBuilder::read_cache_hint`](crate::ServerBuilder::read_cache_hint), and per resource
/// with `#[resource(…, cache(ttl = "5m", public))]`.
///
/// ```
/// use mcp_runtime::CacheHint;
///
/// let hint = CacheHint { ttl_ms: 300_000, public: true };
/// assert!(hint.public);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result stays fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Whether the result is the same for every caller (`public`) or not (`private`).
    pub public: bool,
}

impl CacheHint {
    /// Stale at once and for this caller only: the hint of results that must not be cached,
    /// such as those of a multi round-trip retry, which depend on the answers it carried.
    pub const UNCACHEABLE: CacheHint = CacheHint {
        ttl_ms: 0,
        public: false,
    };

    pub(crate) fn insert(self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), self.ttl_ms.into());
        result.insert(
            "cacheScope".into(),
            (if self.public { "public" } else { "private" }).into(),
        );
    }
}
