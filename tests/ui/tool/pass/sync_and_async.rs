//! Sync and async tools, public and private, at the crate root and in nested modules: each
//! stays an ordinary function and is registered automatically or explicitly.

// Tools here go without descriptions for brevity: the warning that asks for one is checked
// on its own (`ui.rs`).
#![allow(deprecated)]

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tool]
fn shout(text: String) -> String {
    text.to_uppercase()
}

/// Echo the text after yielding once.
#[tool]
async fn echo(text: String) -> String {
    mcp_runtime::tokio::task::yield_now().await;
    text
}

#[tool]
pub async fn ping() -> &'static str {
    "pong"
}

/// A raw identifier is named without its `r#`.
#[tool]
fn r#match(pattern: String, text: String) -> bool {
    text.contains(&pattern)
}

mod arithmetic {
    use mcp_runtime::prelude::*;

    /// Multiply two integers.
    #[tool]
    pub fn mul(a: i64, b: i64) -> i64 {
        a * b
    }

    pub mod signs {
        use mcp_runtime::prelude::*;

        /// Negate an integer.
        #[tool]
        pub(crate) async fn neg(x: i64) -> i64 {
            -x
        }
    }
}

fn main() {
    assert_eq!(add(1, 2), 3);
    assert_eq!(shout("hi".to_owned()), "HI");
    assert!(r#match("b".to_owned(), "abc".to_owned()));
    assert_eq!(arithmetic::mul(2, 3), 6);

    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(runtime.block_on(echo("x".to_owned())), "x");
    assert_eq!(runtime.block_on(ping()), "pong");
    assert_eq!(runtime.block_on(arithmetic::signs::neg(4)), -4);

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(
        server.tool_names(),
        ["add", "echo", "match", "mul", "neg", "ping", "shout"]
    );

    let explicit = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![add, arithmetic::mul])
        .build()
        .unwrap();
    assert_eq!(explicit.tool_names(), ["add", "mul"]);
}
