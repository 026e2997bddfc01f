use mcp_runtime::prelude::*;

struct Database {
    name: String,
}

impl Database {
    #[resource("db://name")]
    fn name(&self) -> String {
        self.name.clone()
    }
}

fn main() {}
