//! `list`, `call`, `read`, `prompt` and `lint`: one client session with a server, its
//! answer printed for people or, with `--json`, for scripts.

use std::path::Path;
use std::time::Duration;

use clap::ArgMatches;
use mcp_runtime::client::{CallError, Client};
use mcp_runtime::testing::Severity;
use mcp_runtime::tokio::process::Command;
use serde_json::{Map, Value, json};

use crate::crate_build::{self, Selection};
use crate::terminal::{self, line, lines};
use crate::{Failure, Outcome};

/// Connects to the TARGET of a subcommand, building the current crate for `.`.
async fn connect(m: &ArgMatches) -> Result<Client, Failure> {
    let target = m.get_one::<String>("target").map_or(".", String::as_str);
    let timeout = Duration::from_secs(*m.get_one::<u64>("timeout").unwrap_or(&60));
    let mut builder = Client::builder()
        .name("cargo-mcp", env!("CARGO_PKG_VERSION"))
        .timeout(timeout);
    for (name, value) in headers(m)? {
        builder = builder.header(name, value);
    }
    let env = key_values(m, "env")?;
    if target.starts_with("http://") || target.starts_with("https://") {
        if !env.is_empty() {
            return Err(Failure::Failed(
                "--env sets the environment of a server process; a URL target has none".into(),
            ));
        }
        return Ok(builder.http(target).await?);
    }
    let mut command = if target == "." {
        let built = crate_build::build(Path::new("."), &Selection::from_matches(m), false).await?;
        Command::new(built.executable)
    } else {
        command_line(target)?
    };
    command.envs(env);
    builder.stdio(command).await.map_err(|e| match e {
        CallError::Transport(problem) | CallError::Closed(problem) => Failure::Connection(format!(
            "cannot start `{target}`: {problem}; check the path (build it first?) or pass a URL"
        )),
        other => other.into(),
    })
}

fn command_line(target: &str) -> Result<Command, Failure> {
    let (program, args) = command_words(target)?;
    let mut command = Command::new(program);
    command.args(args);
    Ok(command)
}

/// A command line's program and arguments: the whole TARGET when it names a file (a path
/// with spaces), else words split at white space.
pub(crate) fn command_words(target: &str) -> Result<(&str, Vec<&str>), Failure> {
    if Path::new(target).is_file() {
        return Ok((target, Vec::new()));
    }
    let mut words = target.split_whitespace();
    let program = words
        .next()
        .ok_or_else(|| Failure::Failed("TARGET is empty: name a command or a URL".into()))?;
    Ok((program, words.collect()))
}

