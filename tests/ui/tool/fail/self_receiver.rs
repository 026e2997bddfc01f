use mcp_runtime::prelude::*;

struct Counter {
    count: u64,
}

impl Counter {
    #[tool]
    fn current(&self) -> u64 {
        self.count
    }
}

fn main() {}
