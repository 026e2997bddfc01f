//! The Markdown report: medians per server and concurrency, cold starts, ratios of ours to
//! each peer, the build cost, and each target of the benchmark issue with whether it is met.

use std::fmt::Write as _;

use crate::build_cost::{BuildCost, Framework};
use crate::run::{Server, Transport};
use crate::stats::median;

/// The summary of one run.
pub struct Sample {
    /// The server's name ([`Server::name`] in `all`).
    pub server: &'static str,
    pub transport: Transport,
    pub concurrency: usize,
    pub calls_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub cold_start_ms: f64,
    pub peak_rss_mib: f64,
}

/// One start of a server that only timed spawn → `initialize` response.
pub struct ColdStart {
    pub server: &'static str,
    pub transport: Transport,
    pub ms: f64,
}

/// Everything one `all` measured, and where.
pub struct Results {
    pub date: String,
    pub machine: String,
    pub workload: String,
    pub samples: Vec<Sample>,
    /// Starts beyond those of the measured runs, which count too.
    pub cold_starts: Vec<ColdStart>,
    pub builds: Vec<BuildCost>,
}

/// What a run measured; lower is better for every measure but throughput.
#[derive(Clone, Copy)]
enum Measure {
    CallsPerS,
    P50,
    P99,
    PeakRss,
}

impl Measure {
    fn of(self, s: &Sample) -> f64 {
        match self {
            Measure::CallsPerS => s.calls_per_s,
            Measure::P50 => s.p50_us,
            Measure::P99 => s.p99_us,
            Measure::PeakRss => s.peak_rss_mib,
        }
    }
}

type Figure<'a> = Box<dyn Fn(Server) -> Option<f64> + 'a>;

impl Results {
    fn transports(&self) -> Vec<Transport> {
        let mut t: Vec<Transport> = Vec::new();
        for s in &self.samples {
            if !t.contains(&s.transport) {
                t.push(s.transport);
            }
        }
        t
    }

    fn concurrencies(&self) -> Vec<usize> {
        let mut c: Vec<usize> = self.samples.iter().map(|s| s.concurrency).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    fn servers(&self) -> Vec<Server> {
        Server::ALL
            .into_iter()
            .filter(|&server| self.samples.iter().any(|s| s.server == server.name()))
            .collect()
    }

    /// The median of a measure over the runs of one server at one concurrency.
    fn median(
        &self,
        measure: Measure,
        transport: Transport,
        server: Server,
        concurrency: Option<usize>,
    ) -> Option<f64> {
        median(
            self.samples
                .iter()
                .filter(|s| {
                    s.transport == transport
                        && s.server == server.name()
                        && concurrency.is_none_or(|c| s.concurrency == c)
                })
                .map(|s| measure.of(s)),
        )
    }

    /// The median cold start of one server, over its measured runs and its extra starts, and
    /// how many starts that is.
    fn cold_start(&self, transport: Transport, server: Server) -> (Option<f64>, usize) {
        let starts: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.transport == transport && s.server == server.name())
            .map(|s| s.cold_start_ms)
            .chain(
                self.cold_starts
                    .iter()
                    .filter(|c| c.transport == transport && c.server == server.name())
                    .map(|c| c.ms),
            )
            .collect();
        let n = starts.len();
        (median(starts), n)
    }

