//! Checks to call from your own tests: whether every client accepts this server's schemas
//! ([`lint_schemas`]), and snapshots of `tools/list` as each kind of client receives it
//! ([`assert_tools_list_snapshot`]); and [`Dispatcher`], which hands raw messages to a server
//! without a transport, for fuzzers and property tests.
//!
//! ```
//! use mcp_runtime::prelude::*;
//!
//! /// Count the nodes of a tree.
//! #[tool]
//! fn count(tree: Tree) -> usize {
//!     1 + tree.children.into_iter().map(count).sum::<usize>()
//! }
//!
//! #[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
//! #[serde(crate = "mcp_runtime::serde")]
//! #[schemars(crate = "mcp_runtime::schemars")]
//! struct Tree {
//!     children: Vec<Tree>,
//! }
//!
//! # fn main() {
//! let server = mcp_runtime::server!().auto_register(false).tools(mcp_runtime::tools![count]);
//! let lint = mcp_runtime::testing::lint_schemas(&server.build().unwrap());
//! lint.assert_no_errors();
//! // Clients that need every `$ref` inlined get the tree one level deep.
//! assert!(lint.warnings().any(|w| w.profile.as_deref() == Some("anthropic")));
//! # }
//! ```

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::schema::{SchemaProfile, Target};
use crate::server::Server;

/// The tool-name length past which some clients drop a tool (Cursor: 60).
const NAME_LENGTH_WARNING: usize = 60;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A client may refuse the item: under that profile the tool can disappear.
    Error,
    /// Accepted, but part of the schema's meaning is only in words, or not checked at all.
    Warning,
}

/// The kind of item a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
    /// A resource template.
    ResourceTemplate,
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::ResourceTemplate => "resource template",
        })
    }
}

/// One thing [`lint_schemas`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What kind of item it is about.
    pub kind: ItemKind,
    /// The item's name (the URI template, for a template).
    pub name: String,
    /// The profile it holds under; `None` when it holds under every profile.
    pub profile: Option<String>,
    /// Where: `name`, or a JSON pointer such as `inputSchema/properties/tree`.
    pub location: String,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{severity}: {} `{}`", self.kind, self.name)?;
        if let Some(profile) = &self.profile {
            write!(f, " under `{profile}`")?;
        }
        write!(f, " at {}: {}", self.location, self.message)
    }
}

/// What [`lint_schemas`] found, errors first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaLint {
    findings: Vec<Finding>,
}

impl SchemaLint {
    /// Every finding, errors first.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// The findings that may make a client refuse an item.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    /// The findings about meaning that is lost or only stated in words.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }

    /// Whether nothing may make a client refuse an item.
    pub fn is_clean(&self) -> bool {
        self.errors().next().is_none()
    }

    /// Panics, listing every error, unless there are none.
    #[track_caller]
    pub fn assert_no_errors(&self) {
        if !self.is_clean() {
            let errors: Vec<String> = self.errors().map(ToString::to_string).collect();
            panic!(
                "some clients may refuse this server's items:\n{}",
                errors.join("\n")
            );
        }
    }
}

impl fmt::Display for SchemaLint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        Ok(())
    }
}

/// Checks every enabled tool, prompt and resource template of a server against every
/// profile it may serve (the built-in ones, and its custom ones): what a profile cannot
/// express (an error: that client may refuse the tool) and what it only keeps in words (a
/// warning), plus the tool-name rules of the specification, the 60-character limit of some
/// clients, and tools without a description (a warning: a model sees only their name). A tool with a `schema_profile` of its own is checked under that one only.
pub fn lint_schemas(server: &Server) -> SchemaLint {
    let catalogue = server.catalogue();
    let profiles = server.schema_profiles().all();
    let mut findings = Vec::new();
    for tool in &catalogue.tools {
        let (input, output) = tool.schemas();
        lint_tool(
            &mut findings,
            profiles,
            ListedTool {
                name: tool.descriptor.name,
                description: tool.descriptor.description,
                own_profile: tool.descriptor.schema_profile.as_ref(),
                input,
                output,
            },
        );
    }
    for prompt in &catalogue.prompts {
        let d = prompt.descriptor;
        let mut found = |severity, location: &str, message: String| {
            findings.push(Finding {
                severity,
                kind: ItemKind::Prompt,
                name: d.name.to_owned(),
                profile: None,
                location: location.to_owned(),
                message,
            });
        };
        if d.name.trim().is_empty() {
            found(Severity::Error, "name", "the name is empty".into());
        }
        if d.name.chars().count() > NAME_LENGTH_WARNING {
            found(
                Severity::Warning,
                "name",
                format!(
                    "the name is longer than {NAME_LENGTH_WARNING} characters, past what some clients accept for tool names"
                ),
            );
        }
        for (i, argument) in d.arguments.iter().enumerate() {
            let location = format!("arguments/{i}");
            if argument.name.trim().is_empty() {
                found(Severity::Error, &location, "an argument has no name".into());
            } else if d.arguments[..i].iter().any(|a| a.name == argument.name) {
                found(
                    Severity::Error,
                    &location,
                    format!("two arguments are named `{}`", argument.name),
                );
            }
        }
    }
    for template in &catalogue.templates {
        let d = template.descriptor;
        if d.name.trim().is_empty() {
            findings.push(Finding {
                severity: Severity::Error,
                kind: ItemKind::ResourceTemplate,
                name: d.uri.to_owned(),
                profile: None,
                location: "name".into(),
                message: "the name is empty: every resource template needs one".into(),
            });
        }
    }
    findings.sort_by_key(|f| f.severity);
    SchemaLint { findings }
}

