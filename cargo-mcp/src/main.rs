//! `cargo mcp`: the daily loop of an MCP server written with mcp-runtime, one command each.
//!
//! - `cargo mcp new NAME [--http]`: a server crate that builds, passes its test and runs;
//! - `cargo mcp dev [--http ADDR] [--inspector]`: build, run, rebuild and restart on change;
//! - `cargo mcp list|call|read|prompt TARGET …`: talk to any MCP server (a command or a URL);
//! - `cargo mcp install CLIENT [TARGET]`: write the server into an MCP client's configuration;
//! - `cargo mcp lint [TARGET]`: check the tools' schemas against every known client.
//!
//! Cargo runs `cargo-mcp mcp ARGS…` for `cargo mcp ARGS…`; the binary also runs on its own.

mod cli;
mod config_file;
mod crate_build;
mod dev;
mod install;
mod json;
mod new;
mod talk;
mod terminal;

use std::process::ExitCode;

/// How `cargo mcp` ends, as its help describes under "Exit status".
#[derive(Debug)]
pub(crate) enum Failure {
    /// The tool answered with `isError`, lint found errors, or the command failed (1).
    Failed(String),
    /// The server answered with a JSON-RPC error (3).
    Protocol(String),
    /// The server could not be built, started or reached, or the connection broke (4).
    Connection(String),
}

impl Failure {
    fn code(&self) -> u8 {
        match self {
            Failure::Failed(_) => 1,
            Failure::Protocol(_) => 3,
            Failure::Connection(_) => 4,
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            Failure::Failed(m) | Failure::Protocol(m) | Failure::Connection(m) => m,
        }
    }
}

impl From<mcp_runtime::client::CallError> for Failure {
    fn from(error: mcp_runtime::client::CallError) -> Self {
        use mcp_runtime::client::CallError;
        match error {
            CallError::Rpc(_) | CallError::Protocol(_) => Failure::Protocol(error.to_string()),
            CallError::Usage(_) => Failure::Failed(error.to_string()),
            other => Failure::Connection(other.to_string()),
        }
    }
}

pub(crate) type Outcome = Result<(), Failure>;

fn main() -> ExitCode {
    // `cargo mcp …` runs `cargo-mcp mcp …`.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "mcp") {
        args.remove(1);
    }
    let matches = cli::command().get_matches_from(args);
    let runtime = match mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(async {
        match matches.subcommand() {
            Some(("new", m)) => new::run(m).await,
            Some(("dev", m)) => dev::run(m).await,
            Some(("list", m)) => talk::list(m).await,
            Some(("call", m)) => talk::call(m).await,
            Some(("read", m)) => talk::read(m).await,
            Some(("prompt", m)) => talk::prompt(m).await,
            Some(("lint", m)) => talk::lint(m).await,
            Some(("install", m)) => install::run(m).await,
            _ => unreachable!("clap requires a subcommand"),
        }
    });
    // Children (servers, the Inspector) are killed when their handles drop, before exit.
    drop(runtime);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // The message may quote the server (its error, a name it gave).
            eprintln!("error: {}", terminal::lines(failure.message()));
            ExitCode::from(failure.code())
        }
    }
}
