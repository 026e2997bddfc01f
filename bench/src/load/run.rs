//! One measured run, independent of the transport: what it is asked to do, what it measured,
//! and the servers it can be pointed at.

use std::path::Path;
use std::time::Duration;

use crate::Result;
use crate::process::ServerCommand;

/// How the driver reaches a server. Only stdio exists; Streamable HTTP will be a second
/// variant with its own module beside `stdio.rs` (spawn the server with `--http ADDR`, time
/// spawn → `initialize` response, then `concurrency` connections each keeping one call in
/// flight), reusing the workload, the process handling and the statistics unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
        }
    }

    pub fn run(self, server: &ServerCommand, plan: &Plan) -> Result<RunOutcome> {
        match self {
            Transport::Stdio => crate::stdio::run(server, plan),
        }
    }
}

/// What one run does.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Measured calls.
    pub calls: usize,
    /// Calls sent first and not measured (allocator, caches and lazily built state warm up).
    pub warmup: usize,
    /// Calls in flight at once.
    pub concurrency: usize,
    /// After this long the server is killed and the run fails.
    pub deadline: Duration,
}

/// The timings of the measured calls.
pub struct CallTimes {
    /// From the first request written to the last reply read.
    pub wall: Duration,
    /// Per call, from its request written to its reply read, in arrival order.
    pub latencies_ns: Vec<u64>,
}

/// What one run measured.
pub struct RunOutcome {
    /// From spawning the process to reading its `initialize` response.
    pub cold_start: Duration,
    pub calls: CallTimes,
    /// The server's peak resident set size (`VmHWM`) before its input was closed.
    pub peak_rss_kib: u64,
}

/// The servers under test, in the order each round runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// `bench-server`: mcp-runtime.
    Ours,
    /// `ceiling-server`: a hand-written serde_json loop.
    Ceiling,
    /// `rmcp-server`: rmcp in its default configuration.
    RmcpDefault,
    /// `rmcp-server --fast`: rmcp in its fastest configuration.
    RmcpFast,
}

impl Server {
    pub const ALL: [Server; 4] = [
        Server::Ours,
        Server::Ceiling,
        Server::RmcpDefault,
        Server::RmcpFast,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Server::Ours => "ours",
            Server::Ceiling => "ceiling",
            Server::RmcpDefault => "rmcp-default",
            Server::RmcpFast => "rmcp-fast",
        }
    }

    pub fn from_name(name: &str) -> Option<Server> {
        Server::ALL.into_iter().find(|s| s.name() == name)
    }

    /// How to start this server from the directory holding the benchmark binaries.
    pub fn command(self, bin_dir: &Path) -> ServerCommand {
        let (binary, args): (&str, &[&str]) = match self {
            Server::Ours => ("bench-server", &[]),
            Server::Ceiling => ("ceiling-server", &[]),
            Server::RmcpDefault => ("rmcp-server", &[]),
            Server::RmcpFast => ("rmcp-server", &["--fast"]),
        };
        ServerCommand {
            program: bin_dir.join(format!("{binary}{}", std::env::consts::EXE_SUFFIX)),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }
}
