//! What a server costs to build, ours against rmcp, each as its own crate generated under the
//! target directory:
//!
//! - **stdio**: a clean release build of the stdio server with `echo` and `add`, in an empty
//!   target directory of its own, so that every dependency is compiled and nothing else is;
//! - **everything**: the same with every transport each framework has (ours with `http` and
//!   `legacy-sse`, rmcp with `server`, `transport-io` and `transport-streamable-http-server`
//!   and the axum that serves it), still serving stdio by default and HTTP with `--http`;
//! - **incremental**: a crate of 50 tools (ours: 50 `#[tool]` functions; rmcp: 50 `#[tool]`
//!   methods in one `#[tool_router]` impl; every fifth tool also takes a derived struct of its
//!   own, the edited one among them), built once in the dev profile (its dependencies
//!   are kept between runs), then the body of one tool is edited and the rebuild timed: the
//!   edit-compile loop of someone writing tools.
//!
//! The stdio and everything crates compile the benchmark servers' own sources
//! (`bench_server.rs`, `rmcp_server.rs`), which is why those files use nothing but their
//! framework, Tokio and (rmcp over HTTP) axum. Every crate reuses the workspace's `Cargo.lock`,
//! so the builds compile the versions the benchmarks run, and builds `--offline`, so no
//! download is timed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::Result;

/// A framework whose build is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    Ours,
    Rmcp,
}

impl Framework {
    pub const ALL: [Framework; 2] = [Framework::Ours, Framework::Rmcp];

    pub fn name(self) -> &'static str {
        match self {
            Framework::Ours => "ours",
            Framework::Rmcp => "rmcp",
        }
    }
}

/// What is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildKind {
    /// A clean release build of the stdio echo/add server.
    Stdio,
    /// A clean release build of the same server with every transport enabled.
    Everything,
    /// A dev-profile rebuild of a 50-tool server after one tool's body changed.
    Incremental,
}

impl BuildKind {
    pub const ALL: [BuildKind; 3] = [
        BuildKind::Stdio,
        BuildKind::Everything,
        BuildKind::Incremental,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BuildKind::Stdio => "stdio",
            BuildKind::Everything => "everything",
            BuildKind::Incremental => "incremental",
        }
    }

    pub fn from_name(name: &str) -> Option<BuildKind> {
        BuildKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// How the report describes it.
    pub fn label(self) -> &'static str {
        match self {
            BuildKind::Stdio => "clean release build, stdio echo/add server",
            BuildKind::Everything => "clean release build, every transport enabled",
            BuildKind::Incremental => "dev rebuild after editing 1 of 50 tools",
        }
    }

    fn binary(self, framework: Framework) -> &'static str {
        match (self, framework) {
            (BuildKind::Incremental, Framework::Ours) => "fifty-tools-ours",
            (BuildKind::Incremental, Framework::Rmcp) => "fifty-tools-rmcp",
            (_, Framework::Ours) => "bench-server",
            (_, Framework::Rmcp) => "rmcp-server",
        }
    }
}

/// The number of tools of the incremental crate, and the one whose body is edited.
const TOOLS: usize = 50;
const EDITED_TOOL: usize = 25;

/// One measured build.
pub struct BuildCost {
    pub framework: Framework,
    pub kind: BuildKind,
    pub seconds: f64,
    pub binary_bytes: u64,
}

/// Paths the generated crates need.
struct Sources {
    bench_dir: PathBuf,
    workspace_dir: PathBuf,
}

impl Sources {
    fn of_this_workspace() -> Result<Sources> {
        let bench_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        Ok(Sources {
            bench_dir: bench_dir.to_path_buf(),
            workspace_dir: bench_dir
                .parent()
                .ok_or("the benchmark crate has no parent directory")?
                .to_path_buf(),
        })
    }

    /// The `[package]`, `[[bin]]`, `[dependencies]` and `[features]` of one generated crate.
    /// The dependency lines are those a user of each framework writes (rmcp's stdio transport
    /// is its `transport-io` feature, its HTTP server `transport-streamable-http-server`;
    /// `#[tokio::main]` needs Tokio's multi-threaded runtime and macros, serving HTTP needs
    /// its `net` and, for a graceful stop, `signal`; axum with only what serving needs).
    fn manifest(&self, framework: Framework, kind: BuildKind) -> String {
        self.manifest_named(framework, kind, kind.binary(framework))
    }