    fn build_median(&self, framework: Framework, f: impl Fn(&BuildCost) -> f64) -> Option<f64> {
        median(
            self.builds
                .iter()
                .filter(|b| b.framework == framework)
                .map(f),
        )
    }

    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "### Measured {}\n", self.date);
        for line in [&self.machine, &self.workload] {
            if !line.is_empty() {
                let _ = writeln!(md, "{line}\n");
            }
        }
        for transport in self.transports() {
            self.write_medians(&mut md, transport);
            self.write_ratios(&mut md, transport);
        }
        self.write_builds(&mut md);
        self.write_targets(&mut md);
        md
    }

    fn write_medians(&self, md: &mut String, transport: Transport) {
        let _ = writeln!(md, "#### {}: medians\n", transport.name());
        md.push_str("| server | in flight | calls/s | p50 µs | p99 µs | peak RSS MiB |\n");
        md.push_str("|---|---:|---:|---:|---:|---:|\n");
        for c in self.concurrencies() {
            for server in self.servers() {
                let m = |measure| self.median(measure, transport, server, Some(c));
                let _ = writeln!(
                    md,
                    "| {} | {c} | {} | {} | {} | {} |",
                    server.name(),
                    fmt(m(Measure::CallsPerS), 0),
                    fmt(m(Measure::P50), 1),
                    fmt(m(Measure::P99), 1),
                    fmt(m(Measure::PeakRss), 1),
                );
            }
        }
        md.push_str("\n| server | cold start ms | starts |\n|---|---:|---:|\n");
        for server in self.servers() {
            let (ms, n) = self.cold_start(transport, server);
            let _ = writeln!(md, "| {} | {} | {n} |", server.name(), fmt(ms, 2));
        }
        md.push('\n');
    }

    fn write_ratios(&self, md: &mut String, transport: Transport) {
        let servers = self.servers();
        let peers: Vec<Server> = servers
            .iter()
            .copied()
            .filter(|&s| s != Server::Ours)
            .collect();
        if peers.is_empty() || !servers.contains(&Server::Ours) {
            return;
        }
        let _ = writeln!(
            md,
            "#### {}: ours ÷ peer (calls/s: higher is better for ours; the rest: lower is)\n",
            transport.name()
        );
        md.push_str("| measure |");
        for peer in &peers {
            let _ = write!(md, " ours ÷ {} |", peer.name());
        }
        md.push_str("\n|---|");
        md.push_str(&"---:|".repeat(peers.len()));
        md.push('\n');
        let per_run = |measure: Measure, c: usize| -> Figure<'_> {
            Box::new(move |server| self.median(measure, transport, server, Some(c)))
        };
        let mut rows: Vec<(String, Figure<'_>)> = Vec::new();
        for c in self.concurrencies() {
            rows.push((
                format!("calls/s, {c} in flight"),
                per_run(Measure::CallsPerS, c),
            ));
            rows.push((
                format!("p50 latency, {c} in flight"),
                per_run(Measure::P50, c),
            ));
            rows.push((
                format!("p99 latency, {c} in flight"),
                per_run(Measure::P99, c),
            ));
        }
        rows.push((
            "cold start".into(),
            Box::new(move |server| self.cold_start(transport, server).0),
        ));
        for c in self.concurrencies() {
            rows.push((
                format!("peak RSS, {c} in flight"),
                per_run(Measure::PeakRss, c),
            ));
        }
        for (label, figure) in rows {
            let _ = write!(md, "| {label} |");
            for &peer in &peers {
                let _ = write!(
                    md,
                    " {} |",
                    fmt(ratio(figure(Server::Ours), figure(peer)), 2)
                );
            }
            md.push('\n');
        }
        md.push('\n');
    }

    fn write_builds(&self, md: &mut String) {
        if self.builds.is_empty() {
            return;
        }
        md.push_str("#### Clean release build of the stdio echo/add server\n\n");
        md.push_str("| framework | build s | binary MiB |\n|---|---:|---:|\n");
        for framework in Framework::ALL {
            let seconds = self.build_median(framework, |b| b.seconds);
            let mib = self.build_median(framework, |b| b.binary_bytes as f64 / MIB);
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                framework.name(),
                fmt(seconds, 1),
                fmt(mib, 2)
            );
        }
        md.push('\n');
    }

    fn write_targets(&self, md: &mut String) {
        let stdio = Transport::Stdio;
        let calls = |server, c| self.median(Measure::CallsPerS, stdio, server, Some(c));
        let highest = self.concurrencies().last().copied();
        let rss = |server| self.median(Measure::PeakRss, stdio, server, highest);
        let start = |server| self.cold_start(stdio, server).0;
        let build = |f: fn(&BuildCost) -> f64| {
            ratio(
                self.build_median(Framework::Ours, f),
                self.build_median(Framework::Rmcp, f),
            )
        };
        let targets: [(&str, Option<f64>, Goal); 6] = [
            (
                "stdio, 1 in flight: calls/s, ours ÷ ceiling",
                ratio(calls(Server::Ours, 1), calls(Server::Ceiling, 1)),
                Goal::AtLeast(0.85),
            ),
            (
                "stdio, 16 in flight: calls/s, ours ÷ rmcp-fast",
                ratio(calls(Server::Ours, 16), calls(Server::RmcpFast, 16)),
                Goal::AtLeast(1.5),
            ),
            (
                "peak RSS (most in flight): ours ÷ the leaner rmcp",
                ratio(
                    rss(Server::Ours),
                    lower(rss(Server::RmcpDefault), rss(Server::RmcpFast)),
                ),
                Goal::AtMost(0.5),
            ),
            (
                "cold start: ours ÷ the faster rmcp",
                ratio(
                    start(Server::Ours),
                    lower(start(Server::RmcpDefault), start(Server::RmcpFast)),
                ),
                Goal::AtMost(1.0),
            ),
            (
                "clean release build time: ours ÷ rmcp",
                build(|b| b.seconds),
                Goal::AtMost(0.5),
            ),
            (
                "binary size: ours ÷ rmcp",
                build(|b| b.binary_bytes as f64),
                Goal::AtMost(0.5),
            ),
        ];
        md.push_str("#### Targets\n\n| target | measured | goal | met |\n|---|---:|---:|---|\n");
        for (label, value, goal) in targets {
            let met = match value {
                None => "not measured",
                Some(v) if goal.met(v) => "yes",
                Some(_) => "**no**",
            };
            let _ = writeln!(md, "| {label} | {} | {goal} | {met} |", fmt(value, 2));
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

#[derive(Clone, Copy)]
enum Goal {
    AtLeast(f64),
    AtMost(f64),
}

impl Goal {
    fn met(self, v: f64) -> bool {
        match self {
            Goal::AtLeast(g) => v >= g,
            Goal::AtMost(g) => v <= g,
        }
    }
}

impl std::fmt::Display for Goal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Goal::AtLeast(g) => write!(f, "≥ {g}"),
            Goal::AtMost(g) => write!(f, "≤ {g}"),
        }
    }
}

/// The lower of two measurements, or the one there is.
fn lower(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn ratio(ours: Option<f64>, peer: Option<f64>) -> Option<f64> {
    match (ours, peer) {
        (Some(o), Some(p)) if p > 0.0 => Some(o / p),
        _ => None,
    }
}

fn fmt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.decimals$}"))
}
