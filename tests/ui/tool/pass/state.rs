use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;

struct Counter {
    hits: AtomicU64,
}

struct Greeting {
    text: String,
}

/// Every way a tool takes state: alone, destructured, beside the context and arguments,
/// async, by its full path.
#[tool]
fn bump(counter: State<Counter>) -> u64 {
    counter.hits.fetch_add(1, Ordering::SeqCst)
}

/// Greets, for those who may.
#[tool(scopes("greet", "notes:read"))]
async fn greet(ctx: Context, State(greeting): State<Greeting>, name: String) -> String {
    ctx.info("greeting").await;
    format!("{} {name}", greeting.text)
}

/// The full path, and an argument beside.
#[tool]
fn both(a: mcp_runtime::State<Counter>, b: State<Greeting>, #[default = 2] times: u32) -> String {
    format!(
        "{} {}",
        a.hits.load(Ordering::SeqCst),
        b.text.repeat(times as usize)
    )
}

/// A prompt with state, for readers.
#[prompt(scopes("notes:read"))]
fn welcome(greeting: State<Greeting>, name: Option<String>) -> String {
    format!("{} {}", greeting.text, name.unwrap_or_default())
}

/// A resource with state.
#[resource("greeting://{lang}", scopes("admin"))]
async fn greeting_in(greeting: State<Greeting>, lang: String) -> String {
    format!("{lang}: {}", greeting.text)
}

fn main() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![bump, greet, both])
        .prompts(mcp_runtime::prompts![welcome])
        .resources(mcp_runtime::resources![greeting_in])
        .state(Counter {
            hits: AtomicU64::new(0),
        })
        .state(Greeting { text: "hi".into() })
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["both", "bump", "greet"]);
    // The function stays an ordinary function.
    assert_eq!(
        bump(State::new(Counter {
            hits: AtomicU64::new(7)
        })),
        7
    );
}
