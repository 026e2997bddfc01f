//! The in-process client, explicit registration, and catalogue checks at build time.

use mcp_runtime::prelude::*;
use mcp_runtime::{CatalogueError, protocol::RpcError};
use mcp_tests::memory::connected;
use serde_json::{Value, json};

/// Multiply two integers.
#[tool]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

mod text {
    use mcp_runtime::prelude::*;

    /// Shout a text.
    #[tool]
    pub fn shout(text: String) -> String {
        text.to_uppercase()
    }

    /// A second tool that claims the name `multiply`.
    #[tool(name = "multiply")]
    pub fn impostor() -> &'static str {
        "not a product"
    }
}

fn explicit_only() -> Server {
    mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![multiply, text::shout])
        .build()
        .expect("a consistent catalogue")
}

#[mcp_runtime::test]
async fn explicitly_registered_tools_are_listed_and_called() {
    let client = connected(&explicit_only()).await;
    let names: Vec<Value> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("multiply"), json!("shout")]);
    let result = client
        .call_tool("multiply", json!({"a": 6, "b": 7}))
        .await
        .unwrap();
    assert_eq!(result.content, vec![Content::text("42")]);
    let result = client
        .call_tool("shout", json!({"text": "hey"}))
        .await
        .unwrap();
    assert_eq!(result.content, vec![Content::text("HEY")]);
}

#[mcp_runtime::test]
async fn unknown_tools_are_invalid_params() {
    let client = connected(&explicit_only()).await;
    let error: RpcError = client.call_tool("impostor", json!({})).await.unwrap_err();
    assert_eq!(error.code, -32602);
}

#[test]
fn two_tools_with_one_name_are_refused_naming_both_places() {
    let error = mcp_runtime::server!().build().unwrap_err();
    let CatalogueError::Duplicate {
        kind,
        name,
        first,
        second,
    } = &error
    else {
        panic!("unexpected error {error}")
    };
    assert_eq!(*kind, "tool");
    assert_eq!(*name, "multiply");
    let message = error.to_string();
    assert!(message.contains("tests/memory.rs:"), "{message}");
    assert_ne!(first.line, second.line);
    assert!(message.contains(&first.to_string()) && message.contains(&second.to_string()));
}

#[test]
fn a_tool_listed_twice_is_served_once() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![multiply, multiply])
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["multiply"]);
}

#[test]
fn tools_stay_ordinary_functions() {
    assert_eq!(multiply(3, 4), 12);
    assert_eq!(text::shout("a".into()), "A");
}

#[mcp_runtime::test]
async fn raw_messages_and_notifications_reach_the_client() {
    let client = explicit_only().connect_memory();
    client.send_raw("not json").await;
    let reply = client.next_message().await.unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

#[mcp_runtime::test]
async fn capabilities_follow_what_is_registered() {
    let empty = mcp_runtime::server!().auto_register(false).build().unwrap();
    let init = connected(&empty).await;
    let result = init.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(result.code, -32601, "no tools, no tools/list");

    let client = explicit_only().connect_memory();
    let init = client.initialize().await.unwrap();
    assert_eq!(init["capabilities"]["tools"], json!({"listChanged": true}));
    assert_eq!(init["serverInfo"]["name"], "mcp-tests");

    let empty_client = empty.connect_memory();
    let init = empty_client.initialize().await.unwrap();
    assert!(init["capabilities"].get("tools").is_none());
}

/// Run a command: a lone parameter named `args` is one argument of that name, a list.
#[tool]
fn run_command(args: Vec<String>) -> String {
    args.join(" ")
}

// The warning a tool without a description raises is what this module is about.
#[allow(deprecated)]
mod undocumented {
    use mcp_runtime::prelude::*;

    #[tool]
    pub fn bare() -> &'static str {
        "bare"
    }
}

#[mcp_runtime::test]
async fn a_lone_parameter_named_args_is_an_ordinary_argument_and_the_server_starts() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![run_command])
        .build()
        .expect("the server starts");
    let client = connected(&server).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["args"]["type"],
        "array"
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["args"]));
    let result = client
        .call_tool("run_command", json!({"args": ["ls", "-l"]}))
        .await
        .unwrap();
    assert_eq!(result.content, vec![Content::text("ls -l")]);
}

#[test]
fn the_lint_reports_a_tool_without_a_description() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![undocumented::bare, multiply])
        .build()
        .unwrap();
    let lint = mcp_runtime::testing::lint_schemas(&server);
    let findings: Vec<_> = lint
        .findings()
        .iter()
        .filter(|f| f.location == "description")
        .collect();
    assert_eq!(findings.len(), 1, "{lint}");
    assert_eq!(findings[0].name, "bare");
    assert_eq!(
        findings[0].severity,
        mcp_runtime::testing::Severity::Warning
    );
    assert!(findings[0].message.contains("no description"), "{lint}");
    assert!(lint.is_clean(), "a warning, not an error: {lint}");
}
