//! Every kind of argument a prompt accepts: text, numbers, `bool`, `Option<T>` (an optional
//! argument), and types of the user's own implementing `FromStr`; a `Context`, which is not an
//! argument. Parameter doc comments describe their arguments.

use std::str::FromStr;

use mcp_runtime::Prompt;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;

/// A review depth, parsed from its name.
#[derive(Debug, PartialEq)]
enum Depth {
    Skim,
    Thorough,
}

impl FromStr for Depth {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "skim" => Ok(Depth::Skim),
            "thorough" => Ok(Depth::Thorough),
            other => Err(format!("`{other}` is neither `skim` nor `thorough`")),
        }
    }
}

/// Review the changes on a branch.
#[allow(clippy::too_many_arguments)] // one argument of each kind
#[prompt]
fn code_review(
    /// Branch to compare against.
    base: String,
    /// How many files to look at, at most.
    max_files: u32,
    /// How far back to look, in days; may be negative.
    offset: i64,
    /// A weight from 0 to 1.
    weight: f64,
    /// Whether to be strict.
    strict: bool,
    /// How deep to go.
    depth: Depth,
    /// The language of the code.
    language: Option<String>,
    /// A second depth, if any.
    second_pass: Option<Depth>,
) -> String {
    format!(
        "base={base} max_files={max_files} offset={offset} weight={weight} strict={strict} depth={depth:?} language={language:?} second_pass={second_pass:?}"
    )
}

/// A `Context` is supplied by the runtime, wherever it stands and however it is written.
#[prompt]
async fn with_context(ctx: Context, topic: String, _again: mcp_runtime::Context) -> String {
    ctx.info("rendering").await;
    format!("Talk about {topic}.")
}

#[mcp_runtime::main]
async fn main() {
    assert_eq!(
        code_review(
            "main".to_owned(),
            3,
            -1,
            0.5,
            true,
            Depth::Skim,
            None,
            Some(Depth::Thorough)
        ),
        "base=main max_files=3 offset=-1 weight=0.5 strict=true depth=Skim language=None second_pass=Some(Thorough)"
    );

    let d = <code_review as Prompt>::DESCRIPTOR;
    let arguments: Vec<_> = d.arguments.iter().map(|a| (a.name, a.required)).collect();
    assert_eq!(
        arguments,
        [
            ("base", true),
            ("max_files", true),
            ("offset", true),
            ("weight", true),
            ("strict", true),
            ("depth", true),
            ("language", false),
            ("second_pass", false),
        ]
    );
    assert_eq!(
        d.arguments[0].description,
        Some("Branch to compare against.")
    );
    assert_eq!(
        d.arguments[2].description,
        Some("How far back to look, in days; may be negative.")
    );
    assert_eq!(d.description, Some("Review the changes on a branch."));

    let d = <with_context as Prompt>::DESCRIPTOR;
    assert_eq!(d.arguments.len(), 1);
    assert_eq!(d.arguments[0].name, "topic");

    let server = mcp_runtime::server!().build().unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();

    let result = client
        .request(
            "prompts/get",
            json!({"name": "code_review", "arguments": {
                "base": "main", "max_files": "3", "offset": "-7", "weight": "0.25",
                "strict": "false", "depth": "thorough", "second_pass": "skim",
            }}),
        )
        .await
        .unwrap();
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "base=main max_files=3 offset=-7 weight=0.25 strict=false depth=Thorough language=None second_pass=Some(Skim)"
    );

    // Text that does not parse is invalid params naming the argument and the type's error.
    let error = client
        .request(
            "prompts/get",
            json!({"name": "code_review", "arguments": {
                "base": "main", "max_files": "3", "offset": "0", "weight": "1",
                "strict": "true", "depth": "deep",
            }}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("`depth`"), "{}", error.message);
    assert!(error.message.contains("neither"), "{}", error.message);

    let error = client
        .request(
            "prompts/get",
            json!({"name": "code_review", "arguments": {}}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("`base`"), "{}", error.message);

    let result = client
        .request(
            "prompts/get",
            json!({"name": "with_context", "arguments": {"topic": "lifetimes"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "Talk about lifetimes."
    );
}
