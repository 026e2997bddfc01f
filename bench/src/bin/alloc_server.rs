//! `bench-server`'s `echo` on mcp-runtime, with a global allocator that counts every heap
//! allocation, and a tool `allocations` that reports the counts so far: `mcp-load allocs`
//! reads them around a run of `echo` calls over stdio to find what one call allocates.
//!
//! Written like `bench-server` otherwise; `mcp-load` builds it with and without `http`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;

/// The system allocator, counting.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

fn count(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every method passes its arguments on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation may move the block: it counts as one allocation of the new size.
        count(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Return the text unchanged.
#[tool(annotations(read_only, idempotent))]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
}

/// The heap allocations (counting reallocations) and the bytes they asked for since the
/// process started, as `ALLOCATIONS BYTES`.
#[tool(annotations(read_only))]
fn allocations() -> String {
    format!(
        "{} {}",
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed)
    )
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!().serve().await
}
