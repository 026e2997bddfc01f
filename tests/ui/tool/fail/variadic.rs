use mcp_runtime::prelude::*;

#[tool]
unsafe extern "C" fn sum(count: usize, ...) -> usize {
    count
}

fn main() {}
