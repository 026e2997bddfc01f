use std::rc::Rc;

use mcp_runtime::prelude::*;

struct Service;

#[toolbox]
impl Service {
    /// Holds an `Rc` across an await.
    #[tool]
    async fn hold(&self, ctx: Context) -> String {
        let shared = Rc::new(1);
        ctx.info("waiting").await;
        shared.to_string()
    }
}

fn main() {}
