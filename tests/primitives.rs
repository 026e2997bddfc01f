//! Prompts, resources, templates, completions, subscriptions, run-time changes and
//! pagination — each scenario run twice: against the catalogue server over real pipes, and
//! against the same catalogue through the in-process client.

#[path = "servers/catalogue_items.rs"]
mod items;

use std::time::Duration;

use mcp_runtime::MemoryClient;
use mcp_tests::{StdioServer, assert_valid};
use serde_json::{Value, json};

/// A client over either transport, driven synchronously.
enum Peer {
    Stdio {
        server: StdioServer,
        next_id: i64,
    },
    Memory {
        runtime: mcp_runtime::tokio::runtime::Runtime,
        client: MemoryClient,
    },
}

/// A response: the result, or the error object.
type Response = Result<Value, Value>;

impl Peer {
    fn both(page_size: usize) -> [Peer; 2] {
        [Peer::stdio(page_size), Peer::memory(page_size)]
    }

    fn stdio(page_size: usize) -> Peer {
        let page = page_size.to_string();
        let mut server = StdioServer::spawn_with_env(
            env!("CARGO_BIN_EXE_catalogue").as_ref(),
            &[("PAGE_SIZE", &page)],
        );
        server.initialize("2025-11-25");
        Peer::Stdio { server, next_id: 1 }
    }

    fn memory(page_size: usize) -> Peer {
        let runtime = mcp_runtime::tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let client = runtime.block_on(async {
            let server = mcp_runtime::server!().page_size(page_size).build().unwrap();
            let client = server.connect_memory();
            client.initialize().await.unwrap();
            client
        });
        Peer::Memory { runtime, client }
    }

    fn name(&self) -> &'static str {
        match self {
            Peer::Stdio { .. } => "stdio",
            Peer::Memory { .. } => "memory",
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        match self {
            Peer::Stdio { server, next_id } => {
                *next_id += 1;
                server.request(*next_id, method, params);
                let mut response = server.response(*next_id);
                match response.get_mut("error") {
                    Some(error) => Err(error.take()),
                    None => Ok(response["result"].take()),
                }
            }
            Peer::Memory { runtime, client } => runtime
                .block_on(client.request(method, params))
                .map_err(|e| serde_json::to_value(e).unwrap()),
        }
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let name = self.name();
        self.request(method, params)
            .unwrap_or_else(|e| panic!("{name}: {method} failed: {e}"))
    }

    fn error(&mut self, method: &str, params: Value) -> Value {
        let name = self.name();
        match self.request(method, params) {
            Err(e) => e,
            Ok(r) => panic!("{name}: {method} succeeded: {r}"),
        }
    }

    /// The notifications that arrive within `wait`.
    fn notifications(&mut self, wait: Duration) -> Vec<Value> {
        let mut out = Vec::new();
        match self {
            Peer::Stdio { server, .. } => {
                out.extend(server.take_backlog());
                while let Some(m) = server.recv_line_within(wait) {
                    out.push(m);
                }
            }
            Peer::Memory { runtime, client } => runtime.block_on(async {
                while let Ok(Some(m)) =
                    mcp_runtime::tokio::time::timeout(wait, client.next_message()).await
                {
                    out.push(m);
                }
            }),
        }
        out
    }

    /// Every item of a paginated list, following `nextCursor`.
    fn list_all(&mut self, method: &str, key: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut params = json!({});
        loop {
            let page = self.ok(method, params);
            items.extend(page[key].as_array().unwrap().iter().cloned());
            match page["nextCursor"].as_str() {
                Some(c) => params = json!({ "cursor": c }),
                None => return items,
            }
        }
    }
}

fn code(error: &Value) -> i64 {
    error["code"].as_i64().unwrap()
}

fn message(error: &Value) -> &str {
    error["message"].as_str().unwrap()
}

