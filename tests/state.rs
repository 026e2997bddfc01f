//! Typed application state (`State<T>`, `#[toolbox]`), what a handler learns of its caller,
//! and per-session state and visibility, through the in-process client.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;
use mcp_runtime::{CatalogueError, MemoryClient};
use mcp_tests::memory::{connected, text};
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

// ---------------------------------------------------------------------------------------
// Sessions: the store, and each session's own visibility

mod sessions {
    use mcp_runtime::prelude::*;
    use mcp_runtime::serde::{Deserialize, Serialize};

    /// Words kept in the session.
    #[derive(Default, Serialize, Deserialize)]
    #[serde(crate = "mcp_runtime::serde")]
    pub struct Words(pub Vec<String>);

    /// Keep a word in this session.
    #[tool]
    pub fn remember(ctx: Context, word: String) -> Result<usize, ToolError> {
        Ok(ctx.session()?.update(|words: &mut Words| {
            words.0.push(word);
            words.0.len()
        })?)
    }

    /// The words kept in this session, and a number kept by key.
    #[tool]
    pub fn recall(ctx: Context) -> Result<String, ToolError> {
        let session = ctx.session()?;
        let words: Option<Words> = session.get()?;
        let visits = session.update_key("visits", |n: &mut u32| {
            *n += 1;
            *n
        })?;
        Ok(format!(
            "{} (visit {visits})",
            words.unwrap_or_default().0.join(" ")
        ))
    }

    /// Forget the words.
    #[tool]
    pub fn forget(ctx: Context) -> Result<usize, ToolError> {
        let words: Option<Words> = ctx.session()?.remove()?;
        Ok(words.map_or(0, |w| w.0.len()))
    }

    /// Read a number kept under a key.
    #[tool]
    pub fn number(ctx: Context, key: String) -> Result<Option<u32>, ToolError> {
        Ok(ctx.session()?.get_key(&key)?)
    }

    /// Hide a tool, prompt or resource from this session; `show` shows it again.
    #[tool]
    pub fn visibility(
        ctx: Context,
        kind: String,
        name: String,
        show: bool,
    ) -> Result<bool, ToolError> {
        let session = ctx.session()?;
        Ok(match (kind.as_str(), show) {
            ("tool", true) => session.enable_tool(&name),
            ("tool", false) => session.disable_tool(&name),
            ("prompt", true) => session.enable_prompt(&name),
            ("prompt", false) => session.disable_prompt(&name),
            (_, true) => session.enable_resource(&name),
            (_, false) => session.disable_resource(&name),
        })
    }

    /// Make the session see everything as the server offers it again.
    #[tool]
    pub fn reset(ctx: Context) -> Result<bool, ToolError> {
        Ok(ctx.session()?.reset_visibility())
    }

    /// A tool the server offers to no one until a session shows it.
    #[tool]
    pub fn secret() -> &'static str {
        "the cake is in the cupboard"
    }

    /// A prompt.
    #[prompt]
    pub fn hello() -> String {
        "hello".into()
    }

    /// A resource.
    #[resource("memo://today")]
    pub fn today() -> String {
        "today".into()
    }
}

fn session_server() -> Server {
    use sessions::*;
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![
            remember, recall, forget, number, visibility, reset, secret
        ])
        .prompts(mcp_runtime::prompts![hello])
        .resources(mcp_runtime::resources![today])
        .build()
        .unwrap();
    // Disabled off the runtime, so the change is announced at once, to no session yet: in
    // the runtime its `list_changed` would wait 5 ms to coalesce, and on a busy machine reach
    // a session that connected meanwhile, among the notices the test counts.
    std::thread::scope(|scope| {
        scope.spawn(|| server.disable_tool("secret"));
    });
    server
}

async fn names(client: &MemoryClient, list: &str, field: &str, key: &str) -> Vec<String> {
    let page = client.request(list, json!({})).await.unwrap();
    page[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[key].as_str().unwrap().to_owned())
        .collect()
}

