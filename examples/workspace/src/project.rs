//! The `project/` namespace: the server's own tools, behind a strict allowlist.
//!
//! `project/executeTool` is the most powerful method of the design's namespaces, so it runs
//! only the reviewed tools of [`ALLOWLIST`], each a Rust function of this file, and never a
//! shell, a program or anything named by the request. Each tool is also an ordinary MCP tool
//! (`tools/list`, `tools/call`): one `#[tool(args)]` function whose argument struct is its
//! schema, and one function beneath it that does the work, so both ways in give the same
//! answer.
//!
//! | method | params | result |
//! |---|---|---|
//! | `project/listTools` | none | `[{name, description, parameters}]` |
//! | `project/executeTool` | `{name, parameters}` | `{stdout?, stderr?, result?}` |

use std::io::Read;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::protocol::code::INVALID_PARAMS;
use mcp_runtime::serde::de::{DeserializeOwned, IgnoredAny};
use mcp_runtime::serde::{Deserialize, Serialize};
use mcp_runtime::serde_json::{self, Value};
use mcp_runtime::{FencedEntry, FileKind, ServerBuilder, Tool, ToolDescriptor, schemars};

use crate::fs::walk;
use crate::{Workspace, blocking, fence_error, io_error, tool_error, workspace};

/// The largest file `countLines` counts (64 MiB).
const MAX_COUNT_BYTES: u64 = 64 * 1024 * 1024;

/// The largest file `search` looks in (1 MiB); bigger ones are skipped.
const MAX_SEARCH_FILE_BYTES: u64 = 1024 * 1024;

/// The most matches `search` returns.
const MAX_MATCHES: usize = 100;

/// The most characters of a matching line `search` returns.
const MAX_LINE_CHARS: usize = 200;

/// One reviewed tool that `project/executeTool` may run.
struct Allowed {
    /// Its name in the `project/` namespace.
    name: &'static str,
    /// The MCP tool it also is: its description and input schema are what
    /// `project/listTools` lists.
    tool: &'static ToolDescriptor,
    /// Reads the parameters into the tool's own argument struct and does the tool's work.
    run: fn(&Workspace, Value) -> Result<Value, RpcError>,
}

/// Every tool `project/executeTool` runs. A tool not listed here is not run, whatever the
/// request says: adding one is a code change, reviewed like any other.
const ALLOWLIST: &[Allowed] = &[
    Allowed {
        name: "project/countLines",
        tool: <count_lines as Tool>::DESCRIPTOR,
        run: |workspace, parameters| run(workspace, parameters, lines_in),
    },
    Allowed {
        name: "project/search",
        tool: <search as Tool>::DESCRIPTOR,
        run: |workspace, parameters| run(workspace, parameters, search_in),
    },
];

/// Reads `parameters` into the tool's argument struct (the same struct its MCP tool reads its
/// arguments into, so the same schema) and does the work.
fn run<A: DeserializeOwned, R: Serialize>(
    workspace: &Workspace,
    parameters: Value,
    work: fn(&Workspace, A) -> Result<R, RpcError>,
) -> Result<Value, RpcError> {
    let arguments = serde_json::from_value(parameters).map_err(|e| {
        RpcError::invalid_params(format!(
            "invalid parameters: {e}; project/listTools gives the tool's schema"
        ))
    })?;
    let result = work(workspace, arguments)?;
    serde_json::to_value(result)
        .map_err(|e| RpcError::internal(format!("the result does not serialise: {e}")))
}

/// Adds the `project/` methods.
pub fn methods(builder: ServerBuilder) -> ServerBuilder {
    builder
        .method("project/listTools", list_tools)
        .method("project/executeTool", execute_tool)
}

// ---------------------------------------------------------------------------------------
// The tools

/// The arguments of `countLines`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
#[schemars(crate = "mcp_runtime::schemars")]
pub struct CountLines {
    /// The file, relative to the workspace root, with `/` between folders.
    path: String,
}

/// How many lines a file has.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
pub struct LineCount {
    /// The file, as it was given.
    path: String,
    /// Its lines: every newline ends one, and a last line without a newline counts too.
    lines: u64,
}

