//! One measured run, independent of the transport: what it is asked to do, what it measured,
//! and the servers it can be pointed at.

use std::path::Path;
use std::time::Duration;

use crate::Result;
use crate::process::ServerCommand;

/// How the driver reaches a server, and (over HTTP) what kind of exchange it measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON on the server's standard streams.
    Stdio,
    /// Streamable HTTP: the server is started with `--http 127.0.0.1:0`, and each of the
    /// `concurrency` keep-alive connections keeps one call in flight.
    Http(HttpWorkload),
}

/// One kind of Streamable HTTP exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpWorkload {
    pub era: Era,
    pub call: Call,
}

/// How an HTTP client opens the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// Protocol 2025-11-25: each connection sends `initialize` and
    /// `notifications/initialized` once, then every request carries the `Mcp-Session-Id` the
    /// server gave it (when it gave one) and `MCP-Protocol-Version`.
    Session,
    /// Protocol 2026-07-28: no handshake; every request carries the version, client info and
    /// capabilities in `_meta` and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
    /// headers.
    Stateless,
}

/// Which tool each measured call calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `echo`: the response alone, which a server can send as plain JSON.
    Echo,
    /// `echo_progress` with a `progressToken`: one progress notification, then the response,
    /// which must come as an SSE stream.
    Progress,
}

impl HttpWorkload {
    pub const ALL: [HttpWorkload; 4] = [
        HttpWorkload {
            era: Era::Session,
            call: Call::Echo,
        },
        HttpWorkload {
            era: Era::Session,
            call: Call::Progress,
        },
        HttpWorkload {
            era: Era::Stateless,
            call: Call::Echo,
        },
        HttpWorkload {
            era: Era::Stateless,
            call: Call::Progress,
        },
    ];

    /// How the report describes it.
    pub fn label(self) -> &'static str {
        match (self.era, self.call) {
            (Era::Session, Call::Echo) => "2025-11-25 session, echo",
            (Era::Session, Call::Progress) => "2025-11-25 session, echo + progress",
            (Era::Stateless, Call::Echo) => "2026-07-28 stateless, echo",
            (Era::Stateless, Call::Progress) => "2026-07-28 stateless, echo + progress",
        }
    }
}

impl Transport {
    /// Every transport and HTTP workload, in the order each round runs them.
    pub fn all() -> Vec<Transport> {
        std::iter::once(Transport::Stdio)
            .chain(HttpWorkload::ALL.map(Transport::Http))
            .collect()
    }

    /// The name used on the command line and in the raw numbers.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http(w) => match (w.era, w.call) {
                (Era::Session, Call::Echo) => "http-session-echo",
                (Era::Session, Call::Progress) => "http-session-progress",
                (Era::Stateless, Call::Echo) => "http-stateless-echo",
                (Era::Stateless, Call::Progress) => "http-stateless-progress",
            },
        }
    }

    pub fn from_name(name: &str) -> Option<Transport> {
        Transport::all().into_iter().find(|t| t.name() == name)
    }

    pub fn is_http(self) -> bool {
        matches!(self, Transport::Http(_))
    }

    pub fn run(self, server: &ServerCommand, plan: &Plan) -> Result<RunOutcome> {
        match self {
            Transport::Stdio => crate::stdio::run(server, plan),
            Transport::Http(workload) => crate::http::run(server, plan, workload),
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
    /// When positive, the measured calls are made in this many equal parts, and the
    /// server's resident set size is read after each (`mcp-load soak`).
    pub checkpoints: usize,
}

impl Plan {
    /// The sizes of the parts the measured calls are made in: one part unless checkpoints
    /// were asked for.
    pub fn parts(&self) -> Vec<usize> {
        let n = self.checkpoints.max(1).min(self.calls.max(1));
        (0..n)
            .map(|i| self.calls * (i + 1) / n - self.calls * i / n)
            .collect()
    }
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
    /// From spawning the process to reading its response to the first request (`initialize`,
    /// or over HTTP in the stateless era `server/discover`).
    pub cold_start: Duration,
    pub calls: CallTimes,
    /// The server's peak resident set size (`VmHWM`) before its input was closed (or, over
    /// HTTP, before it was told to stop).
    pub peak_rss_kib: u64,
    /// The most anonymous memory (`RssAnon`: heap and stacks, no file pages) the sampler saw
    /// by then.
    pub peak_anon_kib: u64,
    /// Over HTTP, how the measured calls' responses came: plain JSON or SSE streams.
    pub bodies: Bodies,
    /// With checkpoints, the calls made so far and the resident set size (`VmRSS`, KiB)
    /// after each part.
    pub rss_kib: Vec<(usize, u64)>,
}

impl CallTimes {
    /// Appends the timings of a later part of the same run.
    pub fn extend(&mut self, later: CallTimes) {
        self.wall += later.wall;
        self.latencies_ns.extend(later.latencies_ns);
    }
}

/// How many responses came as plain JSON and how many as SSE streams, and how many calls
/// that asked for progress got a correct response without their progress notification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bodies {
    pub json: usize,
    pub sse: usize,
    pub lost_progress: usize,
}