/// Checks a `tools/list` result as a server sent it (the object with `tools`, or the array
/// of tools) the way [`lint_schemas`] checks a server of this program: against the default
/// profile and every profile of the [client table](crate::schema::known_clients). For a
/// server in another process or language, reached with a client; `cargo mcp lint` runs it.
///
/// ```
/// use mcp_runtime::serde_json::json;
///
/// let list = json!({"tools": [{
///     "name": "tally",
///     "description": "Count words.",
///     "inputSchema": {
///         "type": "object",
///         "properties": {
///             "counts": {"type": "object", "additionalProperties": {"type": "integer"}}
///         }
///     }
/// }]});
/// let lint = mcp_runtime::testing::lint_tool_list(&list);
/// // OpenAI's strict mode closes every object, so a map cannot be expressed there.
/// let error = lint.errors().next().unwrap();
/// assert_eq!(error.profile.as_deref(), Some("openai-strict"));
/// assert_eq!(error.location, "inputSchema/properties/counts");
/// ```
pub fn lint_tool_list(list: &Value) -> SchemaLint {
    let profiles = crate::schema::ServerProfiles::new(None, true, Vec::new());
    let tools = list
        .get("tools")
        .unwrap_or(list)
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let empty = json!({});
    let mut findings = Vec::new();
    for tool in tools {
        lint_tool(
            &mut findings,
            profiles.all(),
            ListedTool {
                name: tool["name"].as_str().unwrap_or_default(),
                description: tool["description"].as_str(),
                own_profile: None,
                input: tool.get("inputSchema").unwrap_or(&empty),
                output: tool.get("outputSchema").filter(|s| !s.is_null()),
            },
        );
    }
    findings.sort_by_key(|f| f.severity);
    SchemaLint { findings }
}

/// What the lint reads of one tool.
struct ListedTool<'a> {
    name: &'a str,
    description: Option<&'a str>,
    own_profile: Option<&'a SchemaProfile>,
    input: &'a Value,
    output: Option<&'a Value>,
}

/// The findings of one tool: its name, its description, and its schemas under every profile
/// (or under its own one only).
fn lint_tool(findings: &mut Vec<Finding>, profiles: &[SchemaProfile], tool: ListedTool<'_>) {
    let name = tool.name;
    let mut found = |severity, profile: Option<&SchemaProfile>, location: String, message| {
        findings.push(Finding {
            severity,
            kind: ItemKind::Tool,
            name: name.to_owned(),
            profile: profile.map(|p| profile_label(p, profiles)),
            location,
            message,
        });
    };
    for (severity, message) in tool_name_problems(name) {
        found(severity, None, "name".into(), message);
    }
    if tool.description.is_none_or(|d| d.trim().is_empty()) {
        found(
            Severity::Warning,
            None,
            "description".into(),
            "no description: a model sees only the tool's name; add a doc comment or `#[tool(description = \"…\")]`".into(),
        );
    }
    for profile in tool
        .own_profile
        .map_or_else(|| profiles.iter().collect(), |p| vec![p])
    {
        let shaped_name = profile.tool_name(name);
        if shaped_name != name {
            found(
                Severity::Warning,
                Some(profile),
                "name".into(),
                format!("sent as `{shaped_name}`"),
            );
        }
        let schemas = [
            ("inputSchema", Some(tool.input), Target::Input),
            ("outputSchema", tool.output, Target::Output),
        ];
        for (label, schema, target) in schemas {
            let Some(schema) = schema else { continue };
            let (shaped, notes) = profile.shape(schema, target);
            for problem in profile.check(&shaped, target) {
                found(
                    Severity::Error,
                    Some(profile),
                    format!("{label}{}", problem.pointer),
                    problem.message,
                );
            }
            for note in notes {
                found(
                    Severity::Warning,
                    Some(profile),
                    format!("{label}{}", note.pointer),
                    note.message,
                );
            }
        }
    }
}

/// The lint's findings about a tool name: the errors of [`tool_name_errors`], and a warning
/// past the length some clients accept.
fn tool_name_problems(name: &str) -> Vec<(Severity, String)> {
    let mut problems: Vec<(Severity, String)> = tool_name_errors(name)
        .into_iter()
        .map(|message| (Severity::Error, message))
        .collect();
    let length = name.chars().count();
    if length > NAME_LENGTH_WARNING && length <= MAX_TOOL_NAME {
        problems.push((
            Severity::Warning,
            format!(
                "{length} characters: clients such as Cursor drop tool names longer than {NAME_LENGTH_WARNING} (Cursor gets a shortened name from the client table)"
            ),
        ));
    }
    problems
}

