//! Typed application state (`State<T>`, `#[toolbox]`), what a handler learns of its caller,
//! and per-session state and visibility, through the in-process client.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;
use mcp_runtime::{CatalogueError, MemoryClient};
use serde_json::{Value, json};

/// A counter the server is given, shared by every call.
struct Counter {
    step: u64,
    total: AtomicU64,
}

/// A greeting the server is given.
struct Greeting {
    text: String,
}

/// Add the server's step to the running total.
#[tool]
fn bump(counter: State<Counter>) -> u64 {
    counter.total.fetch_add(counter.step, Ordering::SeqCst) + counter.step
}

/// Greet someone, in the server's words.
#[tool]
async fn greet(ctx: Context, State(greeting): State<Greeting>, name: String) -> String {
    ctx.info("greeting").await;
    format!("{}, {name}!", greeting.text)
}

/// A greeting prompt, in the server's words.
#[prompt]
fn welcome(greeting: State<Greeting>, name: String) -> String {
    format!("{} and welcome, {name}", greeting.text)
}

/// The greeting, by language.
#[resource("greeting://{lang}")]
fn greeting_text(greeting: State<Greeting>, lang: String) -> String {
    format!("{lang}: {}", greeting.text)
}

/// Notes kept by a value whose methods are tools.
struct Notebook {
    notes: Mutex<Vec<String>>,
    prefix: &'static str,
}

#[toolbox]
impl Notebook {
    /// Write a note down.
    #[tool]
    fn write(
        &self,
        /// The note's text.
        text: String,
    ) -> usize {
        let mut notes = self.notes.lock().unwrap();
        notes.push(format!("{}{text}", self.prefix));
        notes.len()
    }

    /// Read every note back, slowly.
    #[tool(annotations(read_only))]
    async fn read_all(&self, ctx: Context) -> Json<Vec<String>> {
        ctx.debug("reading").await;
        Json(self.notes.lock().unwrap().clone())
    }

    /// Not a tool: an ordinary method.
    fn count(&self) -> usize {
        self.notes.lock().unwrap().len()
    }
}

fn with_state(step: u64, greeting: &str) -> Server {
    mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![bump, greet])
        .prompts(mcp_runtime::prompts![welcome])
        .resources(mcp_runtime::resources![greeting_text])
        .state(Counter {
            step,
            total: AtomicU64::new(0),
        })
        .state(Greeting {
            text: greeting.to_owned(),
        })
        .build()
        .expect("every state given")
}

async fn connected(server: &Server) -> MemoryClient {
    let client = server.connect_memory();
    client.initialize().await.expect("initialize");
    client
}

fn text(result: &CallToolResult) -> String {
    match &result.content[..] {
        [Content::Text(t)] => t.text.clone(),
        other => panic!("one text content expected, got {other:?}"),
    }
}

#[mcp_runtime::test]
async fn two_servers_in_one_process_each_serve_their_own_state() {
    let (one, two) = (with_state(1, "Hello"), with_state(10, "Bonjour"));
    let (a, b) = (connected(&one).await, connected(&two).await);
    for expected in [1, 2, 3] {
        let result = a.call_tool("bump", json!({})).await.unwrap();
        assert_eq!(text(&result), expected.to_string());
    }
    let result = b.call_tool("bump", json!({})).await.unwrap();
    assert_eq!(
        text(&result),
        "10",
        "the second server's counter is its own"
    );
    let result = a.call_tool("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text(&result), "Hello, Ada!");
    let result = b.call_tool("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text(&result), "Bonjour, Ada!");

    let prompt = b
        .request(
            "prompts/get",
            json!({"name": "welcome", "arguments": {"name": "Bo"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Bonjour and welcome, Bo"
    );
    let read = a
        .request("resources/read", json!({"uri": "greeting://en"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "en: Hello");
}

#[mcp_runtime::test]
async fn a_state_parameter_is_not_in_the_schema() {
    let client = connected(&with_state(1, "Hi")).await;
    let tools = client.list_tools().await.unwrap();
    let greet = tools.iter().find(|t| t["name"] == "greet").unwrap();
    let properties: Vec<&String> = greet["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(properties, ["name"]);
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    let bump = tools.iter().find(|t| t["name"] == "bump").unwrap();
    assert!(
        bump["inputSchema"]["properties"]
            .as_object()
            .is_none_or(|p| p.is_empty()),
        "{bump}"
    );
    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        prompts["prompts"][0]["arguments"],
        json!([{"name": "name", "required": true}])
    );
}

#[test]
fn a_server_missing_a_state_its_handlers_take_is_refused_when_built() {
    let refused = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![bump])
        .state(Greeting { text: "Hi".into() })
        .build()
        .unwrap_err();
    assert!(
        matches!(
            refused,
            CatalogueError::MissingState {
                kind: "tool",
                name: "bump",
                written: "State<Counter>",
                ..
            }
        ),
        "{refused:?}"
    );
    let message = refused.to_string();
    assert!(
        message.starts_with("the tool `bump` (defined at tests/state.rs:"),
        "{message}"
    );
    assert!(
        message.contains(
            "takes `State<Counter>`, which this server was not given: add `.state(value)`"
        ),
        "{message}"
    );

    let refused = mcp_runtime::server!()
        .auto_register(false)
        .resources(mcp_runtime::resources![greeting_text])
        .build()
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("the resource `greeting://{lang}`"),
        "{refused}"
    );

    // Adding a handler to a running server is checked the same way.
    let server = mcp_runtime::server!()
        .auto_register(false)
        .state(Greeting { text: "Hi".into() })
        .build()
        .unwrap();
    let refused = server.add_tools(mcp_runtime::tools![bump]).unwrap_err();
    assert!(matches!(
        refused,
        CatalogueError::MissingState { name: "bump", .. }
    ));
    server.add_tools(mcp_runtime::tools![greet]).unwrap();
    assert_eq!(server.tool_names(), ["greet"]);

    let refused = mcp_runtime::server!()
        .auto_register(false)
        .state(Greeting { text: "Hi".into() })
        .state(Greeting { text: "Ho".into() })
        .build()
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("two state values of type `state::Greeting`"),
        "{refused}"
    );
}

#[mcp_runtime::test]
async fn a_toolbox_serves_its_methods_with_its_value() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .toolbox(Notebook {
            notes: Mutex::new(Vec::new()),
            prefix: "- ",
        })
        .build()
        .unwrap();
    let client = connected(&server).await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
    assert_eq!(names, [&json!("read_all"), &json!("write")]);
    let write = &tools[1];
    assert_eq!(write["description"], "Write a note down.");
    assert_eq!(
        write["inputSchema"]["properties"]["text"]["description"],
        "The note's text."
    );
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    for (note, count) in [("milk", "1"), ("eggs", "2")] {
        let result = client
            .call_tool("write", json!({"text": note}))
            .await
            .unwrap();
        assert_eq!(text(&result), count);
    }
    let result = client.call_tool("read_all", json!({})).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": ["- milk", "- eggs"]}))
    );
    // The same errors as a free function's.
    let result = client
        .call_tool("write", json!({"txt": "x"}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(text(&result).contains("`text`"), "{}", text(&result));
    assert_eq!(server.state::<Notebook>().unwrap().count(), 2);
}
