//! `mcp-load`: drives MCP servers as a client and measures them.
//!
//! ```text
//! mcp-load all [options]          every server × every transport × every concurrency,
//!                                 interleaved, repeated; then the build cost; prints a
//!                                 Markdown report
//! mcp-load run SERVER [options]   one run per transport and concurrency against one server
//!                                 (ours, ours-http-build, ceiling, rmcp-default, rmcp-fast,
//!                                 or the path of any server with the same `echo` tool, and
//!                                 over HTTP `echo_progress` and `--http ADDR`)
//! mcp-load build-cost [options]   only the build cost
//! mcp-load manifest ours|rmcp NAME the manifest of the stdio server crate that build-cost
//!                                 builds clean, its binary named NAME
//! mcp-load allocs [options]       heap allocations per stdio `echo` call of ours, in the
//!                                 stdio-only build and in the build with `http`
//! mcp-load sessions [--sessions N] what an idle Streamable HTTP session costs ours and
//!                                 rmcp-default in resident memory
//! mcp-load growth [options]       cost as the work grows: a catalogue of 1,000 tools, echo
//!                                 payloads of 1 KiB to 1 MiB (over stdio and over HTTP),
//!                                 1,000 subscribers of one resource
//! mcp-load soak [SERVER] [options] a million calls per transport, the server's resident
//!                                 set size read ten times along the way; fails when it grew
//!                                 more than 10 % after the first tenth
//! ```
//!
//! Run it in release mode from the workspace: `cargo run --release -p mcp-bench --bin
//! mcp-load -- all`. It builds the server binaries beside itself first.

mod allocs;
mod build_cost;
mod growth;
mod http;
mod http_client;
mod process;
mod report;
mod run;
mod stats;
mod stdio;
mod workload;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use build_cost::{BuildCost, BuildKind};
use process::ServerCommand;
use report::{ColdStart, Results, Sample};
use run::{Call, Era, HttpWorkload, Plan, Server, Transport};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const USAGE: &str = "\
usage: mcp-load all [--calls N] [--warmup N] [--reps N] [--concurrency 1,16]
                    [--servers ours,ours-http-build,ceiling,rmcp-default,rmcp-fast] [--cold-starts N]
                    [--transports LIST | --no-http]
                    [--build-reps N | --no-build-cost] [--builds stdio,everything,incremental]
                    [--no-build] [--out DIR] [--nice N]
       mcp-load run SERVER|PATH [--calls N] [--warmup N] [--concurrency 1,16]
                    [--transports LIST | --no-http] [--nice N] [-- ARGS]
       mcp-load build-cost [--build-reps N] [--builds LIST] [--nice N]
       mcp-load manifest ours|rmcp NAME
       mcp-load allocs [--calls N] [--warmup N]
       mcp-load sessions [--sessions N]
       mcp-load growth [--reps N] [--rows catalogue,payloads,http-payloads,fan-out] [--tools N]
                    [--subscribers N] [--nice N]
       mcp-load soak [SERVER] [--calls N] [--checkpoints N] [--concurrency N]
                    [--transports LIST] [--nice N]

Transports: stdio, http-session-echo, http-session-progress, http-stateless-echo,
http-stateless-progress (Streamable HTTP: a 2025-11-25 session opened with `initialize` on
each connection, or 2026-07-28 stateless requests; `echo` calls, or `echo_progress` calls with
a progressToken, whose one progress notification makes the response an SSE stream). Over
HTTP, --concurrency is the number of keep-alive connections, each with one call in flight;
the ceiling (bare hyper there) answers the `echo` workloads only.

Servers: ours (over stdio built without `http`), ours-http-build (stdio only: the same server
built with `http`, as every example ships), ceiling, rmcp-default, rmcp-fast.

