use mcp_runtime::prelude::*;

struct Counter {
    count: u64,
}

#[toolbox]
impl Counter {
    /// Increments.
    #[tool]
    fn increment(&mut self) -> u64 {
        self.count += 1;
        self.count
    }

    /// Consumes.
    #[tool]
    fn finish(self) -> u64 {
        self.count
    }

    /// Boxed.
    #[tool]
    fn boxed(self: Box<Self>) -> u64 {
        self.count
    }
}

fn main() {}
