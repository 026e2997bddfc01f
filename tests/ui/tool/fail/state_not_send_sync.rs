use std::cell::RefCell;

use mcp_runtime::prelude::*;

/// Counts, in a cell no thread may share.
#[tool]
fn count(counter: State<RefCell<u64>>) -> u64 {
    let mut n = counter.borrow_mut();
    *n += 1;
    *n
}

fn main() {}