Defaults: 20000 calls after 1000 warm-up calls, 3 repetitions, 1 and 16 calls in flight,
every server over every transport it speaks, 10 extra stdio cold starts per server and
repetition, one build of each kind per framework (clean release builds of the stdio server
and of the everything-enabled one, a dev rebuild of a 50-tool crate after one tool's edit).
--nice N runs everything (driver, servers, builds) at that niceness (-20 needs root), so that
other work on the machine disturbs the measurements less. `all` first builds the server
binaries (when run through cargo) and writes the report and every run's numbers under
target/mcp-bench/ (or --out DIR).

growth: --reps repetitions (3 unless given), interleaved, of each row: ours and rmcp-fast
with a catalogue of --tools tools (1000; each crate generated and built under
target/mcp-bench/), started and listed 20 times; ours, the ceiling and both rmcp
configurations echoing 1 KiB, 64 KiB and 1 MiB texts; ours with --subscribers sessions
(1000) subscribed to one resource, changed 5 times.

soak (SERVER defaults to ours): per transport, 1000000 calls unless --calls, at 16 in flight
unless --concurrency, in --checkpoints parts (10), reading the server's VmRSS after each;
passes when the last reading is within 10 % of the first, which is taken after the warm-up
and the first part.";

struct Options {
    calls: usize,
    warmup: usize,
    reps: usize,
    concurrency: Vec<usize>,
    servers: Vec<Server>,
    transports: Vec<Transport>,
    cold_starts: usize,
    nice: Option<i32>,
    build_reps: usize,
    builds: Vec<BuildKind>,
    build: bool,
    out: Option<PathBuf>,
    checkpoints: usize,
    sessions: usize,
    tools: usize,
    subscribers: usize,
    rows: Vec<String>,
    reps_given: bool,
    calls_given: bool,
    concurrency_given: bool,
    positional: Vec<String>,
}

impl Options {
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Options> {
        let mut o = Options {
            calls: 20_000,
            warmup: 1_000,
            reps: 3,
            concurrency: vec![1, 16],
            servers: Server::ALL.to_vec(),
            transports: Transport::all(),
            cold_starts: 10,
            nice: None,
            build_reps: 1,
            builds: BuildKind::ALL.to_vec(),
            build: true,
            out: None,
            checkpoints: 10,
            sessions: 10_000,
            tools: 1_000,
            subscribers: 1_000,
            rows: ROWS.iter().map(|r| (*r).to_owned()).collect(),
            reps_given: false,
            calls_given: false,
            concurrency_given: false,
            positional: Vec::new(),
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--calls" => {
                    o.calls = value()?.parse()?;
                    o.calls_given = true;
                }
                "--checkpoints" => o.checkpoints = value()?.parse()?,
                "--sessions" => o.sessions = value()?.parse()?,
                "--warmup" => o.warmup = value()?.parse()?,
                "--reps" => {
                    o.reps = value()?.parse()?;
                    o.reps_given = true;
                }
                "--tools" => o.tools = value()?.parse()?,
                "--subscribers" => o.subscribers = value()?.parse()?,
                "--rows" => {
                    o.rows = value()?.split(',').map(str::to_owned).collect();
                    if let Some(bad) = o.rows.iter().find(|r| !ROWS.contains(&r.as_str())) {
                        return Err(format!("unknown row `{bad}`").into());
                    }
                }
                "--concurrency" => {
                    o.concurrency = value()?
                        .split(',')
                        .map(str::parse)
                        .collect::<std::result::Result<_, _>>()?;
                    o.concurrency_given = true;
                }
                "--servers" => {
                    o.servers = value()?
                        .split(',')
                        .map(|s| Server::from_name(s).ok_or(format!("unknown server `{s}`")))
                        .collect::<std::result::Result<_, _>>()?;
                }
                "--transports" => {
                    o.transports = value()?
                        .split(',')
                        .map(|t| Transport::from_name(t).ok_or(format!("unknown transport `{t}`")))
                        .collect::<std::result::Result<_, _>>()?;
                }
                "--no-http" => o.transports.retain(|t| !t.is_http()),
                "--cold-starts" => o.cold_starts = value()?.parse()?,
                "--nice" => o.nice = Some(value()?.parse()?),
                "--build-reps" => o.build_reps = value()?.parse()?,
                "--no-build-cost" => o.build_reps = 0,
                "--builds" => {
                    o.builds = value()?
                        .split(',')
                        .map(|k| BuildKind::from_name(k).ok_or(format!("unknown build `{k}`")))
                        .collect::<std::result::Result<_, _>>()?;
                }
                "--no-build" => o.build = false,
                "--out" => o.out = Some(value()?.into()),
                // Wherever it stands (`mcp-load build-cost --help` must not start the builds).
                "-h" | "--help" => o.positional.insert(0, "help".into()),
                // The rest are the server program's own arguments.
                "--" => o.positional.extend(args.by_ref()),
                flag if flag.starts_with('-') => {
                    return Err(format!("unknown option `{flag}`").into());
                }
                _ => o.positional.push(arg),
            }
        }
        if o.calls == 0 || o.reps == 0 || o.concurrency.contains(&0) {
            return Err("--calls, --reps and --concurrency must be positive".into());
        }
        if o.transports.is_empty() {
            return Err("no transport left to measure".into());
        }
        Ok(o)
    }

    fn plan(&self, concurrency: usize) -> Plan {
        Plan {
            calls: self.calls,
            warmup: self.warmup,
            concurrency,
            // At least two minutes, and more for long runs (at 2000 calls/s at worst).
            deadline: Duration::from_secs(120.max(self.calls as u64 / 2_000)),
            checkpoints: 0,
        }
    }
}