#[test]
fn prompts_are_listed_with_their_arguments() {
    for mut peer in Peer::both(200) {
        let result = peer.ok("prompts/list", json!({}));
        assert_valid("2025-11-25", "ListPromptsResult", &result);
        let review = result["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "code_review")
            .unwrap();
        assert_eq!(review["title"], "Code review");
        assert_eq!(review["description"], "Review the changes on a branch.");
        assert_eq!(
            review["arguments"][0],
            json!({"name": "base_branch", "description": "Branch to compare against, e.g. main.", "required": true})
        );
        assert_eq!(
            review["arguments"][1]["required"], false,
            "Option<T> is optional"
        );
    }
}

#[test]
fn prompts_get_renders_typed_arguments() {
    for mut peer in Peer::both(200) {
        let result = peer.ok(
            "prompts/get",
            json!({"name": "code_review", "arguments": {"base_branch": "main", "language": "rust", "max_files": "3"}}),
        );
        assert_valid("2025-11-25", "GetPromptResult", &result);
        assert_eq!(
            result["messages"][0]["content"]["text"],
            "Review the rust changes against `main` (at most 3 files)."
        );
        assert_eq!(result["messages"][1]["role"], "assistant");

        let result = peer.ok(
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ada"}}),
        );
        assert_eq!(
            result["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}])
        );
    }
}

#[test]
fn bad_prompt_arguments_are_invalid_params_naming_the_argument() {
    for mut peer in Peer::both(200) {
        let e = peer.error(
            "prompts/get",
            json!({"name": "code_review", "arguments": {}}),
        );
        assert_eq!(code(&e), -32602);
        assert!(message(&e).contains("`base_branch`"), "{e}");

        let e = peer.error(
            "prompts/get",
            json!({"name": "code_review", "arguments": {"base_branch": "main", "max_files": "many"}}),
        );
        assert_eq!(code(&e), -32602);
        assert!(message(&e).contains("`max_files`"), "{e}");

        let e = peer.error(
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": 7}}),
        );
        assert_eq!(code(&e), -32602, "arguments are strings");

        let e = peer.error("prompts/get", json!({"name": "no_such_prompt"}));
        assert_eq!(code(&e), -32602);

        let e = peer.error("prompts/get", json!({"name": "failing_prompt"}));
        assert_eq!(code(&e), -32603);
        assert!(message(&e).contains("template store is offline"), "{e}");
    }
}

#[test]
fn prompt_messages_carry_every_content_kind() {
    for mut peer in Peer::both(200) {
        let result = peer.ok("prompts/get", json!({"name": "rich_prompt"}));
        assert_valid("2025-11-25", "GetPromptResult", &result);
        assert_eq!(result["description"], "Rich content");
        let kinds: Vec<&Value> = result["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["content"]["type"])
            .collect();
        assert_eq!(
            kinds,
            [&json!("resource"), &json!("image"), &json!("resource_link")]
        );
    }
}

#[test]
fn resources_are_listed_with_what_each_template_lists() {
    for mut peer in Peer::both(200) {
        let result = peer.ok("resources/list", json!({}));
        assert_valid("2025-11-25", "ListResourcesResult", &result);
        let uris: Vec<&str> = result["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "test://asks-name",
                "test://json-numbers",
                "test://static-binary",
                "test://static-text",
                "test://watched",
                "test://items/1/data",
                "test://items/2/data",
                "test://items/3/data",
            ]
        );
        let text = &result["resources"][3];
        assert_eq!(
            text["annotations"],
            json!({"audience": ["user"], "priority": 0.5})
        );
        assert_eq!(result["resources"][2]["size"], 4);

        let result = peer.ok("resources/templates/list", json!({}));
        assert_valid("2025-11-25", "ListResourceTemplatesResult", &result);
        let templates: Vec<&str> = result["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        // The documented order: the longest literal prefix first, then by text.
        assert_eq!(
            templates,
            [
                "test://digits/{n}",
                "test://files/{+path}",
                "test://items/{id}/data",
                "test://search{?q,limit}"
            ]
        );
    }
}

#[test]
fn a_json_resource_is_listed_with_the_mime_type_it_is_read_with() {
    for mut peer in Peer::both(200) {
        let name = peer.name();
        let listed = peer.list_all("resources/list", "resources");
        let numbers = listed
            .iter()
            .find(|r| r["uri"] == "test://json-numbers")
            .unwrap_or_else(|| panic!("{name}: not listed"));
        let read = peer.ok("resources/read", json!({"uri": "test://json-numbers"}));
        assert_eq!(
            read["contents"][0]["mimeType"], "application/json",
            "{name}"
        );
        assert_eq!(
            numbers["mimeType"], read["contents"][0]["mimeType"],
            "{name}"
        );

        let templates = peer.list_all("resources/templates/list", "resourceTemplates");
        let digits = templates
            .iter()
            .find(|t| t["uriTemplate"] == "test://digits/{n}")
            .unwrap_or_else(|| panic!("{name}: not listed"));
        let read = peer.ok("resources/read", json!({"uri": "test://digits/2026"}));
        assert_eq!(read["contents"][0]["text"], "[2,0,2,6]", "{name}");
        assert_eq!(
            digits["mimeType"], read["contents"][0]["mimeType"],
            "{name}"
        );
    }
}

#[test]
fn a_null_prompt_argument_is_named_and_an_empty_optional_one_is_left_out() {
    for mut peer in Peer::both(200) {
        let name = peer.name();
        let e = peer.error(
            "prompts/get",
            json!({"name": "code_review", "arguments": {"base_branch": null}}),
        );
        assert_eq!(code(&e), -32602, "{name}");
        assert_eq!(
            message(&e),
            "missing required argument `base_branch`: it was given as null; give it as text",
            "{name}"
        );

        let result = peer.ok(
            "prompts/get",
            json!({"name": "code_review", "arguments": {"base_branch": "main", "language": null, "max_files": ""}}),
        );
        assert_eq!(
            result["messages"][0]["content"]["text"],
            "Review the any language changes against `main`.",
            "{name}"
        );

        let e = peer.error(
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": 7}}),
        );
        assert_eq!(
            message(&e),
            "invalid argument `name`: prompt arguments are text, so give it as a string, not a number",
            "{name}"
        );
    }
}

#[test]
fn reading_a_resource_echoes_the_uri_asked_for() {
    for mut peer in Peer::both(200) {
        let result = peer.ok("resources/read", json!({"uri": "test://static-text"}));
        assert_valid("2025-11-25", "ReadResourceResult", &result);
        assert_eq!(
            result["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain", "text": "Hello from a static resource"}])
        );
        let result = peer.ok("resources/read", json!({"uri": "test://static-binary"}));
        assert_eq!(result["contents"][0]["blob"], "AAEC/w==");

        let result = peer.ok("resources/read", json!({"uri": "test://items/2/data"}));
        assert_valid("2025-11-25", "ReadResourceResult", &result);
        assert_eq!(result["contents"][0]["uri"], "test://items/2/data");
        assert_eq!(result["contents"][0]["mimeType"], "application/json");
        assert_eq!(result["contents"][0]["text"], r#"{"id":2,"name":"item 2"}"#);

        let result = peer.ok(
            "resources/read",
            json!({"uri": "test://files/notes/2025/todo.txt"}),
        );
        assert_eq!(
            result["contents"][0]["text"],
            "contents of notes/2025/todo.txt"
        );

        let result = peer.ok(
            "resources/read",
            json!({"uri": "test://search?limit=5&q=a%20b"}),
        );
        assert_eq!(
            result["contents"][0]["text"],
            r#"q=Some("a b") limit=Some(5)"#
        );
        let result = peer.ok("resources/read", json!({"uri": "test://search"}));
        assert_eq!(result["contents"][0]["text"], "q=None limit=None");
    }
}

#[test]
fn unknown_resources_are_not_found_with_the_uri() {
    for mut peer in Peer::both(200) {
        for uri in [
            "test://nothing-here",
            "test://items/../data",
            "test://items/a%2Fb/data",
            "test://items/1/2/data",
        ] {
            let e = peer.error("resources/read", json!({ "uri": uri }));
            assert_eq!(code(&e), -32002, "{uri}: {e}");
            assert_eq!(e["data"]["uri"], uri);
        }
        // The handler's own not-found keeps its code.
        let e = peer.error("resources/read", json!({"uri": "test://items/9/data"}));
        assert_eq!(code(&e), -32002);
        // A variable that does not parse into its parameter's type names it.
        let e = peer.error("resources/read", json!({"uri": "test://items/abc/data"}));
        assert_eq!(code(&e), -32602);
        assert!(message(&e).contains("`id`"), "{e}");
    }
}

#[test]
fn completions_suggest_at_most_one_hundred_values() {
    for mut peer in Peer::both(200) {
        let result = peer.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "r"}}),
        );
        assert_valid("2025-11-25", "CompleteResult", &result);
        assert_eq!(
            result["completion"],
            json!({"values": ["ruby", "rust"], "total": 2, "hasMore": false})
        );

        let result = peer.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "max_files", "value": ""}}),
        );
        assert_eq!(
            result["completion"]["values"].as_array().unwrap().len(),
            100
        );
        assert_eq!(result["completion"]["total"], 150);
        assert_eq!(result["completion"]["hasMore"], true);

        let result = peer.ok(
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "test://items/{id}/data"},
                "argument": {"name": "id", "value": "2"},
                "context": {"arguments": {"other": "x"}}
            }),
        );
        assert_eq!(result["completion"]["values"], json!(["2"]));

        // An argument with no completion function has no suggestions.
        let result = peer.ok(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "base_branch", "value": "m"}}),
        );
        assert_eq!(result["completion"]["values"], json!([]));

        let e = peer.error(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "nope", "value": ""}}),
        );
        assert_eq!(code(&e), -32602);
        let e = peer.error(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://unknown/{x}"}, "argument": {"name": "x", "value": ""}}),
        );
        assert_eq!(code(&e), -32602);
    }
}