/// Count the lines of a file in the workspace.
#[tool(name = "countLines", args, annotations(read_only, idempotent))]
async fn count_lines(
    workspace: State<Workspace>,
    arguments: CountLines,
) -> Result<Json<LineCount>, ToolError> {
    blocking(move || lines_in(&workspace, arguments))
        .await
        .map(Json)
        .map_err(tool_error)
}

/// The work of `countLines`, read through the fence's handle in blocks.
fn lines_in(workspace: &Workspace, CountLines { path }: CountLines) -> Result<LineCount, RpcError> {
    let file = workspace.locate(&path)?;
    let opened = file.open_read().map_err(fence_error)?;
    let size = opened.metadata().map_err(|e| io_error(&file, &e))?.len();
    if size > MAX_COUNT_BYTES {
        return Err(RpcError::invalid_params(format!(
            "{file} has {size} bytes; countLines counts files of at most {MAX_COUNT_BYTES}"
        )));
    }
    let mut reader = opened.take(MAX_COUNT_BYTES);
    let mut block = vec![0; 64 * 1024];
    let (mut lines, mut last) = (0, b'\n');
    loop {
        let read = reader.read(&mut block).map_err(|e| io_error(&file, &e))?;
        let Some(&end) = block[..read].last() else {
            break;
        };
        lines += block[..read].iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(LineCount { path, lines })
}

/// The arguments of `search`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
#[schemars(crate = "mcp_runtime::schemars")]
pub struct Search {
    /// The word to find, as a whole word and with its case: `parse` finds `parse(x)` and
    /// `a.parse()`, not `parser` or `Parse`.
    word: String,
    /// The folder to search, relative to the workspace root; the whole workspace when left
    /// out.
    #[serde(default)]
    path: Option<String>,
}

/// Where a word was found.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
pub struct Match {
    /// The file, relative to the workspace root (whatever folder was searched).
    path: String,
    /// The line's number, from 1.
    line: u64,
    /// The line, without its newline, cut after 200 characters.
    text: String,
}

/// What `search` found.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
pub struct Found {
    /// The lines that hold the word, by file and line.
    matches: Vec<Match>,
    /// Whether more lines held it than the 100 returned.
    truncated: bool,
    /// How many files were not looked in: over 1 MiB, not UTF-8 text, or unreadable.
    skipped: u64,
}

/// Find a word in the text files of the workspace (or of one of its folders).
#[tool(args, annotations(read_only, idempotent))]
async fn search(workspace: State<Workspace>, arguments: Search) -> Result<Json<Found>, ToolError> {
    blocking(move || search_in(&workspace, arguments))
        .await
        .map(Json)
        .map_err(tool_error)
}

/// The work of `search`: a walk through the fence's handles, never following a symbolic link,
/// each file opened beneath the folder it was listed in.
fn search_in(workspace: &Workspace, Search { word, path }: Search) -> Result<Found, RpcError> {
    if word.is_empty() || word.chars().any(char::is_whitespace) || word.chars().count() > 100 {
        return Err(RpcError::invalid_params(format!(
            "`word` must be one word of 1 to 100 characters, without spaces; got {word:?}"
        )));
    }
    let dir = workspace
        .locate(path.as_deref().unwrap_or("."))?
        .open_dir()
        .map_err(fence_error)?;
    let mut found = Found {
        matches: Vec::new(),
        truncated: false,
        skipped: 0,
    };
    walk(dir, true, &mut |folder, entry, _| {
        if found.truncated || entry.info().kind() != FileKind::File {
            return Ok(());
        }
        let Some(text) = read_text(folder, entry) else {
            found.skipped += 1;
            return Ok(());
        };
        let shown = entry
            .relative()
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        for (number, line) in text.lines().enumerate() {
            if !holds_word(line, &word) {
                continue;
            }
            if found.matches.len() == MAX_MATCHES {
                found.truncated = true;
                break;
            }
            found.matches.push(Match {
                path: shown.clone(),
                line: number as u64 + 1,
                text: line.chars().take(MAX_LINE_CHARS).collect(),
            });
        }
        Ok(())
    })?;
    Ok(found)
}

/// A file's text, opened beneath its folder; `None` for a file too big, unreadable, or not
/// UTF-8 text (which a NUL byte gives away too).
fn read_text(folder: &FencedDir, entry: &FencedEntry) -> Option<String> {
    let opened = folder.open_read(entry.name()).ok()?;
    if opened.metadata().ok()?.len() > MAX_SEARCH_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    opened
        .take(MAX_SEARCH_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_SEARCH_FILE_BYTES || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Whether `line` holds `word` as a whole word: not preceded or followed by a letter, a digit
/// or `_` where the word itself begins or ends with one.
fn holds_word(line: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let starts_word = word.chars().next().is_some_and(is_word);
    let ends_word = word.chars().next_back().is_some_and(is_word);
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        !(starts_word && before.is_some_and(is_word) || ends_word && after.is_some_and(is_word))
    })
}

// ---------------------------------------------------------------------------------------
// The methods

/// The parameters of `project/listTools`: none (`null`, `{}` or left out).
#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
pub struct ListTools {
    #[serde(rename = "_meta", default)]
    _meta: Option<IgnoredAny>,
}

/// A tool as `project/listTools` lists it.
#[derive(Serialize)]
#[serde(crate = "mcp_runtime::serde")]
pub struct ListedTool {
    /// Its name in the namespace (`project/countLines`).
    name: &'static str,
    /// What it does: its MCP tool's description.
    description: &'static str,
    /// The JSON Schema its parameters must match: its MCP tool's input schema.
    parameters: Value,
}

/// `project/listTools`: the allowlist.
async fn list_tools(
    _ctx: Context,
    _params: Option<ListTools>,
) -> Result<Vec<ListedTool>, RpcError> {
    Ok(ALLOWLIST
        .iter()
        .map(|allowed| ListedTool {
            name: allowed.name,
            description: allowed.tool.description.unwrap_or_default(),
            parameters: (allowed.tool.input_schema)(),
        })
        .collect())
}

/// The parameters of `project/executeTool`.
#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
pub struct ExecuteTool {
    /// The tool: its name in the namespace (`project/countLines`), or its MCP name
    /// (`countLines`).
    name: String,
    /// Its parameters, an object matching its schema; `{}` when left out.
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(rename = "_meta", default)]
    _meta: Option<IgnoredAny>,
}