    fn manifest_named(&self, framework: Framework, kind: BuildKind, name: &str) -> String {
        let runtime = self.workspace_dir.join("mcp-runtime");
        let (source, dependencies, features) = match (framework, kind) {
            (Framework::Ours, BuildKind::Stdio) => (
                self.bench_dir.join("src/bin/bench_server.rs"),
                format!("mcp-runtime = {{ path = {runtime:?} }}\n"),
                "",
            ),
            (Framework::Ours, BuildKind::Everything) => (
                self.bench_dir.join("src/bin/bench_server.rs"),
                format!(
                    "mcp-runtime = {{ path = {runtime:?}, features = [\"http\", \"legacy-sse\"] }}\n"
                ),
                "",
            ),
            (Framework::Ours, BuildKind::Incremental) => (
                PathBuf::from("src/main.rs"),
                format!("mcp-runtime = {{ path = {runtime:?} }}\n"),
                "",
            ),
            (Framework::Rmcp, BuildKind::Stdio) => (
                self.bench_dir.join("src/bin/rmcp_server.rs"),
                concat!(
                    "rmcp = { version = \"3.11\", features = [\"transport-io\"] }\n",
                    "tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }\n",
                )
                .to_owned(),
                // `rmcp_server.rs` serves HTTP only with its `http` feature.
                "[features]\nhttp = []\n",
            ),
            (Framework::Rmcp, BuildKind::Everything) => (
                self.bench_dir.join("src/bin/rmcp_server.rs"),
                concat!(
                    "rmcp = { version = \"3.11\", features = [\"server\", \"transport-io\", ",
                    "\"transport-streamable-http-server\"] }\n",
                    "tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\", ",
                    "\"net\", \"signal\"] }\n",
                    "axum = { version = \"0.8\", default-features = false, features = ",
                    "[\"http1\", \"tokio\"] }\n",
                )
                .to_owned(),
                "[features]\ndefault = [\"http\"]\nhttp = []\n",
            ),
            (Framework::Rmcp, BuildKind::Incremental) => (
                PathBuf::from("src/main.rs"),
                concat!(
                    "rmcp = { version = \"3.11\", features = [\"transport-io\"] }\n",
                    "tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }\n",
                )
                .to_owned(),
                "",
            ),
        };
        format!(
            concat!(
                "# Generated by mcp-load build-cost; rewritten on every run.\n",
                "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n",
                "[[bin]]\nname = \"{name}\"\npath = {source:?}\n\n",
                "[dependencies]\n{dependencies}\n{features}\n",
                "# Not part of the workspace it sits in.\n[workspace]\n",
            ),
            name = name,
            source = source,
            dependencies = dependencies,
            features = features,
        )
    }
}

/// Builds what `kinds` name for each framework, `rounds` times, alternating frameworks.
pub fn measure(
    cargo: &Path,
    work_dir: &Path,
    kinds: &[BuildKind],
    rounds: usize,
    progress: &mut dyn FnMut(&BuildCost),
) -> Result<Vec<BuildCost>> {
    let sources = Sources::of_this_workspace()?;
    let mut costs = Vec::new();
    for &kind in kinds {
        if kind == BuildKind::Incremental {
            // The untimed first builds, which compile the dependencies.
            for framework in Framework::ALL {
                let dir = work_dir.join(format!("{}-{}", kind.name(), framework.name()));
                prepare_incremental(cargo, &sources, framework, &dir)?;
            }
        }
        for round in 0..rounds {
            for framework in Framework::ALL {
                let dir = work_dir.join(format!("{}-{}", kind.name(), framework.name()));
                let cost = match kind {
                    BuildKind::Incremental => {
                        rebuild_after_edit(cargo, framework, &dir, round + 1)?
                    }
                    _ => clean_build(cargo, &sources, framework, kind, &dir)?,
                };
                progress(&cost);
                costs.push(cost);
            }
        }
    }
    Ok(costs)
}

