//! Sync and async prompts, public and private, at the crate root and in nested modules: each
//! stays an ordinary function and is registered automatically or explicitly.

use mcp_runtime::prelude::*;

/// Greet someone.
#[prompt]
pub fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

/// Wait once, then ask.
#[prompt]
async fn later(topic: String) -> String {
    mcp_runtime::tokio::task::yield_now().await;
    format!("Later, about {topic}.")
}

mod reviews {
    use mcp_runtime::prelude::*;

    /// Review a branch.
    #[prompt]
    pub fn code_review(branch: String) -> Vec<PromptMessage> {
        vec![PromptMessage::user(format!("Review {branch}."))]
    }

    pub mod deep {
        use mcp_runtime::prelude::*;

        /// Review a branch, thoroughly.
        #[prompt(name = "deep_review")]
        pub(crate) async fn review(branch: String) -> PromptMessage {
            PromptMessage::user(format!("Review {branch} thoroughly."))
        }
    }
}

fn main() {
    assert_eq!(greeting("Ada".to_owned()), "Say hello to Ada.");
    assert_eq!(reviews::code_review("main".to_owned()).len(), 1);

    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(
        runtime.block_on(later("traits".to_owned())),
        "Later, about traits."
    );
    assert_eq!(
        runtime.block_on(reviews::deep::review("main".to_owned())),
        PromptMessage::user("Review main thoroughly.")
    );

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(
        server.prompt_names(),
        ["code_review", "deep_review", "greeting", "later"]
    );

    let explicit = mcp_runtime::server!()
        .auto_register(false)
        .prompts(mcp_runtime::prompts![greeting, reviews::deep::review])
        .build()
        .unwrap();
    assert_eq!(explicit.prompt_names(), ["deep_review", "greeting"]);
}
