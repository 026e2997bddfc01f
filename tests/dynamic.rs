//! Tools made at run time from a schema and a closure: checked when registered, their
//! arguments validated before the closure runs, added to a running server with
//! `list_changed`.

use mcp_runtime::prelude::*;
use mcp_runtime::schema::SchemaProfile;
use mcp_runtime::{CatalogueError, DynamicTool};
use mcp_tests::memory::{connected, text};
use serde_json::{Value, json};

fn add() -> DynamicTool {
    DynamicTool::new(
        "add",
        "Add two integers.",
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first addend."},
                "b": {"type": "integer", "minimum": 0},
            },
            "required": ["a", "b"],
            "additionalProperties": false,
        }),
        |_ctx: Context, arguments: Value| async move {
            arguments["a"].as_i64().unwrap_or(0) + arguments["b"].as_i64().unwrap_or(0)
        },
    )
    .title("Addition")
}

#[mcp_runtime::test]
async fn a_dynamic_tool_is_listed_with_its_schema_and_validates_its_arguments() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .dynamic_tool(add())
        .build()
        .unwrap();
    let client = connected(&server).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["title"], "Addition");
    assert_eq!(tools[0]["description"], "Add two integers.");
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["a"]["description"],
        "The first addend."
    );
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "5");
    for (arguments, expected) in [
        (
            json!({"a": "2", "b": 3}),
            "invalid arguments: `a`: \"2\" is not of type \"integer\"",
        ),
        (
            json!({"a": 2, "b": -1}),
            "invalid arguments: `b`: -1 is less than the minimum of 0",
        ),
        (
            json!({"a": 2}),
            "invalid arguments: \"b\" is a required property",
        ),
        (
            json!({"a": 1, "b": 1, "c": 1}),
            "invalid arguments: Additional properties are not allowed ('c' was unexpected)",
        ),
        (
            json!([1, 2]),
            "invalid arguments: the arguments must be an object of named arguments",
        ),
    ] {
        let refused = client.call_tool("add", arguments.clone()).await.unwrap();
        assert!(refused.is_error, "{arguments}");
        assert!(
            text(&refused).starts_with(expected),
            "{arguments}: {}",
            text(&refused)
        );
    }
}

#[mcp_runtime::test]
async fn a_dynamic_tool_added_later_is_announced_and_a_bad_one_is_refused_with_the_reason() {
    // A server that serves tools (those it is built with declare the capability).
    let first = DynamicTool::new(
        "first",
        "The first tool.",
        json!({"type": "object"}),
        |_: Context, _: Value| async { "first" },
    );
    let server = mcp_runtime::server!()
        .auto_register(false)
        .dynamic_tool(first)
        .build()
        .unwrap();
    let client = connected(&server).await;
    server.add_dynamic_tool(add()).unwrap();
    let notice = client.next_message().await.unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    let sum = client
        .call_tool("add", json!({"a": 20, "b": 22}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "42");
    let again = server.add_dynamic_tool(add()).unwrap_err();
    assert!(
        matches!(again, CatalogueError::Duplicate { name: "add", .. }),
        "{again}"
    );
    assert!(server.remove_tool("add"));
    server.add_dynamic_tool(add()).unwrap();

    let not_an_object = DynamicTool::new(
        "list",
        "d",
        json!({"type": "array"}),
        |_: Context, _: Value| async { "x" },
    );
    let refused = server.add_dynamic_tool(not_an_object).unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("the tool `list` cannot be served: its schema must describe an object"),
        "{refused}"
    );
    let invalid = DynamicTool::new(
        "weird",
        "d",
        json!({"type": "object", "properties": {"a": {"type": "strange"}}}),
        |_: Context, _: Value| async { "x" },
    );
    let refused = server.add_dynamic_tool(invalid).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("its schema is not a valid JSON Schema"),
        "{refused}"
    );
}

#[test]
fn a_schema_the_servers_profile_cannot_send_is_refused_when_built() {
    let labels = DynamicTool::new(
        "label",
        "Label a document.",
        json!({
            "type": "object",
            "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        }),
        |_: Context, _: Value| async { "labelled" },
    );
    let refused = mcp_runtime::server!()
        .auto_register(false)
        .schema_profile(SchemaProfile::OpenAiStrict)
        .dynamic_tool(labels.clone())
        .build()
        .unwrap_err();
    assert!(
        refused.to_string().starts_with(
            "the tool `label` cannot be served: the `openai-strict` schema profile cannot send its schema: at `/properties/labels`, a map"
        ),
        "{refused}"
    );
    // The default profile sends it as it is.
    mcp_runtime::server!()
        .auto_register(false)
        .dynamic_tool(labels)
        .build()
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// Prompts and resources made at run time

#[mcp_runtime::test]
async fn a_dynamic_prompt_checks_its_arguments_and_a_dynamic_template_binds_its_variables() {
    use mcp_runtime::{
        DynamicPrompt, DynamicResource, PromptArgument, PromptArguments, ResourceRequest,
    };
    let review = DynamicPrompt::new(
        "review",
        "Review a change.",
        vec![
            PromptArgument::required("change", "The change."),
            PromptArgument::optional("focus", "What to look at."),
        ],
        |_ctx: Context, arguments: PromptArguments| async move {
            let change: String = arguments.required("change")?;
            let focus: Option<String> = arguments.optional("focus")?;
            Ok::<_, mcp_runtime::protocol::RpcError>(format!(
                "Review {change} (focus: {})",
                focus.unwrap_or_else(|| "all".into())
            ))
        },
    );
    let page = DynamicResource::new(
        "wiki://{title}",
        "page",
        "A page.",
        |_ctx: Context, request: ResourceRequest| async move {
            let title: String = request.variables.required("title")?;
            Ok::<_, mcp_runtime::protocol::RpcError>(format!("# {title}"))
        },
    )
    .mime_type("text/markdown");
    let server = mcp_runtime::server!()
        .auto_register(false)
        .dynamic_prompt(review)
        .dynamic_resource(page)
        .build()
        .unwrap();
    let client = connected(&server).await;
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        prompts["prompts"][0]["arguments"][0],
        json!({"name": "change", "description": "The change.", "required": true})
    );
    let got = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"change": "#42"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Review #42 (focus: all)"
    );
    let missing = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"focus": "tests"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (
            -32602,
            "missing required argument `change` of the prompt `review`"
        )
    );
    let unknown = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"change": "x", "chnge": "y"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message,
        "the prompt `review` has no argument `chnge`: it takes change, focus"
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "wiki://{title}"
    );
    let read = client
        .request("resources/read", json!({"uri": "wiki://Home"}))
        .await
        .unwrap();
    assert_eq!(
        read["contents"][0],
        json!({"uri": "wiki://Home", "mimeType": "text/markdown", "text": "# Home"})
    );
    // Added later, announced.
    server
        .add_dynamic_resource(DynamicResource::new(
            "wiki://index",
            "index",
            "Every page.",
            |_: Context, _: ResourceRequest| async { "Home".to_owned() },
        ))
        .unwrap();
    let notice = client.next_message().await.unwrap();
    assert_eq!(notice["method"], "notifications/resources/list_changed");
    let read = client
        .request("resources/read", json!({"uri": "wiki://index"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "Home");
    let bad = DynamicResource::new(
        "wiki://{",
        "broken",
        "d",
        |_: Context, _: ResourceRequest| async { String::new() },
    );
    assert!(matches!(
        server.add_dynamic_resource(bad),
        Err(CatalogueError::InvalidUriTemplate { .. })
    ));
}