/// `--header "Name: value"` options, each name once (compared without case, as in HTTP).
pub(crate) fn headers(m: &ArgMatches) -> Result<Vec<(String, String)>, Failure> {
    let headers = m
        .get_many::<String>("header")
        .into_iter()
        .flatten()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .filter(|(k, _)| !k.is_empty())
                // The text is not repeated: it is likely a token given without its name.
                .ok_or_else(|| {
                    Failure::Failed(
                        "a --header has no name before a `:`: write it as `Name: value`, \
                         such as `Authorization: Bearer TOKEN`"
                            .into(),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    refuse_repeated(
        "--header",
        headers.iter().map(|(k, _)| k.to_ascii_lowercase()),
    )?;
    Ok(headers)
}

/// `KEY=VALUE` options, each key once.
pub(crate) fn key_values(m: &ArgMatches, id: &str) -> Result<Vec<(String, String)>, Failure> {
    let pairs = m
        .get_many::<String>(id)
        .into_iter()
        .flatten()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .filter(|(k, _)| !k.is_empty())
                // The text is not repeated: it is likely a secret given without its name.
                .ok_or_else(|| {
                    Failure::Failed(format!(
                        "an --{id} value has no name before an `=`: write it as KEY=VALUE"
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    refuse_repeated(&format!("--{id}"), pairs.iter().map(|(k, _)| k.clone()))?;
    Ok(pairs)
}

/// Fails when a name comes twice.
///
/// Only one value of a name can take effect: a process environment and a JSON object (an
/// `install` entry) hold each name once, and a server that gets a header twice reads either
/// one. Which one wins is not the user's choice, and is never reported: refuse instead.
fn refuse_repeated(option: &str, keys: impl Iterator<Item = String>) -> Result<(), Failure> {
    let mut seen = std::collections::HashSet::new();
    for key in keys {
        if !seen.insert(key.clone()) {
            return Err(Failure::Failed(format!(
                "{option} `{key}` is given twice: give it once, with the value you mean"
            )));
        }
    }
    Ok(())
}

fn json_flag(m: &ArgMatches) -> bool {
    m.get_flag("json")
}

fn print_json(value: &Value) {
    println!(
        "{}",
        terminal::json(serde_json::to_string_pretty(value).unwrap_or_default())
    );
}

/// `cargo mcp list TARGET`.
pub(crate) async fn list(m: &ArgMatches) -> Outcome {
    let client = connect(m).await?;
    let server = client.server().clone();
    let tools = if server.has("tools") {
        client.all_tools().await?
    } else {
        Vec::new()
    };
    let prompts = if server.has("prompts") {
        client.all_prompts().await?
    } else {
        Vec::new()
    };
    let (resources, templates) = if server.has("resources") {
        (
            client.all_resources().await?,
            client.all_resource_templates().await?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    client.close().await;
    if json_flag(m) {
        print_json(&json!({
            "server": server.server_info,
            "protocolVersion": server.protocol_version,
            "tools": tools,
            "prompts": prompts,
            "resources": resources,
            "resourceTemplates": templates,
        }));
        return Ok(());
    }
    println!(
        "{} {} (MCP {})",
        line(&server.server_info.name),
        line(&server.server_info.version),
        line(&server.protocol_version)
    );
    section("Tools", tools.len());
    for tool in &tools {
        println!(
            "  {}({})",
            line(&tool.name),
            line(&signature(&tool.input_schema))
        );
        describe(tool.description.as_deref());
    }
    section("Prompts", prompts.len());
    for prompt in &prompts {
        let arguments: Vec<String> = prompt
            .arguments
            .iter()
            .map(|a| format!("{}{}", a.name, if a.required { "" } else { "?" }))
            .collect();
        println!("  {}({})", line(&prompt.name), line(&arguments.join(", ")));
        describe(prompt.description.as_deref());
    }
    section("Resources", resources.len());
    for resource in &resources {
        println!("  {}  {}", line(&resource.uri), line(&resource.name));
        describe(resource.description.as_deref());
    }
    section("Resource templates", templates.len());
    for template in &templates {
        println!(
            "  {}  {}",
            line(&template.uri_template),
            line(&template.name)
        );
        describe(template.description.as_deref());
    }
    Ok(())
}

fn section(title: &str, count: usize) {
    if count > 0 {
        println!("\n{title} ({count}):");
    }
}

fn describe(description: Option<&str>) {
    if let Some(first) = description.and_then(|d| d.lines().find(|l| !l.trim().is_empty())) {
        println!("      {}", line(first.trim()));
    }
}

/// `a: integer, b?: string` from an input schema.
fn signature(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return String::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{name}{optional}: {}", type_name(property))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn type_name(schema: &Value) -> String {
    match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if schema.get("enum").is_some() => "enum".into(),
        _ if schema.get("$ref").is_some() => "object".into(),
        _ => "any".into(),
    }
}

/// The arguments of `call`: `KEY=VALUE` read as the schema says, `KEY:=JSON`, and `--args`.
fn tool_arguments(m: &ArgMatches, schema: Option<&Value>) -> Result<Map<String, Value>, Failure> {
    let mut arguments = match m.get_one::<String>("args-json") {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return Err(Failure::Failed("--args must be a JSON object".into())),
            Err(e) => return Err(Failure::Failed(format!("--args is not JSON: {e}"))),
        },
        None => Map::new(),
    };
    for pair in m.get_many::<String>("arguments").into_iter().flatten() {
        if let Some((key, text)) = pair.split_once(":=")
            && !key.contains('=')
        {
            let value = serde_json::from_str(text).map_err(|e| {
                Failure::Failed(format!("`{key}:={text}`: the value is not JSON ({e})"))
            })?;
            arguments.insert(key.to_owned(), value);
            continue;
        }
        let (key, text) = pair.split_once('=').ok_or_else(|| {
            Failure::Failed(format!(
                "`{pair}`: write arguments as KEY=VALUE (or KEY:=JSON)"
            ))
        })?;
        let property = schema.and_then(|s| s["properties"].get(key));
        arguments.insert(key.to_owned(), typed_value(text, property));
    }
    Ok(arguments)
}

/// Text stays text where the schema wants a string (or says nothing and the text is not
/// JSON); anything else is read as JSON.
fn typed_value(text: &str, property: Option<&Value>) -> Value {
    let wants_string = property.is_some_and(|p| match &p["type"] {
        Value::String(t) => t == "string",
        Value::Array(types) => types.iter().any(|t| t == "string"),
        _ => false,
    });
    if wants_string {
        return Value::String(text.to_owned());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// `cargo mcp call TARGET TOOL KEY=VALUE…`.
pub(crate) async fn call(m: &ArgMatches) -> Outcome {
    let client = connect(m).await?;
    let name = m.get_one::<String>("tool").expect("required");
    let has_plain_arguments = m.get_many::<String>("arguments").is_some();
    // The schema tells `n=5` (a number) from `text=5` (a string).
    let schema = if has_plain_arguments {
        let tools = client.all_tools().await?;
        match tools.into_iter().find(|t| t.name == *name) {
            Some(tool) => Some(tool.input_schema),
            None => {
                client.close().await;
                return Err(Failure::Protocol(format!(
                    "the server has no tool `{name}`: `cargo mcp list` shows its tools"
                )));
            }
        }
    } else {
        None
    };
    let arguments = tool_arguments(m, schema.as_ref())?;
    let result = client.call_tool(name, Value::Object(arguments)).await;
    client.close().await;
    let result = result?;
    if json_flag(m) {
        print_json(&json!(result));
    } else {
        print_content(&result.content);
        if result.content.is_empty()
            && let Some(structured) = &result.structured_content
        {
            print_json(structured);
        }
    }
    if result.is_error {
        return Err(Failure::Failed(format!(
            "the tool `{name}` reported an error"
        )));
    }
    Ok(())
}

/// Content blocks for people: text as it is, everything else named.
fn print_content(content: &[Value]) {
    for block in content {
        match block["type"].as_str() {
            Some("text") => println!("{}", lines(block["text"].as_str().unwrap_or_default())),
            Some("image" | "audio") => println!(
                "[{} {}, {} bytes of base64]",
                block["type"].as_str().unwrap_or_default(),
                line(block["mimeType"].as_str().unwrap_or("?")),
                block["data"].as_str().map_or(0, str::len)
            ),
            Some("resource") => {
                let resource = &block["resource"];
                match resource["text"].as_str() {
                    Some(text) => println!("{}", lines(text)),
                    None => println!(
                        "[resource {}]",
                        line(resource["uri"].as_str().unwrap_or("?"))
                    ),
                }
            }
            Some("resource_link") => {
                println!("[link {}]", line(block["uri"].as_str().unwrap_or("?")));
            }
            _ => print_json(block),
        }
    }
}

/// `cargo mcp read TARGET URI`.
pub(crate) async fn read(m: &ArgMatches) -> Outcome {
    let client = connect(m).await?;
    let uri = m.get_one::<String>("uri").expect("required");
    let result = client.read_resource(uri).await;
    client.close().await;
    let result = result?;
    if json_flag(m) {
        print_json(&json!(result));
        return Ok(());
    }
    for contents in &result.contents {
        match (contents["text"].as_str(), contents["blob"].as_str()) {
            (Some(text), _) => println!("{}", lines(text)),
            (None, Some(blob)) => println!(
                "[{} {}, {} bytes of base64: use --json to get them]",
                line(contents["uri"].as_str().unwrap_or("?")),
                line(contents["mimeType"].as_str().unwrap_or("?")),
                blob.len()
            ),
            _ => print_json(contents),
        }
    }
    Ok(())
}

/// `cargo mcp prompt TARGET NAME KEY=VALUE…`.
pub(crate) async fn prompt(m: &ArgMatches) -> Outcome {
    let mut arguments = Map::new();
    for pair in m.get_many::<String>("arguments").into_iter().flatten() {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| Failure::Failed(format!("`{pair}`: write arguments as KEY=VALUE")))?;
        arguments.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    let client = connect(m).await?;
    let name = m.get_one::<String>("name").expect("required");
    let result = client.get_prompt(name, arguments).await;
    client.close().await;
    let result = result?;
    if json_flag(m) {
        print_json(&json!(result));
        return Ok(());
    }
    if let Some(description) = &result.description {
        println!("{}\n", lines(description));
    }
    for message in &result.messages {
        println!("{}:", line(message["role"].as_str().unwrap_or("?")));
        print_content(std::slice::from_ref(&message["content"]));
        println!();
    }
    Ok(())
}

/// `cargo mcp lint [TARGET]`.
pub(crate) async fn lint(m: &ArgMatches) -> Outcome {
    let client = connect(m).await?;
    let tools = client.all_tools().await;
    client.close().await;
    let tools = tools?;
    let list = json!({ "tools": tools });
    let lint = mcp_runtime::testing::lint_tool_list(&list);
    let errors = lint.errors().count();
    let warnings = lint.warnings().count();
    if json_flag(m) {
        let findings: Vec<Value> = lint
            .findings()
            .iter()
            .map(|f| {
                json!({
                    "severity": if f.severity == Severity::Error { "error" } else { "warning" },
                    "kind": f.kind.to_string(),
                    "name": f.name,
                    "profile": f.profile,
                    "location": f.location,
                    "message": f.message,
                })
            })
            .collect();
        print_json(
            &json!({ "tools": tools.len(), "errors": errors, "warnings": warnings, "findings": findings }),
        );
    } else {
        // The findings quote the tools' names and schemas.
        print!("{}", lines(&lint.to_string()));
        let clients: Vec<&str> = mcp_runtime::schema::known_clients()
            .iter()
            .map(|c| c.client)
            .collect();
        println!(
            "{} tool(s) checked under every built-in schema profile and the profiles of {}: {errors} error(s), {warnings} warning(s)",
            tools.len(),
            clients.join(", ")
        );
    }
    if errors > 0 {
        return Err(Failure::Failed(
            "some clients may refuse these tools: see the errors above".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::typed_value;
    use serde_json::json;

    #[test]
    fn values_follow_the_schema() {
        let string = json!({"type": "string"});
        let number = json!({"type": "integer"});
        assert_eq!(typed_value("5", Some(&string)), json!("5"));
        assert_eq!(typed_value("5", Some(&number)), json!(5));
        assert_eq!(typed_value("[1,2]", None), json!([1, 2]));
        assert_eq!(typed_value("hello", Some(&number)), json!("hello"));
        assert_eq!(
            typed_value("true", Some(&json!({"type": ["string", "null"]}))),
            json!("true")
        );
    }
}
