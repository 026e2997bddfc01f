//! [`Timing`]: how long each method takes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Layer, LayerFuture, McpRequest, Next};

/// Where [`Timing`] counts the notifications the server does not know.
pub const UNKNOWN: &str = "(unknown notification)";

/// Records how long each method takes to answer, from this layer down (the layers below it
/// and the handler), and how many ended in an error. Clones share their records: keep one
/// to read them.
///
/// ```
/// use mcp_runtime::middleware::Timing;
///
/// let timing = Timing::new();
/// let server = mcp_runtime::server!().layer(timing.clone());
/// # let _ = server;
/// for method in timing.snapshot() {
///     println!("{}: {} calls, {:?} on average", method.method, method.count, method.mean());
/// }
/// ```
#[derive(Clone, Default)]
pub struct Timing {
    records: Arc<Mutex<BTreeMap<String, MethodTiming>>>,
}

/// What [`Timing`] recorded of one method.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MethodTiming {
    /// The method.
    pub method: String,
    /// How many requests (and notifications) it served.
    pub count: u64,
    /// How many of them ended in a JSON-RPC error.
    pub errors: u64,
    /// Their time in all.
    pub total: Duration,
    /// The longest.
    pub max: Duration,
    /// How many took less than each of [`MethodTiming::BOUNDS`], and the last, how many took
    /// longer than all of them: a histogram.
    pub buckets: [u64; 8],
}

impl MethodTiming {
    /// The upper bounds of the histogram's buckets.
    pub const BOUNDS: [Duration; 7] = [
        Duration::from_micros(100),
        Duration::from_millis(1),
        Duration::from_millis(10),
        Duration::from_millis(100),
        Duration::from_secs(1),
        Duration::from_secs(10),
        Duration::from_secs(60),
    ];

    /// The mean time.
    pub fn mean(&self) -> Duration {
        self.total
            .checked_div(u32::try_from(self.count).unwrap_or(u32::MAX))
            .unwrap_or_default()
    }
}

impl Timing {
    /// A timing layer with no records yet.
    pub fn new() -> Timing {
        Timing::default()
    }

    /// The records so far, by method.
    pub fn snapshot(&self) -> Vec<MethodTiming> {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    fn record(&self, method: &str, took: Duration, failed: bool) {
        let mut records = self.records.lock().unwrap_or_else(|p| p.into_inner());
        // Only methods the server knows are recorded by name, so the map stays small.
        let record = records
            .entry(method.to_owned())
            .or_insert_with(|| MethodTiming {
                method: method.to_owned(),
                ..MethodTiming::default()
            });
        record.count += 1;
        record.errors += u64::from(failed);
        record.total += took;
        record.max = record.max.max(took);
        let bucket = MethodTiming::BOUNDS
            .iter()
            .position(|bound| took < *bound)
            .unwrap_or(MethodTiming::BOUNDS.len());
        record.buckets[bucket] += 1;
    }
}

impl Layer for Timing {
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin(async move {
            // A notification may name anything: those the server does not know are counted
            // together, so no client can grow the records with names of its own.
            let method = if request.is_known() {
                request.method().to_owned()
            } else {
                UNKNOWN.to_owned()
            };
            let started = Instant::now();
            let result = next.run(request).await;
            self.record(&method, started.elapsed(), result.is_err());
            result
        })
    }
}