fn main() -> ExitCode {
    match try_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn try_main() -> Result<()> {
    let options = Options::parse(std::env::args().skip(1))?;
    let command = options.positional.first().map(String::as_str);
    match command {
        Some("all") => all(&options),
        Some("run") => {
            let name = options.positional.get(1).ok_or("run needs a SERVER")?;
            let server = Server::from_name(name);
            if server.is_none() && !name.contains(std::path::MAIN_SEPARATOR) {
                return Err(format!("unknown server `{name}`").into());
            }
            if server.is_some() && options.build {
                build_servers()?;
            }
            let _niceness = Niceness::set(options.nice)?;
            for &transport in &options.transports {
                let (label, command) = match server {
                    Some(server) if !server.serves(transport) => continue,
                    Some(server) => (server.name(), server.command(&bin_dir()?, transport)),
                    // Any other server with the same tools, by path.
                    None => (
                        "program",
                        ServerCommand {
                            program: name.into(),
                            args: options.positional[2..].to_vec(),
                        },
                    ),
                };
                for &c in &options.concurrency {
                    let sample = measure(label, &command, transport, &options.plan(c))?;
                    println!("{}", describe(&sample));
                }
            }
            Ok(())
        }
        Some("build-cost") => {
            let _niceness = Niceness::set(options.nice)?;
            let results = Results {
                date: today(),
                machine: machine(),
                workload: String::new(),
                samples: Vec::new(),
                cold_starts: Vec::new(),
                allocations: Vec::new(),
                sessions: Vec::new(),
                builds: build_costs(&options)?,
            };
            print!("{}", results.to_markdown());
            Ok(())
        }
        Some("manifest") => {
            let framework = match options.positional.get(1).map(String::as_str) {
                Some("ours") => build_cost::Framework::Ours,
                Some("rmcp") => build_cost::Framework::Rmcp,
                _ => return Err("manifest needs ours or rmcp, then a binary name".into()),
            };
            let name = options
                .positional
                .get(2)
                .ok_or("manifest needs a binary name")?;
            print!("{}", build_cost::stdio_manifest(framework, name)?);
            Ok(())
        }
        Some("help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some("soak") => soak(&options),
        Some("growth") => growth(&options),
        Some("sessions") => {
            if options.build {
                build_servers()?;
            }
            for cost in session_costs(&options)? {
                println!("{}", cost.describe());
            }
            Ok(())
        }
        Some("allocs") => {
            if options.build {
                build_servers()?;
            }
            for per_call in allocations(&options)? {
                println!(
                    "ours ({} build): {:.1} allocations, {:.0} bytes per stdio echo call",
                    per_call.build, per_call.allocations, per_call.bytes
                );
            }
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n{USAGE}").into()),
    }
}

/// The `echo` payload rows of `mcp-load growth` over one transport (stdio, or Streamable
/// HTTP in a 2025-11-25 session): each size, each server, `reps` times interleaved; one
/// Markdown table of medians.
fn payload_rows(
    bin_dir: &std::path::Path,
    reps: usize,
    servers: &[Server],
    transport: Transport,
) -> Result<()> {
    let over = if transport == Transport::Stdio {
        "stdio"
    } else {
        "Streamable HTTP, one 2025-11-25 session"
    };
    let mut rows = Vec::new();
    for rep in 1..=reps {
        for bytes in PAYLOADS {
            for &server in servers {
                let command = server.command(bin_dir, transport);
                let p = match transport {
                    Transport::Stdio => growth::payload(server.name(), &command, bytes, rep)?,
                    Transport::Http(_) => http::payload(server.name(), &command, bytes, rep)?,
                };
                eprintln!(
                    "[payloads over {} rep {rep}] {:<12} {:>7} B × {:>4}: {:>7.1} MB/s, RSS {:.1} → {:.1} MiB",
                    transport.name(),
                    p.server,
                    bytes,
                    p.calls,
                    p.mb_per_s,
                    mib(p.idle_kib),
                    mib(p.peak_kib)
                );
                rows.push(p);
            }
        }
    }
    println!("## echo payloads ({over}, one call in flight; medians of {reps})\n");
    println!(
        "| text | server | MB/s | ÷ ceiling | peak RSS growth | growth ÷ payload |\n|---|---|---:|---:|---:|---:|"
    );
    for bytes in PAYLOADS {
        for &server in servers {
            let mine: Vec<&growth::Payload> = rows
                .iter()
                .filter(|p| p.bytes == bytes && p.server == server.name())
                .collect();
            let ratios: Vec<f64> = mine
                .iter()
                .filter_map(|p| {
                    let ceiling = rows.iter().find(|c| {
                        c.rep == p.rep && c.bytes == bytes && c.server == Server::Ceiling.name()
                    })?;
                    Some(p.mb_per_s / ceiling.mb_per_s)
                })
                .collect();
            let growth: Vec<f64> = mine
                .iter()
                .map(|p| p.peak_kib.saturating_sub(p.idle_kib) as f64 * 1024.0)
                .collect();
            let speed: Vec<f64> = mine.iter().map(|p| p.mb_per_s).collect();
            let grown = med(&growth);
            println!(
                "| {} KiB | {} | {:.1} | {:.2} | {:.2} MiB | {:.1} |",
                bytes >> 10,
                server.name(),
                med(&speed),
                med(&ratios),
                grown / (1 << 20) as f64,
                grown / bytes as f64,
            );
        }
    }
    println!();
    Ok(())
}

/// The rows of `mcp-load growth`.
const ROWS: [&str; 4] = ["catalogue", "payloads", "http-payloads", "fan-out"];

/// The payload sizes of `mcp-load growth`.
const PAYLOADS: [usize; 3] = [1 << 10, 64 << 10, 1 << 20];

/// Cost as the work grows, each row's servers interleaved repetition by repetition; prints
/// one Markdown table per row, ratios as medians of per-repetition ratios.
fn growth(options: &Options) -> Result<()> {
    if options.build {
        build_servers()?;
    }
    let bin_dir = bin_dir()?;
    let _niceness = Niceness::set(options.nice)?;
    let reps = if options.reps_given { options.reps } else { 3 };
    let row = |name: &str| options.rows.iter().any(|r| r == name);
    println!("# Cost as the work grows ({}, {})\n", today(), machine());
    if row("catalogue") {
        let work_dir = target_dir()?.join("mcp-bench").join("growth");
        let frameworks = [
            (build_cost::Framework::Ours, "ours"),
            (build_cost::Framework::Rmcp, "rmcp"),
        ];
        let mut servers = Vec::new();
        for (framework, name) in frameworks {
            eprintln!(
                "mcp-load: building {name}'s server of {} tools",
                options.tools
            );
            let program =
                build_cost::catalogue_server(&cargo(), &work_dir, framework, options.tools)?;
            servers.push((
                name,
                ServerCommand {
                    program,
                    args: Vec::new(),
                },
            ));
        }
        let mut rows = Vec::new();
        for rep in 1..=reps {
            for (name, server) in &servers {
                let c = growth::catalogue(name, server, options.tools, 20, rep)?;
                eprintln!(
                    "[catalogue rep {rep}] {name}: start {:.2} ms, tools/list {:.2} ms over {} pages, RSS {:.1} MiB",
                    ms(c.start),
                    ms(c.list),
                    c.pages,
                    mib(c.rss_kib)
                );
                rows.push(c);
            }
        }
        println!(
            "## A catalogue of {} tools (stdio; medians of {reps})\n",
            options.tools
        );
        println!("| | ours | rmcp | ours ÷ rmcp |\n|---|---:|---:|---:|");
        let of = |name: &str, f: &dyn Fn(&growth::Catalogue) -> f64| -> (f64, f64) {
            let mine: Vec<&growth::Catalogue> =
                rows.iter().filter(|c| c.framework == name).collect();
            let values: Vec<f64> = mine.iter().map(|c| f(c)).collect();
            let ratios: Vec<f64> = mine
                .iter()
                .filter_map(|c| {
                    let other = rows
                        .iter()
                        .find(|o| o.rep == c.rep && o.framework == "rmcp")?;
                    Some(f(c) / f(other))
                })
                .collect();
            (med(&values), med(&ratios))
        };
        type Metric<'a> = (&'a str, &'a dyn Fn(&growth::Catalogue) -> f64, &'a str);
        let metrics: [Metric; 4] = [
            (
                "start-up (to the answer to initialize)",
                &|c| ms(c.start),
                "ms",
            ),
            ("tools/list, every page", &|c| ms(c.list), "ms"),
            ("pages", &|c| c.pages as f64, ""),
            ("resident memory after listing", &|c| mib(c.rss_kib), "MiB"),
        ];
        for (label, f, unit) in metrics {
            let (ours, ratio) = of("ours", f);
            let (rmcp, _) = of("rmcp", f);
            println!("| {label} | {ours:.2} {unit} | {rmcp:.2} {unit} | {ratio:.2} |");
        }
        println!();
    }
    if row("payloads") {
        let servers = [
            Server::Ours,
            Server::Ceiling,
            Server::RmcpFast,
            Server::RmcpDefault,
        ];
        payload_rows(&bin_dir, reps, &servers, Transport::Stdio)?;
    }
    if row("http-payloads") {
        // rmcp has one Streamable HTTP server; its two stdio configurations serve it alike.
        let servers = [Server::Ours, Server::Ceiling, Server::RmcpDefault];
        let transport = Transport::Http(HttpWorkload {
            era: Era::Session,
            call: Call::Echo,
        });
        payload_rows(&bin_dir, reps, &servers, transport)?;
    }
    if row("fan-out") {
        let server = ServerCommand {
            program: bin_dir.join(format!("session-server{}", std::env::consts::EXE_SUFFIX)),
            args: Vec::new(),
        };
        let mut rounds = Vec::new();
        for rep in 1..=reps {
            for f in growth::fan_out(&server, options.subscribers, 5)? {
                eprintln!(
                    "[fan-out rep {rep}] round {}: touch answered in {:.2} ms, first {:.2} ms, last {:.2} ms",
                    f.round,
                    ms(f.answered),
                    ms(f.first),
                    ms(f.last)
                );
                rounds.push(f);
            }
        }
        let median = |f: &dyn Fn(&growth::FanOut) -> Duration| {
            med(&rounds.iter().map(|r| ms(f(r))).collect::<Vec<_>>())
        };
        println!(
            "## {} sessions subscribed to one resource (Streamable HTTP, ours; medians of {} changes)\n",
            options.subscribers,
            rounds.len()
        );
        println!("| from the change to | ms |\n|---|---:|");
        println!(
            "| the answer to the call that changed it | {:.2} |",
            median(&|r| r.answered)
        );
        println!("| the first notification | {:.2} |", median(&|r| r.first));
        println!("| the last notification | {:.2} |", median(&|r| r.last));
        println!(
            "\nrmcp has no subscription delivery of its own (a server keeps its peers and notifies each), so it has no row here.\n"
        );
    }
    Ok(())
}

fn med(values: &[f64]) -> f64 {
    stats::median(values.iter().copied()).unwrap_or(f64::NAN)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A long run per transport, watching the server's memory: it must stay flat once warm.
fn soak(options: &Options) -> Result<()> {
    let name = options.positional.get(1).map_or("ours", String::as_str);
    let server = Server::from_name(name).ok_or_else(|| format!("unknown server `{name}`"))?;
    if options.build {
        build_servers()?;
    }
    let bin_dir = bin_dir()?;
    let _niceness = Niceness::set(options.nice)?;
    let calls = if options.calls_given {
        options.calls
    } else {
        1_000_000
    };
    let concurrency = if options.concurrency_given {
        options.concurrency[0]
    } else {
        16
    };
    let plan = Plan {
        calls,
        checkpoints: options.checkpoints.max(2),
        deadline: Duration::from_secs(120.max(calls as u64 / 2_000)),
        ..options.plan(concurrency)
    };
    let mut grown = Vec::new();
    for &transport in &options.transports {
        if !server.serves(transport) {
            continue;
        }
        let command = server.command(&bin_dir, transport);
        let outcome = transport.run(&command, &plan)?;
        let (first_calls, first) = outcome.rss_kib[0];
        let &(last_calls, last) = outcome.rss_kib.last().unwrap_or(&(first_calls, first));
        let growth = last as f64 / first.max(1) as f64 - 1.0;
        println!(
            "{:<12} {:<23} c={concurrency:<2} {:>8.0} calls/s  RSS after {first_calls} calls {:.2} MiB, after {last_calls} {:.2} MiB ({:+.1} %)",
            server.name(),
            transport.name(),
            calls as f64 / outcome.calls.wall.as_secs_f64(),
            first as f64 / 1024.0,
            last as f64 / 1024.0,
            growth * 100.0,
        );
        let readings: Vec<String> = outcome
            .rss_kib
            .iter()
            .map(|(n, kib)| format!("{}k: {:.2}", n / 1000, *kib as f64 / 1024.0))
            .collect();
        println!("    MiB along the way: {}", readings.join(", "));
        if growth > 0.10 {
            grown.push(transport.name());
        }
    }
    if grown.is_empty() {
        Ok(())
    } else {
        Err(format!("memory grew by more than 10 % over {}", grown.join(", ")).into())
    }
}

/// Every server over every transport at every concurrency, interleaved (each repetition runs
/// each server once per transport and concurrency before the next repetition starts), then
/// the build cost.
fn all(options: &Options) -> Result<()> {
    if options.build {
        build_servers()?;
    }
    let bin_dir = bin_dir()?;
    let niceness = Niceness::set(options.nice)?;
    let machine_before = machine();
    // One unmeasured start of each binary, so that no measured run pays for reading it
    // from disk.
    for &server in &options.servers {
        let plan = Plan {
            calls: 1,
            warmup: 0,
            ..options.plan(1)
        };
        Transport::Stdio.run(&server.command(&bin_dir, Transport::Stdio), &plan)?;
    }
    let mut samples = Vec::new();
    let mut cold_starts = Vec::new();
    // The (transport, server) pairs of a round, in order.
    let pairs: Vec<(Transport, Server)> = options
        .transports
        .iter()
        .flat_map(|&t| {
            options
                .servers
                .iter()
                .filter(move |s| s.serves(t))
                .map(move |&s| (t, s))
        })
        .collect();
    let total = options.reps * options.concurrency.len() * pairs.len();
    for rep in 1..=options.reps {
        for &transport in &options.transports {
            for &c in &options.concurrency {
                for &(_, server) in pairs.iter().filter(|(t, _)| *t == transport) {
                    let sample = Sample {
                        rep,
                        ..measure(
                            server.name(),
                            &server.command(&bin_dir, transport),
                            transport,
                            &options.plan(c),
                        )?
                    };
                    eprintln!(
                        "[{}/{total}] rep {rep}: {}",
                        samples.len() + 1,
                        describe(&sample)
                    );
                    samples.push(sample);
                }
            }
        }
        // Starts alone, interleaved too: the runs give too few for a stable median.
        let only_start = Plan {
            calls: 0,
            warmup: 0,
            ..options.plan(1)
        };
        let stdio = options.transports.contains(&Transport::Stdio);
        for _ in 0..if stdio { options.cold_starts } else { 0 } {
            for &server in &options.servers {
                let outcome = Transport::Stdio
                    .run(&server.command(&bin_dir, Transport::Stdio), &only_start)
                    .map_err(|e| format!("{} (cold start): {e}", server.name()))?;
                cold_starts.push(ColdStart {
                    server: server.name(),
                    transport: Transport::Stdio,
                    ms: outcome.cold_start.as_secs_f64() * 1_000.0,
                });
            }
        }
    }
    let allocations = if options.transports.contains(&Transport::Stdio) {
        allocations(options)?
    } else {
        Vec::new()
    };
    let sessions = if options.transports.iter().any(|t| t.is_http()) {
        session_costs(options)?
    } else {
        Vec::new()
    };
    let builds = build_costs(options)?;
    drop(niceness);
    let results = Results {
        date: today(),
        machine: format!("{machine_before} Load average after: {}.", load_average()),
        workload: workload_description(options),
        samples,
        cold_starts,
        allocations,
        sessions,
        builds,
    };
    let markdown = results.to_markdown();
    print!("{markdown}");
    let out = match &options.out {
        Some(dir) => dir.clone(),
        None => target_dir()?.join("mcp-bench"),
    };
    std::fs::create_dir_all(&out)?;
    let stamp = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let report = out.join(format!("report-{stamp}.md"));
    std::fs::write(&report, &markdown)?;
    let raw = out.join(format!("runs-{stamp}.csv"));
    std::fs::write(&raw, csv(&results.samples, &results.builds))?;
    eprintln!("mcp-load: wrote {} and {}", report.display(), raw.display());
    Ok(())
}

/// What every run did, for the report.
fn workload_description(options: &Options) -> String {
    let stdio = options.transports.contains(&Transport::Stdio);
    let http = options.transports.iter().any(|t| t.is_http());
    let mut text = format!(
        "Each run: spawn the server, `initialize` (cold start = spawn → its response), {} \
         unmeasured calls, then {} measured ones with every reply checked, then {} and wait \
         for it to exit cleanly.",
        options.warmup,
        options.calls,
        match (stdio, http) {
            (true, true) => "close its input (stdio) or send SIGTERM (HTTP)",
            (true, false) => "close its input",
            _ => "send SIGTERM",
        }
    );
    if http {
        text.push_str(
            " Over Streamable HTTP (`--http 127.0.0.1:0`) the calls are spread over as many \
             keep-alive HTTP/1.1 connections as there are calls in flight, one driver thread and \
             one call in flight each; in the 2025-11-25 workloads each connection first opens a \
             session (`initialize`, `notifications/initialized`), in the 2026-07-28 ones every \
             request stands alone with its `_meta` and headers (cold start = spawn → \
             `server/discover` answered); `echo + progress` calls `echo_progress` with a \
             `progressToken` (one progress notification, then the response: an SSE stream); \
             latency is request written → response body read to its end. Over stdio ours and \
             rmcp are built without HTTP (ours-http-build: with it), over HTTP with it; the \
             HTTP ceiling is bare hyper answering one JSON body per POST.",
        );
    }
    let _ = write!(
        text,
        " {} repetitions, servers and transports interleaved; each figure is the median over \
         the repetitions.",
        options.reps
    );
    if stdio {
        let _ = write!(
            text,
            " Stdio cold starts also count {} extra starts per server and repetition.",
            options.cold_starts
        );
    }
    text
}

fn measure(
    label: &'static str,
    command: &ServerCommand,
    transport: Transport,
    plan: &Plan,
) -> Result<Sample> {
    if !command.program.exists() {
        return Err(format!(
            "{} does not exist: run mcp-load through cargo (cargo run --release -p mcp-bench \
             --bin mcp-load -- …), which builds the servers, or build them as it does",
            command.program.display()
        )
        .into());
    }
    let outcome = transport
        .run(command, plan)
        .map_err(|e| format!("{label} ({} in flight): {e}", plan.concurrency))?;
    let mut latencies = outcome.calls.latencies_ns;
    latencies.sort_unstable();
    let us = |q| stats::quantile_of_sorted(&latencies, q) as f64 / 1_000.0;
    Ok(Sample {
        server: label,
        transport,
        bodies: outcome.bodies.describe(),
        lost_progress: outcome.bodies.lost_progress,
        concurrency: plan.concurrency,
        calls_per_s: plan.calls as f64 / outcome.calls.wall.as_secs_f64(),
        p50_us: us(0.50),
        p99_us: us(0.99),
        cold_start_ms: outcome.cold_start.as_secs_f64() * 1_000.0,
        peak_rss_mib: outcome.peak_rss_kib as f64 / 1024.0,
        peak_anon_mib: outcome.peak_anon_kib as f64 / 1024.0,
        rep: 0,
    })
}

fn describe(s: &Sample) -> String {
    let lost = match s.lost_progress {
        0 => String::new(),
        n => format!("  {n} calls lost their progress notification"),
    };
    format!(
        "{:<12} {:<23} {:<5} c={:<2} {:>8.0} calls/s  p50 {:>7.1} µs  p99 {:>7.1} µs  cold start {:>6.2} ms  peak RSS {:>5.1} MiB (anonymous {:>5.2}){lost}",
        s.server,
        s.transport.name(),
        s.bodies,
        s.concurrency,
        s.calls_per_s,
        s.p50_us,
        s.p99_us,
        s.cold_start_ms,
        s.peak_rss_mib,
        s.peak_anon_mib
    )
}

/// What an idle Streamable HTTP session costs ours (`session-server`, which lets one client
/// hold that many) and rmcp-default (whose sessions are unbounded), after 100 sessions that
/// warm the server up.
fn session_costs(options: &Options) -> Result<Vec<report::SessionCost>> {
    const BASELINE: usize = 100;
    let bin_dir = bin_dir()?;
    let servers = [
        (
            "ours",
            ServerCommand {
                program: bin_dir.join(format!("session-server{}", std::env::consts::EXE_SUFFIX)),
                args: Vec::new(),
            },
        ),
        (
            Server::RmcpDefault.name(),
            Server::RmcpDefault.command(&bin_dir, Transport::Http(run::HttpWorkload::ALL[0])),
        ),
    ];
    servers
        .into_iter()
        .map(|(server, command)| {
            let (before, after) = http::idle_sessions(&command, BASELINE, options.sessions)
                .map_err(|e| format!("{server} (idle sessions): {e}"))?;
            Ok(report::SessionCost {
                server,
                sessions: options.sessions,
                idle_kib: before,
                kib_per_session: after.saturating_sub(before) as f64
                    / options.sessions.max(1) as f64,
            })
        })
        .collect()
}

/// Allocations per stdio `echo` call of `alloc-server`, built without and with `http`.
fn allocations(options: &Options) -> Result<Vec<allocs::PerCall>> {
    let bin_dir = bin_dir()?;
    let name = format!("alloc-server{}", std::env::consts::EXE_SUFFIX);
    [
        ("stdio-only", bin_dir.join(run::STDIO_ONLY_DIR).join(&name)),
        ("http", bin_dir.join(&name)),
    ]
    .into_iter()
    .map(|(build, program)| {
        let command = ServerCommand {
            program,
            args: Vec::new(),
        };
        allocs::measure(build, &command, options.warmup, options.calls)
            .map_err(|e| format!("counting allocations ({build} build): {e}").into())
    })
    .collect()
}

fn build_costs(options: &Options) -> Result<Vec<BuildCost>> {
    if options.build_reps == 0 || options.builds.is_empty() {
        return Ok(Vec::new());
    }
    let work_dir = target_dir()?.join("mcp-bench").join("build-cost");
    eprintln!(
        "mcp-load: builds ({}) under {}, {} of each per framework",
        options
            .builds
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
        work_dir.display(),
        options.build_reps
    );
    build_cost::measure(
        &cargo(),
        &work_dir,
        &options.builds,
        options.build_reps,
        &mut |b| {
            eprintln!(
                "  {:<11} {:<5} {:>6.1} s  {:>6.2} MiB",
                b.kind.name(),
                b.framework.name(),
                b.seconds,
                b.binary_bytes as f64 / (1024.0 * 1024.0)
            );
        },
    )
}

/// This process's niceness, changed for as long as the value lives. Threads and processes
/// started meanwhile inherit it (on Linux the niceness of the main thread is changed, and
/// only the main thread starts others while it is set).
struct Niceness {
    restore: Option<i32>,
}

impl Niceness {
    fn set(nice: Option<i32>) -> Result<Niceness> {
        let Some(nice) = nice else {
            return Ok(Niceness { restore: None });
        };
        let before = current_niceness().unwrap_or(0);
        renice(nice)?;
        Ok(Niceness {
            restore: Some(before),
        })
    }
}

impl Drop for Niceness {
    fn drop(&mut self) {
        if let Some(before) = self.restore
            && let Err(e) = renice(before)
        {
            eprintln!("mcp-load: {e}");
        }
    }
}

/// The niceness of this process's main thread.
fn current_niceness() -> Option<i32> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses; niceness is field 19.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(16)?.parse().ok()
}

fn renice(nice: i32) -> Result<()> {
    let status = Command::new("renice")
        .args([
            "-n",
            &nice.to_string(),
            "-p",
            &std::process::id().to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run renice: {e}"))?;
    if !status.success() {
        return Err(format!("renice -n {nice} failed ({status}); -20 needs root").into());
    }
    Ok(())
}

fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| "cargo".into(), PathBuf::from)
}

/// Builds the server binaries beside this one, when run through cargo (which says so in
/// `CARGO`); otherwise they must be built already. First ours and rmcp without the `http`
/// feature, copied into [`run::STDIO_ONLY_DIR`] for the stdio runs, then everything with the
/// default features (the same target directory keeps both sets of artifacts, so neither
/// build undoes the other's work).
fn build_servers() -> Result<()> {
    if std::env::var_os("CARGO").is_none() {
        return Ok(());
    }
    let bin_dir = bin_dir()?;
    if !bin_dir.ends_with("release") {
        return Err(
            "run mcp-load in release mode: cargo run --release -p mcp-bench --bin mcp-load -- all"
                .into(),
        );
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo_build = |args: &[&str]| -> Result<()> {
        let status = Command::new(cargo())
            .args(["build", "--release", "--manifest-path"])
            .arg(&manifest)
            .args(args)
            .status()?;
        if !status.success() {
            return Err(format!("building the servers failed ({status})").into());
        }
        Ok(())
    };
    let stdio_only = ["bench-server", "rmcp-server", "alloc-server"];
    let mut args = vec!["--no-default-features"];
    for binary in stdio_only {
        args.extend(["--bin", binary]);
    }
    cargo_build(&args)?;
    let stdio_dir = bin_dir.join(run::STDIO_ONLY_DIR);
    std::fs::create_dir_all(&stdio_dir)?;
    for binary in stdio_only {
        let name = format!("{binary}{}", std::env::consts::EXE_SUFFIX);
        // Copied, not linked: the next build replaces the original.
        let to = stdio_dir.join(&name);
        let _ = std::fs::remove_file(&to);
        std::fs::copy(bin_dir.join(&name), &to)
            .map_err(|e| format!("copying {name} to {}: {e}", stdio_dir.display()))?;
    }
    cargo_build(&["--bins"])
}

/// The directory of this executable, where cargo puts the server binaries too.
fn bin_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(exe
        .parent()
        .ok_or("the executable has no directory")?
        .to_path_buf())
}

/// The cargo target directory this executable was built into.
fn target_dir() -> Result<PathBuf> {
    let bin_dir = bin_dir()?;
    Ok(bin_dir
        .parent()
        .ok_or("the executable is not in a cargo target directory")?
        .to_path_buf())
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_owned())
        .unwrap_or_else(|_| std::env::consts::OS.into());
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let niceness = current_niceness().map_or_else(|| "unknown".into(), |n| n.to_string());
    format!(
        "Source: {}. Machine: {cores} cores ({cpu}), Linux {kernel}, {rustc}. Niceness of the \
         runs: {niceness}. Load average before: {}.",
        source_revision(),
        load_average()
    )
}

/// The workspace's commit, and whether its working tree differs from it.
fn source_revision() -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&workspace)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("commit {commit} with changes"),
            _ => format!("commit {commit}"),
        },
        None => "not a git checkout".into(),
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn csv(samples: &[Sample], builds: &[BuildCost]) -> String {
    let mut out = String::from(
        "kind,server,transport,bodies,lost_progress,in_flight,calls_per_s,p50_us,p99_us,cold_start_ms,peak_rss_mib,peak_anon_mib,build_s,binary_bytes,rep\n",
    );
    for s in samples {
        out.push_str(&format!(
            "run,{},{},{},{},{},{:.1},{:.2},{:.2},{:.3},{:.2},{:.3},,,{}\n",
            s.server,
            s.transport.name(),
            s.bodies,
            s.lost_progress,
            s.concurrency,
            s.calls_per_s,
            s.p50_us,
            s.p99_us,
            s.cold_start_ms,
            s.peak_rss_mib,
            s.peak_anon_mib,
            s.rep
        ));
    }
    for b in builds {
        out.push_str(&format!(
            "build-{},{},,,,,,,,,,{:.2},{},\n",
            b.kind.name(),
            b.framework.name(),
            b.seconds,
            b.binary_bytes
        ));
    }
    out
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