/// What a tool run gave.
#[derive(Serialize, Default)]
#[serde(crate = "mcp_runtime::serde")]
pub struct ToolOutput {
    /// What the tool printed: never set, as these tools print nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    stdout: Option<String>,
    /// Why the tool failed, when it ran and failed (a file it could not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr: Option<String>,
    /// Its answer, when it succeeded: what `tools/call` gives as `structuredContent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
}

/// What a JSON value is, in words.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `project/executeTool`: runs one tool of the allowlist.
///
/// A request that cannot be run is refused with `-32602`, naming the problem: a tool not on
/// the allowlist, parameters that do not match its schema, a path the fence refuses, a file
/// that is not there. A tool that ran and failed (the file system's own error) answers
/// `stderr`; one that succeeded answers `result`.
async fn execute_tool(ctx: Context, params: ExecuteTool) -> Result<ToolOutput, RpcError> {
    let Some(allowed) = ALLOWLIST
        .iter()
        .find(|allowed| allowed.name == params.name || allowed.tool.name == params.name)
    else {
        let names: Vec<_> = ALLOWLIST.iter().map(|allowed| allowed.name).collect();
        return Err(RpcError::invalid_params(format!(
            "unknown tool `{}`: project/executeTool runs only the tools project/listTools \
             lists ({})",
            params.name,
            names.join(", ")
        )));
    };
    let workspace = workspace(&ctx)?;
    // An object of named parameters, as the schema says: serde would also read a struct from
    // an array of its fields in order, which no schema allows.
    let parameters = match params.parameters {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(parameters @ Value::Object(_)) => parameters,
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "{}: invalid parameters: `parameters` must be an object of named parameters, \
                 not {}; project/listTools gives the tool's schema",
                allowed.name,
                kind_of(&other)
            )));
        }
    };
    match blocking(move || (allowed.run)(&workspace, parameters)).await {
        Ok(result) => Ok(ToolOutput {
            result: Some(result),
            ..ToolOutput::default()
        }),
        Err(refused) if refused.code == INVALID_PARAMS => Err(RpcError {
            message: format!("{}: {}", allowed.name, refused.message),
            ..refused
        }),
        Err(failed) => Ok(ToolOutput {
            stderr: Some(failed.message),
            ..ToolOutput::default()
        }),
    }
}