/// The longest tool name the specification allows.
const MAX_TOOL_NAME: usize = 128;

/// How `name` breaks the rule for tool names (MCP 2025-11-25, "Tool names": 1 to 128
/// characters of `A-Z a-z 0-9 _ - .`), one message per broken part; empty for a valid name.
/// The one rule both the lint and [`DynamicTool`](crate::DynamicTool), which refuses such a
/// name, apply.
pub(crate) fn tool_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let length = name.chars().count();
    if length == 0 || length > MAX_TOOL_NAME {
        errors.push(format!(
            "a tool name must be 1 to {MAX_TOOL_NAME} characters long; this one has {length}"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        errors.push(format!(
            "a tool name may contain only ASCII letters, digits, `_`, `-` and `.`, not {c:?}"
        ));
    }
    errors
}

/// A profile's name; custom profiles are numbered in the order the server names them.
fn profile_label(profile: &SchemaProfile, all: &[SchemaProfile]) -> String {
    match profile {
        SchemaProfile::Custom(_) => {
            let n = all
                .iter()
                .filter(|p| matches!(p, SchemaProfile::Custom(_)))
                .position(|p| p == profile)
                .map_or(0, |i| i + 1);
            format!("custom-{n}")
        }
        other => other.name().to_owned(),
    }
}

/// The `tools/list` result (every enabled tool, on one page) as a session in `profile`
/// receives it at `version`.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::{ProtocolVersion, schema::SchemaProfile};
///
/// /// Search the notes.
/// #[tool]
/// fn search(query: String, limit: Option<u32>) -> String { format!("{query} {limit:?}") }
///
/// # fn main() {
/// let server = mcp_runtime::server!().auto_register(false).tools(mcp_runtime::tools![search]);
/// let server = server.build().unwrap();
/// let list = mcp_runtime::testing::tools_list(
///     &server,
///     ProtocolVersion::LATEST_HANDSHAKE,
///     &SchemaProfile::OpenAiStrict,
/// );
/// let schema = &list["tools"][0]["inputSchema"];
/// assert_eq!(schema["required"], mcp_runtime::serde_json::json!(["query", "limit"]));
/// assert_eq!(schema["additionalProperties"], false);
/// # }
/// ```
pub fn tools_list(server: &Server, version: ProtocolVersion, profile: &SchemaProfile) -> Value {
    let catalogue = server.catalogue();
    let tools: Vec<Value> = catalogue
        .tools
        .iter()
        .map(|tool| {
            let wire = tool.build_wire(tool.profile(profile));
            serde_json::from_str(wire[version.index()].get()).unwrap_or_default()
        })
        .collect();
    json!({ "tools": tools })
}

/// The `tools/list` result as the client that sends `client_name` at `initialize` receives
/// it from this server (see [`Server::schema_profile_for_client`]).
pub fn tools_list_for_client(
    server: &Server,
    version: ProtocolVersion,
    client_name: &str,
) -> Value {
    tools_list(
        server,
        version,
        server.schema_profile_for_client(client_name),
    )
}

/// Compares `tools/list` under each of the server's profiles, at the newest revision, with
/// the JSON file at `path` (relative to the crate being tested), keyed by profile name.
/// With the environment variable `UPDATE_SNAPSHOTS` set, writes the file instead.
#[track_caller]
pub fn assert_tools_list_snapshot(server: &Server, path: impl AsRef<Path>) {
    let profiles = server.schema_profiles().all();
    let lists: Map<String, Value> = profiles
        .iter()
        .map(|p| {
            (
                profile_label(p, profiles),
                tools_list(server, ProtocolVersion::LATEST_HANDSHAKE, p),
            )
        })
        .collect();
    assert_snapshot(path, &Value::Object(lists));
}

/// Compares a JSON value, pretty-printed, with the file at `path`; with the environment
/// variable `UPDATE_SNAPSHOTS` set, writes the file instead.
#[track_caller]
pub fn assert_snapshot(path: impl AsRef<Path>, value: &Value) {
    let path = path.as_ref();
    let actual = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(path, &actual) {
            panic!("{}: {e}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} differs from the snapshot, first at line {}:\n  snapshot: {}\n  now:      {}\nrun with UPDATE_SNAPSHOTS=1 to accept the change",
            path.display(),
            line + 1,
            expected.lines().nth(line).unwrap_or("(end of file)"),
            actual.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Driving the dispatch directly, for fuzzers and property tests.

mod fuzz;
pub use fuzz::Dispatcher;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_past_60_characters_are_a_warning_and_past_128_an_error() {
        assert!(tool_name_problems("get_weather").is_empty());
        let long = tool_name_problems(&"x".repeat(61));
        assert_eq!(long.len(), 1);
        assert_eq!(long[0].0, Severity::Warning);
        let too_long = tool_name_problems(&"x".repeat(129));
        assert_eq!(too_long[0].0, Severity::Error);
        assert_eq!(tool_name_problems("has space")[0].0, Severity::Error);
        assert_eq!(tool_name_problems("")[0].0, Severity::Error);
    }
}
