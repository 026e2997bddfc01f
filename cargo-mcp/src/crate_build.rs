//! Building the crate in the current directory with Cargo, and finding its server binary.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use clap::ArgMatches;
use mcp_runtime::tokio::io::{AsyncBufReadExt, BufReader};
use mcp_runtime::tokio::process::Command;
use serde_json::Value;

use crate::Failure;

/// Which binary of which package: `-p` and `--bin` as the user gave them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Selection {
    pub(crate) package: Option<String>,
    pub(crate) bin: Option<String>,
}

impl Selection {
    pub(crate) fn from_matches(m: &ArgMatches) -> Selection {
        Selection {
            package: m.get_one::<String>("package").cloned(),
            bin: m.get_one::<String>("bin").cloned(),
        }
    }
}

/// A binary Cargo built.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    /// The executable.
    pub(crate) executable: PathBuf,
    /// The binary target's name.
    pub(crate) name: String,
    /// The folder of the package's `Cargo.toml`.
    pub(crate) package_dir: PathBuf,
    /// Whether Cargo found it up to date (nothing was compiled).
    pub(crate) fresh: bool,
}

/// The `cargo` that runs this command (Cargo sets `CARGO` for its subcommands).
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Builds the selected binary of the crate in `dir` (its progress and errors on standard
/// error, as Cargo prints them) and returns it.
pub(crate) async fn build(
    dir: &Path,
    selection: &Selection,
    release: bool,
) -> Result<Built, Failure> {
    let mut command = cargo();
    command
        .current_dir(dir)
        .args(["build", "--message-format=json-render-diagnostics"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    if release {
        command.arg("--release");
    }
    if let Some(package) = &selection.package {
        command.args(["--package", package]);
    }
    match &selection.bin {
        Some(bin) => {
            command.args(["--bin", bin]);
        }
        None => {
            command.arg("--bins");
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| Failure::Connection(format!("cannot run cargo: {e}")))?;
    let stdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let mut binaries = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(executable) = message["executable"].as_str() else {
            continue;
        };
        let is_bin = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
        if !is_bin {
            continue;
        }
        let package_dir = message["manifest_path"]
            .as_str()
            .and_then(|p| Path::new(p).parent())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.to_path_buf());
        binaries.push(Built {
            executable: executable.into(),
            name: message["target"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            package_dir,
            fresh: message["fresh"] == true,
        });
    }
    let status = child
        .wait()
        .await
        .map_err(|e| Failure::Connection(format!("cargo build: {e}")))?;
    if !status.success() {
        return Err(Failure::Connection(
            "the build failed (Cargo's messages are above); fix the code and run again".into(),
        ));
    }
    match binaries.len() {
        0 => Err(Failure::Connection(format!(
            "no binary was built in {}: run this in a server crate (one with src/main.rs), or name a command or URL instead of `.`",
            dir.display()
        ))),
        1 => Ok(binaries.remove(0)),
        _ => {
            let names: Vec<&str> = binaries.iter().map(|b| b.name.as_str()).collect();
            Err(Failure::Failed(format!(
                "this builds several binaries ({}): pick one with --bin NAME (and -p PACKAGE in a workspace)",
                names.join(", ")
            )))
        }
    }
}