impl Bodies {
    /// "JSON", "SSE", "mixed", or "–" when there were none (stdio).
    pub fn describe(self) -> &'static str {
        match (self.json, self.sse) {
            (0, 0) => "–",
            (_, 0) => "JSON",
            (0, _) => "SSE",
            _ => "mixed",
        }
    }
}

/// The servers under test, in the order each round runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// `bench-server`: mcp-runtime (over stdio built without `http`, as a stdio-only server
    /// is).
    Ours,
    /// `bench-server` built with `http`, as every example ships, serving stdio.
    OursHttpBuild,
    /// `ceiling-server`: a hand-written serde_json loop over stdio, bare hyper over HTTP.
    Ceiling,
    /// `rmcp-server`: rmcp in its default configuration.
    RmcpDefault,
    /// `rmcp-server --fast`: rmcp in its fastest configuration.
    RmcpFast,
}

impl Server {
    pub const ALL: [Server; 5] = [
        Server::Ours,
        Server::OursHttpBuild,
        Server::Ceiling,
        Server::RmcpDefault,
        Server::RmcpFast,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Server::Ours => "ours",
            Server::OursHttpBuild => "ours-http-build",
            Server::Ceiling => "ceiling",
            Server::RmcpDefault => "rmcp-default",
            Server::RmcpFast => "rmcp-fast",
        }
    }

    pub fn from_name(name: &str) -> Option<Server> {
        Server::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the server is mcp-runtime (in either build).
    pub fn is_ours(self) -> bool {
        matches!(self, Server::Ours | Server::OursHttpBuild)
    }

    /// Whether the server can be measured over `transport`: every server speaks stdio; over
    /// Streamable HTTP ours (in its HTTP build, which is `Ours` there) and rmcp speak every
    /// workload, and the ceiling those answered with plain JSON (`echo`).
    pub fn serves(self, transport: Transport) -> bool {
        match (self, transport) {
            (_, Transport::Stdio) => true,
            (Server::OursHttpBuild, Transport::Http(_)) => false,
            (Server::Ceiling, Transport::Http(w)) => w.call == Call::Echo,
            (_, Transport::Http(_)) => true,
        }
    }

    /// How to start this server over `transport` from the directory holding the benchmark
    /// binaries. Over stdio, ours and rmcp are the builds without HTTP that `mcp-load` puts
    /// in [`STDIO_ONLY_DIR`] (a stdio server is built without HTTP), except
    /// [`Server::OursHttpBuild`]; over HTTP, the default builds beside it.
    pub fn command(self, bin_dir: &Path, transport: Transport) -> ServerCommand {
        let (binary, args): (&str, &[&str]) = match self {
            Server::Ours | Server::OursHttpBuild => ("bench-server", &[]),
            Server::Ceiling => ("ceiling-server", &[]),
            Server::RmcpDefault => ("rmcp-server", &[]),
            Server::RmcpFast => ("rmcp-server", &["--fast"]),
        };
        let dir = if transport == Transport::Stdio
            && !matches!(self, Server::Ceiling | Server::OursHttpBuild)
        {
            bin_dir.join(STDIO_ONLY_DIR)
        } else {
            bin_dir.to_path_buf()
        };
        ServerCommand {
            program: dir.join(format!("{binary}{}", std::env::consts::EXE_SUFFIX)),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }
}

/// The directory, beside the benchmark binaries, of `bench-server` and `rmcp-server` built
/// without the `http` feature.
pub const STDIO_ONLY_DIR: &str = "stdio-only";