#[mcp_runtime::test]
async fn each_session_keeps_its_own_store_by_type_and_by_key() {
    let server = session_server();
    let (one, two) = (connected(&server).await, connected(&server).await);
    for (word, count) in [("milk", "1"), ("eggs", "2")] {
        let result = one
            .call_tool("remember", json!({"word": word}))
            .await
            .unwrap();
        assert_eq!(text(&result), count);
    }
    let result = two
        .call_tool("remember", json!({"word": "tea"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "1", "the second session's store is its own");
    let result = one.call_tool("recall", json!({})).await.unwrap();
    assert_eq!(text(&result), "milk eggs (visit 1)");
    let result = one.call_tool("recall", json!({})).await.unwrap();
    assert_eq!(text(&result), "milk eggs (visit 2)");
    let result = one
        .call_tool("number", json!({"key": "visits"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "2");
    let result = two
        .call_tool("number", json!({"key": "visits"}))
        .await
        .unwrap();
    assert!(result.content.is_empty(), "no visits in the second session");
    let result = one.call_tool("forget", json!({})).await.unwrap();
    assert_eq!(text(&result), "2");
    let result = one.call_tool("recall", json!({})).await.unwrap();
    assert_eq!(text(&result), " (visit 3)");
    // A value read as the wrong type is a tool error naming the key.
    let result = one
        .call_tool("remember", json!({"word": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "1");
    let result = one
        .call_tool(
            "number",
            json!({"key": std::any::type_name::<sessions::Words>()}),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        text(&result).starts_with(
            "the session value `state::sessions::Words` could not be read or written: invalid type"
        ),
        "{}",
        text(&result)
    );
}

#[mcp_runtime::test]
async fn a_session_hides_and_shows_items_for_itself_alone_and_hears_of_it_alone() {
    let server = session_server();
    let (one, two) = (connected(&server).await, connected(&server).await);
    let tools = names(&one, "tools/list", "tools", "name").await;
    assert!(!tools.contains(&"secret".to_owned()), "{tools:?}");

    // Shown to the first session only, even though the server disabled it.
    let result = one
        .call_tool(
            "visibility",
            json!({"kind": "tool", "name": "secret", "show": true}),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "true");
    let notice = one.next_message().await.unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    assert!(
        names(&one, "tools/list", "tools", "name")
            .await
            .contains(&"secret".to_owned())
    );
    let result = one.call_tool("secret", json!({})).await.unwrap();
    assert_eq!(text(&result), "the cake is in the cupboard");
    assert!(
        !names(&two, "tools/list", "tools", "name")
            .await
            .contains(&"secret".to_owned())
    );
    let refused = two.call_tool("secret", json!({})).await.unwrap_err();
    assert_eq!(refused.code, -32602);

    // Hidden from the first session only: gone from its lists, refused as unknown.
    for (kind, name, list, field, key) in [
        ("tool", "number", "tools/list", "tools", "name"),
        ("prompt", "hello", "prompts/list", "prompts", "name"),
        (
            "resource",
            "memo://today",
            "resources/list",
            "resources",
            "uri",
        ),
    ] {
        let result = one
            .call_tool(
                "visibility",
                json!({"kind": kind, "name": name, "show": false}),
            )
            .await
            .unwrap();
        assert_eq!(text(&result), "true", "{kind}");
        let notice = one.next_message().await.unwrap();
        assert_eq!(
            notice["method"],
            format!("notifications/{field}/list_changed"),
            "{kind}"
        );
        assert!(
            !names(&one, list, field, key)
                .await
                .contains(&name.to_owned()),
            "{kind}"
        );
        assert!(
            names(&two, list, field, key)
                .await
                .contains(&name.to_owned()),
            "{kind}"
        );
    }
    let refused = one
        .call_tool("number", json!({"key": "k"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32602);
    let refused = one
        .request("prompts/get", json!({"name": "hello"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32602);
    let refused = one
        .request("resources/read", json!({"uri": "memo://today"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32002);
    assert!(two.call_tool("number", json!({"key": "k"})).await.is_ok());

    // Hiding what is hidden already changes nothing and says nothing.
    let result = one
        .call_tool(
            "visibility",
            json!({"kind": "tool", "name": "number", "show": false}),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "false");
    // The second session heard of none of it; a server-wide change reaches both.
    server.disable_tool("forget");
    for client in [&one, &two] {
        let notice = client.next_message().await.unwrap();
        assert_eq!(notice["method"], "notifications/tools/list_changed");
    }
    let tools = names(&one, "tools/list", "tools", "name").await;
    assert_eq!(
        tools,
        ["recall", "remember", "reset", "secret", "visibility"]
    );
    let tools = names(&two, "tools/list", "tools", "name").await;
    assert_eq!(
        tools,
        ["number", "recall", "remember", "reset", "visibility"]
    );

    // Reset: the session sees what the server offers again, and hears of it.
    let result = one.call_tool("reset", json!({})).await.unwrap();
    assert_eq!(text(&result), "true");
    let notice = one.next_message().await.unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    let tools = names(&one, "tools/list", "tools", "name").await;
    assert_eq!(
        tools,
        ["number", "recall", "remember", "reset", "visibility"]
    );
    let result = one.call_tool("reset", json!({})).await.unwrap();
    assert_eq!(text(&result), "false", "nothing left to reset");
}

#[mcp_runtime::test]
async fn a_stateless_request_has_no_session_and_is_told_so() {
    let server = session_server();
    let client = server.connect_memory();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let result = client
        .request(
            "tools/call",
            json!({"name": "remember", "arguments": {"word": "x"}, "_meta": meta}),
        )
        .await
        .unwrap();
    assert_eq!(result["isError"], true, "{result}");
    let message = result["content"][0]["text"].as_str().unwrap();
    assert!(
        message.starts_with(
            "this request has no session (the client speaks the stateless revision of MCP"
        ),
        "{message}"
    );
}

/// A pair that is its own tools' argument and result.
#[derive(
    Clone,
    mcp_runtime::serde::Serialize,
    mcp_runtime::serde::Deserialize,
    mcp_runtime::schemars::JsonSchema,
)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Pair {
    left: i64,
    right: i64,
}

#[toolbox]
impl Pair {
    /// Add this pair to another, field by field.
    #[tool]
    fn plus(&self, other: Self) -> Json<Self> {
        Json(Pair {
            left: self.left + other.left,
            right: self.right + other.right,
        })
    }
}

#[mcp_runtime::test]
async fn a_toolbox_method_may_name_its_own_type_as_self() {
    let server = mcp_runtime::server!()
        .auto_register(false)
        .toolbox(Pair { left: 1, right: 2 })
        .build()
        .unwrap();
    let client = connected(&server).await;
    let result = client
        .call_tool("plus", json!({"other": {"left": 10, "right": 20}}))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"left": 11, "right": 22}))
    );
}
