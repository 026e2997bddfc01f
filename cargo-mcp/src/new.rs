//! `cargo mcp new NAME [--http]`: a server crate with two tools, a snapshot test of what a
//! client sees of them, and a README of the next commands.
//!
//! The tools are in `template/tools.rs`, which this crate compiles too: the snapshot the new
//! crate's test compares against is made here, by the same mcp-runtime, from the same code.

use std::path::{Path, PathBuf};

use clap::ArgMatches;

use crate::{Failure, Outcome};

const TOOLS: &str = include_str!("../template/tools.rs");
const MAIN_STDIO: &str = include_str!("../template/main_stdio.rs");
const MAIN_HTTP: &str = include_str!("../template/main_http.rs");
const TESTS: &str = include_str!("../template/tests.rs");

/// The template's tools, built into this binary to write the new crate's snapshot.
mod template {
    use mcp_runtime::prelude::*;

    include!("../template/tools.rs");

    /// `tools/list` as the new crate's test receives it through an in-memory client.
    pub(super) async fn tools_list() -> Result<Value, String> {
        let server = mcp_runtime::Server::builder("template", "0.1.0")
            .auto_register(false)
            .tools(mcp_runtime::tools![add, greet])
            .build()
            .map_err(|e| e.to_string())?;
        let client = server.connect_memory();
        client.initialize().await.map_err(|e| e.to_string())?;
        let tools = client.list_tools().await.map_err(|e| e.to_string())?;
        Ok(Value::Array(tools))
    }

    use mcp_runtime::serde_json::Value;
}

/// `cargo mcp new`.
pub(crate) async fn run(m: &ArgMatches) -> Outcome {
    let name = m.get_one::<String>("name").expect("required");
    check_name(name)?;
    let http = m.get_flag("http");
    let dir = m
        .get_one::<String>("path")
        .map_or_else(|| PathBuf::from(name), PathBuf::from);
    if dir.exists() && dir.read_dir().map_or(true, |mut d| d.next().is_some()) {
        return Err(Failure::Failed(format!(
            "{} already exists and is not empty: pick another name, or --path DIR",
            dir.display()
        )));
    }
    let dependency = runtime_dependency(m, http)?;
    let snapshot = template::tools_list()
        .await
        .map_err(|e| Failure::Failed(format!("cannot list the template's tools: {e}")))?;

    let main = format!(
        "//! {name}: an MCP server. `cargo run` serves it on standard input and output{}; \
         `cargo mcp dev --inspector` runs it under the MCP Inspector and restarts it when you \
         edit it.\n\nuse mcp_runtime::prelude::*;\n\n{TOOLS}\n{}\n{TESTS}",
        if http {
            ", `cargo run -- --http 127.0.0.1:8000` over Streamable HTTP"
        } else {
            ""
        },
        if http { MAIN_HTTP } else { MAIN_STDIO },
    );
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{dependency}\n"
    );
    let run_http = if http {
        "cargo run -- --http 127.0.0.1:8000   # Streamable HTTP at http://127.0.0.1:8000/mcp\n"
    } else {
        ""
    };
    let readme = format!(
        "# {name}\n\nAn MCP server written with mcp-runtime.\n\n```sh\n\
         cargo test                           # the tools as a client sees them (tests/snapshots)\n\
         cargo run                            # serve MCP on standard input and output\n{run_http}\
         cargo mcp dev --inspector            # run it under the MCP Inspector; restart on change\n\
         cargo mcp call . add a=2 b=3         # call a tool from the shell\n\
         cargo mcp lint                       # check the schemas against every known client\n\
         cargo mcp install claude-desktop     # add it to Claude Desktop (or claude-code, cursor, vscode, gemini-cli)\n\
         ```\n\nAfter you change a tool, `UPDATE_SNAPSHOTS=1 cargo test` accepts the new \
         `tests/snapshots/tools_list.json`: review its diff.\n"
    );
    let snapshot = serde_json::to_string_pretty(&snapshot).unwrap_or_default() + "\n";
    let files: [(&str, &str); 5] = [
        ("Cargo.toml", &manifest),
        ("src/main.rs", &main),
        ("tests/snapshots/tools_list.json", &snapshot),
        ("README.md", &readme),
        (".gitignore", "/target\n"),
    ];
    for (file, content) in files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Failure::Failed(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, content)
            .map_err(|e| Failure::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    eprintln!(
        "cargo mcp: created {} ({} server)\n\nNext:\n  cd {}\n  cargo test\n  cargo mcp dev --inspector\n  cargo mcp install claude-desktop",
        dir.display(),
        if http {
            "a stdio and Streamable HTTP"
        } else {
            "a stdio"
        },
        dir.display()
    );
    Ok(())
}

/// A package name Cargo accepts.
fn check_name(name: &str) -> Outcome {
    let valid = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(Failure::Failed(format!(
            "`{name}` is not a package name: use ASCII letters, digits, `-` and `_`, starting with a letter"
        )));
    }
    let lower = name.to_ascii_lowercase();
    // Cargo refuses a binary named after a folder of its own in `target/`.
    if ["build", "deps", "examples", "incremental"].contains(&lower.as_str()) {
        return Err(Failure::Failed(format!(
            "`{name}` is not a package name Cargo builds: it is the name of a folder Cargo keeps in target/; pick another"
        )));
    }
    // Windows cannot create a file or folder of these names, whatever the extension, so the
    // crate could not be checked out or built there.
    let device = ["con", "prn", "aux", "nul"].contains(&lower.as_str())
        || ["com", "lpt"].iter().any(|prefix| {
            lower
                .strip_prefix(prefix)
                .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
        });
    if device {
        return Err(Failure::Failed(format!(
            "`{name}` is not a package name Cargo accepts: it names a device on Windows; pick another"
        )));
    }
    Ok(())
}

/// The `mcp-runtime = …` line: `--runtime-git`, `--runtime-path`, or the checkout this
/// command was built from.
fn runtime_dependency(m: &ArgMatches, http: bool) -> Result<String, Failure> {
    let features = if http { ", features = [\"http\"]" } else { "" };
    if let Some(url) = m.get_one::<String>("runtime-git") {
        return Ok(format!(
            "mcp-runtime = {{ git = \"{}\"{features} }}",
            escape(url)
        ));
    }
    let path = match m.get_one::<String>("runtime-path") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-runtime"),
    };
    if !path.join("Cargo.toml").is_file() {
        return Err(Failure::Failed(format!(
            "no mcp-runtime crate at {}: pass --runtime-path DIR (the mcp-runtime folder of a checkout) or --runtime-git URL",
            path.display()
        )));
    }
    let path = path.canonicalize().unwrap_or(path);
    Ok(format!(
        "mcp-runtime = {{ path = \"{}\"{features} }}",
        escape(&path.to_string_lossy())
    ))
}

/// A TOML basic string's content. TOML forbids control characters in a basic string; a
/// line break left as it is would end the string and let the rest be read as TOML.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            c if c.is_control() && (c as u32) < 0x80 => {
                escaped.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => escaped.push(c),
        }
    }
    escaped
}