#[test]
fn subscribers_hear_about_updates_until_they_unsubscribe() {
    for mut peer in Peer::both(200) {
        let name = peer.name();
        assert_eq!(
            peer.ok("resources/subscribe", json!({"uri": "test://watched"})),
            json!({})
        );
        peer.ok("tools/call", json!({"name": "touch_watched"}));
        let notes = peer.notifications(Duration::from_millis(200));
        assert_eq!(
            notes,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}})
            ],
            "{name}"
        );
        for note in &notes {
            assert_valid("2025-11-25", "ResourceUpdatedNotification", note);
        }
        peer.ok("resources/unsubscribe", json!({"uri": "test://watched"}));
        peer.ok("tools/call", json!({"name": "touch_watched"}));
        assert!(
            peer.notifications(Duration::from_millis(200)).is_empty(),
            "{name}"
        );

        let e = peer.error("resources/subscribe", json!({"uri": "test://nothing"}));
        assert_eq!(code(&e), -32002);
    }
}

#[test]
fn run_time_changes_are_announced_once_and_take_effect() {
    for mut peer in Peer::both(200) {
        let name = peer.name();
        let result = peer.ok(
            "tools/call",
            json!({"name": "toggle_tools", "arguments": {"names": ["fast", "float", "boolean"], "enabled": false}}),
        );
        assert_eq!(result["content"][0]["text"], "changed 3");
        let notes = peer.notifications(Duration::from_millis(200));
        assert_eq!(
            notes,
            [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})],
            "{name}: three changes, one notification"
        );
        assert_valid("2025-11-25", "ToolListChangedNotification", &notes[0]);
        let tools = peer.list_all("tools/list", "tools");
        assert!(!tools.iter().any(|t| t["name"] == "fast"), "{name}");
        let e = peer.error("tools/call", json!({"name": "fast"}));
        assert_eq!(code(&e), -32602, "{name}: a disabled tool is unknown");

        peer.ok(
            "tools/call",
            json!({"name": "toggle_tool", "arguments": {"name": "fast", "enabled": true}}),
        );
        assert_eq!(
            peer.notifications(Duration::from_millis(200)).len(),
            1,
            "{name}"
        );
        assert_eq!(
            peer.ok("tools/call", json!({"name": "fast"}))["content"][0]["text"],
            "fast"
        );

        // A change that changes nothing announces nothing.
        peer.ok(
            "tools/call",
            json!({"name": "toggle_tool", "arguments": {"name": "fast", "enabled": true}}),
        );
        assert!(
            peer.notifications(Duration::from_millis(200)).is_empty(),
            "{name}"
        );
    }
}

#[test]
fn every_list_pages_through_its_items() {
    for mut peer in Peer::both(2) {
        let name = peer.name();
        for (method, key, expected) in [
            ("tools/list", "tools", 0),
            ("prompts/list", "prompts", 4),
            ("resources/list", "resources", 8),
            ("resources/templates/list", "resourceTemplates", 4),
        ] {
            let first = peer.ok(method, json!({}));
            assert!(first[key].as_array().unwrap().len() <= 2, "{name} {method}");
            assert!(
                first["nextCursor"].is_string(),
                "{name} {method}: more than one page"
            );
            let all = peer.list_all(method, key);
            if expected > 0 {
                assert_eq!(all.len(), expected, "{name} {method}");
            }
            let mut seen: Vec<String> = all.iter().map(|i| i.to_string()).collect();
            seen.dedup();
            assert_eq!(seen.len(), all.len(), "{name} {method}: no item twice");
            let e = peer.error(method, json!({"cursor": "bogus"}));
            assert_eq!(code(&e), -32602, "{name} {method}");
        }
    }
}
