//! `cache(ttl = "…")`, private unless `public` is given.

use mcp_runtime::prelude::*;
use mcp_runtime::{CacheHint, ResourceItem};

/// The application's configuration: the same for everyone, fresh for five minutes.
#[resource("config://app", cache(ttl = "5m", public))]
fn config() -> String {
    "{}".into()
}

/// The caller's own profile.
#[resource("profile://me", cache(ttl = "250ms"))]
fn profile() -> String {
    "me".into()
}

/// Not cached by the resource's own choice.
#[resource("clock://now")]
fn now() -> String {
    "now".into()
}

fn main() {
    assert_eq!(
        <config as ResourceItem>::DESCRIPTOR.cache,
        Some(CacheHint {
            ttl_ms: 300_000,
            public: true
        })
    );
    assert_eq!(
        <profile as ResourceItem>::DESCRIPTOR.cache,
        Some(CacheHint {
            ttl_ms: 250,
            public: false
        })
    );
    assert_eq!(<now as ResourceItem>::DESCRIPTOR.cache, None);
}
