//! Every key of `#[prompt(…)]`: `name`, `title`, `description`, `complete(…)` with both forms
//! of completion function, `icon(…)` and `meta`.

use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;
use mcp_runtime::{Completion, CompletionContext, Prompt};

/// Given what was typed.
fn languages(prefix: &str) -> Vec<String> {
    ["go", "python", "ruby", "rust"]
        .into_iter()
        .filter(|l| l.starts_with(prefix))
        .map(String::from)
        .collect()
}

/// Given what was typed and the arguments already chosen.
fn files(prefix: &str, context: &CompletionContext) -> Vec<String> {
    let language = context
        .arguments
        .get("language")
        .map_or("txt", String::as_str);
    vec![format!("{prefix}main.{language}")]
}

/// Returning a `Completion`, with its own total.
fn branches(prefix: &str, _context: &CompletionContext) -> Completion {
    Completion {
        values: vec![format!("{prefix}-1")],
        total: Some(40),
        has_more: true,
    }
}

/// Returning a `Completion` given only what was typed.
fn reviewers(prefix: &str) -> Completion {
    Completion::from_matches([format!("{prefix}lice")])
}

/// This doc comment is replaced by the `description` key.
#[prompt(
    name = "review.code-v2",
    title = "Code review",
    description = "Review the changes on a branch.",
    complete(language = languages, file = files),
    complete(branch = branches, r#reviewer = reviewers),
    icon(src = "https://example.com/review.png", mime = "image/png", sizes = "48x48 96x96"),
    icon(src = "data:image/svg+xml;base64,PHN2Zy8+"),
    meta = r#"{"team": "search"}"#
)]
fn code_review(
    language: String,
    file: Option<String>,
    branch: Option<String>,
    reviewer: Option<String>,
) -> String {
    format!("Review {file:?} ({language}) on {branch:?} with {reviewer:?}.")
}

/// The name is the function's, without `r#`.
#[prompt()]
fn r#type() -> &'static str {
    "Pick a type."
}

#[prompt]
fn undocumented() -> &'static str {
    "No description."
}

#[mcp_runtime::main]
async fn main() {
    let d = <code_review as Prompt>::DESCRIPTOR;
    assert_eq!(d.name, "review.code-v2");
    assert_eq!(d.title, Some("Code review"));
    assert_eq!(d.description, Some("Review the changes on a branch."));
    assert_eq!(d.meta, Some(r#"{"team": "search"}"#));
    assert_eq!(d.icons.len(), 2);
    assert_eq!(d.icons[0].src, "https://example.com/review.png");
    assert_eq!(d.icons[0].mime_type, Some("image/png"));
    assert_eq!(d.icons[0].sizes, ["48x48", "96x96"]);
    assert_eq!(d.icons[1].mime_type, None);
    let completed: Vec<_> = d.completions.iter().map(|c| c.argument).collect();
    assert_eq!(completed, ["language", "file", "branch", "reviewer"]);

    let d = <r#type as Prompt>::DESCRIPTOR;
    assert_eq!(d.name, "type");
    assert_eq!(
        d.description,
        Some("The name is the function's, without `r#`.")
    );
    assert_eq!(<undocumented as Prompt>::DESCRIPTOR.description, None);

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(
        server.prompt_names(),
        ["review.code-v2", "type", "undocumented"]
    );

    let client = server.connect_memory();
    client.initialize().await.unwrap();
    let complete = |argument: &str, value: &str| {
        json!({
            "ref": {"type": "ref/prompt", "name": "review.code-v2"},
            "argument": {"name": argument, "value": value},
            "context": {"arguments": {"language": "rs"}},
        })
    };

    let result = client
        .request("completion/complete", complete("language", "ru"))
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["ruby", "rust"]));

    let result = client
        .request("completion/complete", complete("file", "src/"))
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["src/main.rs"]));

    let result = client
        .request("completion/complete", complete("branch", "fix"))
        .await
        .unwrap();
    assert_eq!(
        result["completion"],
        json!({"values": ["fix-1"], "total": 40, "hasMore": true})
    );

    let result = client
        .request("completion/complete", complete("reviewer", "a"))
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["alice"]));

    let listed = client.request("prompts/list", json!({})).await.unwrap();
    let prompt = &listed["prompts"][0];
    assert_eq!(prompt["name"], "review.code-v2");
    assert_eq!(prompt["title"], "Code review");
    assert_eq!(prompt["_meta"], json!({"team": "search"}));
}
