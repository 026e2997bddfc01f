use mcp_runtime::prelude::*;

#[prompt]
unsafe extern "C" fn greeting(count: usize, ...) -> String {
    format!("Say hello {count} times.")
}

fn main() {}
