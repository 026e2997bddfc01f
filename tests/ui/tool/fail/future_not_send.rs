use std::sync::Mutex;

use mcp_runtime::prelude::*;

static COUNT: Mutex<u64> = Mutex::new(0);

/// Count the calls, telling the client on the way.
#[tool]
async fn count(ctx: Context) -> u64 {
    let mut count = COUNT.lock().unwrap();
    *count += 1;
    ctx.info("counted").await;
    *count
}

fn main() {}
