//! `tools/list` and `tools/call` of a catalogue covering every supported parameter and return
//! type, under each protocol revision: snapshots of the list, and every message checked
//! against that revision's official schema.
//!
//! Regenerate the snapshots with `UPDATE_SNAPSHOTS=1 cargo test -p mcp-tests --test tools_list`.

use std::path::Path;

use mcp_tests::{StdioServer, assert_valid};
use serde_json::{Value, json};

const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn initialized(version: &str) -> StdioServer {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref());
    let init = server.initialize(version);
    assert_eq!(init["result"]["protocolVersion"], version);
    server
}

fn list(server: &mut StdioServer) -> Value {
    server.request(1, "tools/list", json!({}));
    let mut response = server.response(1);
    assert!(response["result"]["nextCursor"].is_null(), "one page");
    response["result"].take()
}

#[test]
fn tools_list_matches_its_snapshot_and_the_schema_of_each_revision() {
    for version in VERSIONS {
        let mut server = initialized(version);
        let result = list(&mut server);
        assert_valid(version, "ListToolsResult", &result);
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("snapshots")
            .join(format!("tools_list.{version}.json"));
        let actual = serde_json::to_string_pretty(&result).unwrap() + "\n";
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run with UPDATE_SNAPSHOTS=1 to create it",
                path.display()
            )
        });
        assert_eq!(
            actual,
            expected,
            "{version}: tools/list differs from {}",
            path.display()
        );
    }
}

#[test]
fn schemas_carry_descriptions_required_fields_and_no_dialect_url() {
    let mut server = initialized("2025-11-25");
    let tools = list(&mut server)["tools"].take();
    let every = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "every_parameter")
        .unwrap();
    let schema = &every["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert!(schema.get("$schema").is_none());
    assert!(
        schema.get("$defs").is_none(),
        "non-recursive types are inlined"
    );
    assert!(
        schema.get("title").is_none(),
        "the generated struct's name is not a title"
    );
    assert_eq!(
        schema["properties"]["integer"]["description"],
        "A signed integer."
    );
    assert_eq!(
        schema["properties"]["colour"]["enum"],
        json!(["red", "green", "blue"])
    );
    assert_eq!(schema["properties"]["point"]["type"], "object");
    assert_eq!(
        schema["properties"]["anything"],
        json!({"description": "Anything at all."})
    );
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!required.contains(&"maybe"), "Option<T> is optional");
    assert!(required.contains(&"integer"));
}

/// A valid call of every catalogue tool that completes normally.
fn sample_calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "every_parameter",
            json!({
                "integer": -3, "small": 7, "float": 0.25, "flag": true, "text": "hi",
                "words": ["a", "b"], "colour": "green", "point": {"x": 1.0, "y": 2.0},
                "counts": {"a": 1}, "anything": [null, {"k": 1}]
            }),
        ),
        (
            "count_nodes",
            json!({"tree": {"label": "root", "children": [{"label": "leaf"}]}}),
        ),
        ("search", json!({"query": "rust"})),
        ("do_nothing", json!({})),
        ("static_text", json!({})),
        ("float", json!({})),
        ("boolean", json!({})),
        ("point", json!({})),
        ("primes", json!({})),
        ("image", json!({})),
        ("audio", json!({})),
        ("link", json!({})),
        ("embedded", json!({})),
        ("several", json!({})),
        ("full", json!({})),
        ("fail", json!({"reason": "on purpose"})),
        ("maybe", json!({"say": true})),
        ("maybe", json!({"say": false})),
        ("maybe_primes", json!({"find": true})),
        ("fast", json!({})),
        ("progress", json!({})),
        ("log", json!({})),
    ]
}

#[test]
fn every_result_is_valid_under_each_revision() {
    for version in VERSIONS {
        let mut server = initialized(version);
        for (i, (name, arguments)) in sample_calls().into_iter().enumerate() {
            let id = i as i64 + 10;
            server.request(
                id,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            );
            let response = server.response(id);
            assert!(
                response.get("result").is_some(),
                "{version} {name}: {response}"
            );
            assert_valid(version, "CallToolResult", &response["result"]);
        }
    }
}

#[test]
fn results_carry_what_each_return_type_promises() {
    let mut server = initialized("2025-11-25");
    let mut results = std::collections::HashMap::new();
    for (i, (name, arguments)) in sample_calls().into_iter().enumerate() {
        let id = i as i64 + 10;
        server.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        results.insert(name, server.response(id)["result"].take());
    }
    assert_eq!(
        results["every_parameter"]["content"][0]["text"],
        "integer=-3 small=7 float=0.25 flag=true text=hi maybe=None words=[\"a\", \"b\"] colour=green point=(1,2) counts=1 anything=[null,{\"k\":1}]"
    );
    assert_eq!(results["count_nodes"]["content"][0]["text"], "root: 2");
    assert_eq!(results["search"]["content"][0]["text"], "rust (limit 10)");
    assert_eq!(results["do_nothing"], json!({"content": []}));
    assert_eq!(
        results["point"]["structuredContent"],
        json!({"x": 1.0, "y": 2.0})
    );
    assert_eq!(
        results["point"]["content"][0]["text"],
        r#"{"x":1.0,"y":2.0}"#
    );
    assert_eq!(
        results["primes"]["structuredContent"],
        json!({"result": [2, 3, 5, 7]})
    );
    // No schema to match, and still an object, wrapped as a schema would be.
    assert_eq!(
        results["maybe_primes"]["structuredContent"],
        json!({"result": [2, 3, 5, 7]})
    );
    assert_eq!(results["image"]["content"][0]["mimeType"], "image/png");
    assert_eq!(results["audio"]["content"][0]["type"], "audio");
    assert_eq!(results["link"]["content"][0]["type"], "resource_link");
    assert_eq!(
        results["embedded"]["content"][0]["resource"]["text"],
        "remember the milk"
    );
    assert_eq!(results["several"]["content"].as_array().unwrap().len(), 2);
    assert_eq!(results["full"]["_meta"], json!({"traced": true}));
    assert_eq!(results["fail"]["isError"], true);
    assert_eq!(results["fail"]["content"][0]["text"], "failed: on purpose");
}

#[test]
fn older_revisions_get_only_what_they_define() {
    let mut server = initialized("2024-11-05");
    let tools = list(&mut server)["tools"].take();
    for tool in tools.as_array().unwrap() {
        for key in ["title", "outputSchema", "annotations"] {
            assert!(tool.get(key).is_none(), "2024-11-05 has no `{key}`: {tool}");
        }
    }
    for (id, name) in [(1, "point"), (2, "link"), (3, "audio")] {
        server.request(id, "tools/call", json!({"name": name}));
        let result = server.response(id)["result"].take();
        assert!(result.get("structuredContent").is_none(), "{result}");
        assert_eq!(result["content"][0]["type"], "text", "{name}: {result}");
    }
}

#[test]
#[should_panic(expected = "not a valid 2025-11-25 `CallToolResult`")]
fn the_schema_check_rejects_what_the_specification_does_not_allow() {
    assert_valid(
        "2025-11-25",
        "CallToolResult",
        &json!({"content": [{"type": "text"}]}),
    );
}

#[test]
#[should_panic(expected = "not a valid 2024-11-05 `Tool`")]
fn the_draft_07_schema_check_rejects_too() {
    assert_valid(
        "2024-11-05",
        "Tool",
        &json!({"name": "x", "inputSchema": {"type": "string"}}),
    );
}
