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

/// One word, asked of the user.
#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Word {
    /// A word.
    word: String,
}

/// Asks for two words, one after the other.
#[tool]
async fn two_words(ctx: Context) -> Result<String, ToolError> {
    let mut words = Vec::new();
    for question in ["First word?", "Second word?"] {
        match ctx.elicit::<Word>(question).await? {
            mcp_runtime::Elicitation::Accept(Word { word }) => words.push(word),
            _ => return Ok("declined".into()),
        }
    }
    Ok(words.join(" then "))
}

/// Asks for one word.
#[tool]
async fn one_word(ctx: Context) -> Result<String, ToolError> {
    match ctx.elicit::<Word>("A word?").await? {
        mcp_runtime::Elicitation::Accept(Word { word }) => Ok(word),
        _ => Ok("declined".into()),
    }
}

fn asking() -> Server {
    mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![two_words, one_word])
        .build()
        .expect("a consistent catalogue")
}

/// The 2026-07-28 `_meta` of a client that can answer elicitations, with `extra` members.
fn asking_meta(extra: &str) -> String {
    format!(
        r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}{extra}}}"#
    )
}

/// The one input request of an `InputRequiredResult`: its key, and the result's state.
fn asked(result: &Value) -> (String, String) {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{result}");
    let key = requests.keys().next().unwrap().clone();
    (key, result["requestState"].as_str().unwrap().to_owned())
}

fn accept(word: &str) -> Value {
    json!({"action": "accept", "content": {"word": word}})
}

/// What `requestState` sealed stands: an answer sent again beside it, to a question the
/// state already holds the answer to, is not taken.
#[mcp_runtime::test]
async fn a_sealed_answer_is_not_replaced_by_a_fresh_one() {
    let client = asking().connect_memory();
    let meta: Value = serde_json::from_str(&asking_meta("")).unwrap();
    let call = |extra: Value| {
        let mut params = json!({"name": "two_words", "arguments": {}, "_meta": meta.clone()});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        client.request("tools/call", params)
    };
    let (first, state) = asked(&call(json!({})).await.unwrap());
    let answered = call(json!({"inputResponses": {&first: accept("one")}, "requestState": state}));
    let (second, state) = asked(&answered.await.unwrap());
    assert_ne!(first, second);
    let forged = json!({
        "inputResponses": {&first: accept("forged"), &second: accept("two")},
        "requestState": state,
    });
    let result = call(forged).await.unwrap();
    assert_eq!(result["content"][0]["text"], "one then two", "{result}");
}

/// A state is bound to its tool and arguments also when the request's `_meta` holds what no
/// JSON value holds (a number past `f64`'s range): it does not open for another tool.
#[mcp_runtime::test]
async fn a_state_sealed_beside_unreadable_metadata_opens_for_its_own_request_only() {
    let client = &asking().connect_memory();
    let meta = asking_meta(r#","x-junk":1e400"#);
    let send = |id: u32, name: &str, rest: &str| {
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}},"_meta":{meta}{rest}}}}}"#
        );
        async move {
            client.send_raw(&message).await;
            client.next_message().await.expect("an answer")
        }
    };
    let (key, state) = asked(&send(1, "one_word", "").await["result"]);
    let answers = format!(
        r#","inputResponses":{{"{key}":{}}},"requestState":"{state}""#,
        accept("mine")
    );
    let foreign = send(2, "two_words", &answers).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let own = send(3, "one_word", &answers).await;
    assert_eq!(own["result"]["content"][0]["text"], "mine", "{own}");
}