/// The release binary of a stdio server with `tools` tools for `framework` (written the way
/// the incremental crate's are), built under `work_dir` unless it is there already.
pub fn catalogue_server(
    cargo: &Path,
    work_dir: &Path,
    framework: Framework,
    tools: usize,
) -> Result<PathBuf> {
    let sources = Sources::of_this_workspace()?;
    let name = format!("catalogue-{tools}-{}", framework.name());
    let dir = work_dir.join(&name);
    std::fs::create_dir_all(dir.join("src"))?;
    let manifest = sources.manifest_named(framework, BuildKind::Incremental, &name);
    write_if_changed(&dir.join("Cargo.toml"), &manifest)?;
    write_if_changed(&dir.join("src/main.rs"), &tools_source(framework, tools, 0))?;
    if !dir.join("Cargo.lock").exists() {
        std::fs::copy(
            sources.workspace_dir.join("Cargo.lock"),
            dir.join("Cargo.lock"),
        )?;
    }
    cargo_build(cargo, &dir, true)?;
    Ok(dir
        .join("target/release")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// The manifest of the stdio echo/add server crate that a clean stdio build of `framework`
/// compiles, its binary named `name` (for `bench/build-floor`, which builds the same crates).
pub fn stdio_manifest(framework: Framework, name: &str) -> Result<String> {
    Ok(Sources::of_this_workspace()?.manifest_named(framework, BuildKind::Stdio, name))
}

/// Writes a file unless it holds that text already (so that cargo sees nothing to rebuild).
fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

fn write_crate(sources: &Sources, framework: Framework, kind: BuildKind, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let manifest = sources.manifest(framework, kind);
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    std::fs::copy(
        sources.workspace_dir.join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )?;
    Ok(())
}

/// One `cargo build` of a generated crate: how long it took and the crates it compiled.
/// Its output (warnings of path dependencies included) is shown only when it fails.
struct Built {
    seconds: f64,
    compiled: Vec<String>,
}

fn cargo_build(cargo: &Path, dir: &Path, release: bool) -> Result<Built> {
    let mut command = Command::new(cargo);
    command.args(["build", "--offline", "--color", "never"]);
    if release {
        command.arg("--release");
    }
    let started = Instant::now();
    let output = command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_INCREMENTAL")
        .output()?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!(
            "building {} failed ({}):\n{stderr}",
            dir.display(),
            output.status
        )
        .into());
    }
    let compiled = stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("Compiling "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    Ok(Built { seconds, compiled })
}

fn binary_path(dir: &Path, profile: &str, framework: Framework, kind: BuildKind) -> PathBuf {
    dir.join("target").join(profile).join(format!(
        "{}{}",
        kind.binary(framework),
        std::env::consts::EXE_SUFFIX
    ))
}

fn clean_build(
    cargo: &Path,
    sources: &Sources,
    framework: Framework,
    kind: BuildKind,
    dir: &Path,
) -> Result<BuildCost> {
    let target_dir = dir.join("target");
    if target_dir.exists() {
        std::fs::remove_dir_all(&target_dir)?;
    }
    write_crate(sources, framework, kind, dir)?;
    let seconds = cargo_build(cargo, dir, true)
        .map_err(|e| format!("the {} {} build: {e}", framework.name(), kind.name()))?
        .seconds;
    let binary = binary_path(dir, "release", framework, kind);
    let binary_bytes = std::fs::metadata(&binary)
        .map_err(|e| format!("{}: {e}", binary.display()))?
        .len();
    Ok(BuildCost {
        framework,
        kind,
        seconds,
        binary_bytes,
    })
}

/// Writes the 50-tool crate (edit 0) and builds it, untimed: its dependencies stay built in
/// its target directory from one run to the next.
fn prepare_incremental(
    cargo: &Path,
    sources: &Sources,
    framework: Framework,
    dir: &Path,
) -> Result<()> {
    write_crate(sources, framework, BuildKind::Incremental, dir)?;
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(dir.join("src/main.rs"), fifty_tools(framework, 0))?;
    cargo_build(cargo, dir, false).map_err(|e| {
        format!(
            "the first build of the {} 50-tool crate: {e}",
            framework.name()
        )
    })?;
    Ok(())
}

/// Changes the body of one tool (and nothing else) and times the rebuild, which must
/// compile that crate alone: when a dependency was rebuilt too (a path dependency's source
/// changed since the last build, as happens while someone works on mcp-runtime), the
/// rebuild is not the one meant, and the edit is timed again.
fn rebuild_after_edit(
    cargo: &Path,
    framework: Framework,
    dir: &Path,
    edit: usize,
) -> Result<BuildCost> {
    const TRIES: usize = 3;
    let kind = BuildKind::Incremental;
    let binary = binary_path(dir, "debug", framework, kind);
    let name = kind.binary(framework);
    for attempt in 0..TRIES {
        // Up to date before the edit, so that the timed build has that one change to make.
        cargo_build(cargo, dir, false)
            .map_err(|e| format!("the {} build before the edit: {e}", framework.name()))?;
        let before = modified(&binary)?;
        let source = fifty_tools(framework, edit * TRIES + attempt);
        std::fs::write(dir.join("src/main.rs"), source)?;
        let built = cargo_build(cargo, dir, false)
            .map_err(|e| format!("the {} rebuild: {e}", framework.name()))?;
        if modified(&binary)? == before {
            return Err(format!(
                "the {} rebuild left {} as it was",
                framework.name(),
                binary.display()
            )
            .into());
        }
        let others: Vec<&String> = built.compiled.iter().filter(|c| *c != name).collect();
        if others.is_empty() {
            return Ok(BuildCost {
                framework,
                kind,
                seconds: built.seconds,
                binary_bytes: std::fs::metadata(&binary)?.len(),
            });
        }
        eprintln!(
            "mcp-load: the {} rebuild also compiled {}; timing it again",
            framework.name(),
            others
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Err(format!(
        "the {} rebuild compiled other crates {TRIES} times: are their sources changing?",
        framework.name()
    )
    .into())
}

fn modified(path: &Path) -> Result<SystemTime> {
    Ok(std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", path.display()))?)
}

/// The source of a stdio server with 50 tools, each with two arguments of its own (every
/// fifth a struct too); `edit` changes the body of tool 25 alone.
fn fifty_tools(framework: Framework, edit: usize) -> String {
    tools_source(framework, TOOLS, edit)
}

/// Whether tool `i` also takes a struct of its own (every fifth, the edited one among
/// them), as real tools do: its derives are compiled in the user's crate with either
/// framework.
fn takes_range(i: usize) -> bool {
    i.is_multiple_of(5)
}

/// The struct tool `i` takes, derived through `krate`'s re-exports of serde and schemars.
fn range_struct(i: usize, krate: &str) -> String {
    format!(
        concat!(
            "\n/// The bounds of tool {i}'s answer.\n",
            "#[derive({krate}::serde::Deserialize, {krate}::schemars::JsonSchema)]\n",
            "#[serde(crate = \"{krate}::serde\")]\n",
            "#[schemars(crate = \"{krate}::schemars\")]\n",
            "struct Range{i:02} {{\n",
            "    /// The least.\n",
            "    low: i64,\n",
            "    /// The most.\n",
            "    high: i64,\n",
            "}}\n",
        ),
        i = i,
        krate = krate,
    )
}

/// The expression a tool answers with: `n` offset by `i`, within the range when it takes one.
fn offset_value(i: usize, n: &str, range: &str) -> String {
    if takes_range(i) {
        format!("{n}.wrapping_add({i}).clamp({range}.low, {range}.high.max({range}.low))")
    } else {
        format!("{n}.wrapping_add({i})")
    }
}

/// The source of a stdio server with `tools` tools, each with two arguments of its own;
/// `edit` changes the body of tool 25 alone, and its length, as a real edit does: an edit
/// that keeps every byte where it was lets rustc reuse nearly all it did before (one that
/// moves the rest of the tool's body costs the 50-tool crate about three times as much).
fn tools_source(framework: Framework, tools: usize, edit: usize) -> String {
    let mut src = String::from("// Generated by mcp-load; rewritten on every run.\n\n");
    let body_tag = |i: usize| {
        if i == EDITED_TOOL {
            format!("tool {i} (edit {edit}{})", ".".repeat(edit))
        } else {
            format!("tool {i}")
        }
    };
    match framework {
        Framework::Ours => {
            src.push_str("use mcp_runtime::prelude::*;\n");
            for i in 1..=tools {
                let ranged = takes_range(i);
                if ranged {
                    src.push_str(&range_struct(i, "mcp_runtime"));
                }
                let _ = write!(
                    src,
                    concat!(
                        "\n/// Tool {i}: offset a number by {i} and label it.\n",
                        "#[tool]\n",
                        "fn tool_{i:02}(\n",
                        "    /// The number.\n",
                        "    n: i64,\n",
                        "    /// The label.\n",
                        "    label: String,\n",
                        "{range}",
                        ") -> String {{\n",
                        "    format!(\"{{label}}, {tag}: {{}}\", {value})\n",
                        "}}\n",
                    ),
                    i = i,
                    tag = body_tag(i),
                    range = if ranged {
                        format!("    /// The bounds.\n    range: Range{i:02},\n")
                    } else {
                        String::new()
                    },
                    value = offset_value(i, "n", "range"),
                );
            }
            src.push_str(concat!(
                "\n#[mcp_runtime::main]\n",
                "async fn main() -> mcp_runtime::Result<()> {\n",
                "    mcp_runtime::server!().serve_stdio().await\n",
                "}\n",
            ));
        }
        Framework::Rmcp => {
            src.push_str(concat!(
                "use rmcp::handler::server::wrapper::Parameters;\n",
                "use rmcp::schemars::JsonSchema;\n",
                "use rmcp::serde::Deserialize;\n",
                "use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router, transport};\n",
            ));
            for i in 1..=tools {
                let ranged = takes_range(i);
                if ranged {
                    src.push_str(&range_struct(i, "rmcp"));
                }
                let _ = write!(
                    src,
                    concat!(
                        "\n#[derive(Deserialize, JsonSchema)]\n",
                        "#[serde(crate = \"rmcp::serde\")]\n",
                        "#[schemars(crate = \"rmcp::schemars\")]\n",
                        "struct Args{i:02} {{\n",
                        "    /// The number.\n",
                        "    n: i64,\n",
                        "    /// The label.\n",
                        "    label: String,\n",
                        "{range}",
                        "}}\n",
                    ),
                    i = i,
                    range = if ranged {
                        format!("    /// The bounds.\n    range: Range{i:02},\n")
                    } else {
                        String::new()
                    },
                );
            }
            src.push_str("\n#[derive(Clone)]\nstruct Tools;\n\n#[tool_router]\nimpl Tools {\n");
            for i in 1..=tools {
                let _ = write!(
                    src,
                    concat!(
                        "    /// Tool {i}: offset a number by {i} and label it.\n",
                        "    #[tool]\n",
                        "    fn tool_{i:02}(&self, Parameters(args): Parameters<Args{i:02}>) -> String {{\n",
                        "        format!(\"{{}}, {tag}: {{}}\", args.label, {value})\n",
                        "    }}\n",
                    ),
                    i = i,
                    tag = body_tag(i),
                    value = offset_value(i, "args.n", "args.range"),
                );
            }
            src.push_str(concat!(
                "}\n\n#[tool_handler]\nimpl ServerHandler for Tools {}\n\n",
                "#[tokio::main]\n",
                "async fn main() -> Result<(), Box<dyn std::error::Error>> {\n",
                "    Tools.serve(transport::stdio()).await?.waiting().await?;\n",
                "    Ok(())\n",
                "}\n",
            ));
        }
    }
    src
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_changes_one_tool_body_only() {
        for framework in Framework::ALL {
            let before = fifty_tools(framework, 1);
            let after = fifty_tools(framework, 2);
            let changed: Vec<(&str, &str)> = before
                .lines()
                .zip(after.lines())
                .filter(|(a, b)| a != b)
                .collect();
            assert_eq!(changed.len(), 1, "{changed:?}");
            assert!(changed[0].0.contains("tool 25 (edit 1.)"), "{changed:?}");
            assert_ne!(before.len(), after.len(), "the edit changes the length");
            assert_eq!(before.matches("#[tool]").count(), TOOLS);
        }
    }
}
