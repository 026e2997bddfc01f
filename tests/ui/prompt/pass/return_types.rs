//! Every kind of value a prompt may return: text (one user message), a message, messages, a
//! full result, or a `Result` of one of these whose `Err` implements `Display`.

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::serde_json::{Value, json};

#[prompt]
fn owned_text() -> String {
    "owned".to_owned()
}

#[prompt]
fn static_text() -> &'static str {
    "static"
}

#[prompt]
fn message() -> PromptMessage {
    PromptMessage::assistant("spoken by the assistant")
}

#[prompt]
fn messages() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user("first"),
        PromptMessage::new(Role::Assistant, Content::text("second")),
    ]
}

#[prompt]
fn full() -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::user("full")]).description("A full result")
}

#[prompt]
fn fallible(fail: bool) -> Result<String, std::fmt::Error> {
    if fail {
        Err(std::fmt::Error)
    } else {
        Ok("fine".to_owned())
    }
}

#[prompt]
async fn fallible_messages(fail: bool) -> Result<Vec<PromptMessage>, String> {
    if fail {
        Err("the template store is offline".to_owned())
    } else {
        Ok(vec![PromptMessage::user("fine")])
    }
}

/// An `RpcError` keeps its own code.
#[prompt]
fn not_found(name: String) -> Result<GetPromptResult, RpcError> {
    Err(RpcError::new(-32002, format!("no template `{name}`")))
}

async fn get(client: &mcp_runtime::MemoryClient, name: &str, arguments: Value) -> Value {
    client
        .request("prompts/get", json!({"name": name, "arguments": arguments}))
        .await
        .unwrap()
}

#[mcp_runtime::main]
async fn main() {
    assert_eq!(owned_text(), "owned");
    assert_eq!(messages().len(), 2);
    assert!(fallible(true).is_err());

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(server.prompt_names().len(), 8);
    let client = server.connect_memory();
    client.initialize().await.unwrap();

    let text =
        |role: &str, text: &str| json!({"role": role, "content": {"type": "text", "text": text}});
    assert_eq!(
        get(&client, "owned_text", json!({})).await["messages"],
        json!([text("user", "owned")])
    );
    assert_eq!(
        get(&client, "static_text", json!({})).await["messages"],
        json!([text("user", "static")])
    );
    assert_eq!(
        get(&client, "message", json!({})).await["messages"],
        json!([text("assistant", "spoken by the assistant")])
    );
    assert_eq!(
        get(&client, "messages", json!({})).await["messages"],
        json!([text("user", "first"), text("assistant", "second")])
    );
    let result = get(&client, "full", json!({})).await;
    assert_eq!(result["description"], "A full result");
    assert_eq!(result["messages"], json!([text("user", "full")]));
    assert_eq!(
        get(&client, "fallible", json!({"fail": "false"})).await["messages"],
        json!([text("user", "fine")])
    );
    assert_eq!(
        get(&client, "fallible_messages", json!({"fail": "false"})).await["messages"],
        json!([text("user", "fine")])
    );

    // Any other error is an internal error carrying its message.
    let error = client
        .request(
            "prompts/get",
            json!({"name": "fallible_messages", "arguments": {"fail": "true"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("offline"), "{}", error.message);

    let error = client
        .request(
            "prompts/get",
            json!({"name": "not_found", "arguments": {"name": "x"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -32002);
    assert_eq!(error.message, "no template `x`");
}
