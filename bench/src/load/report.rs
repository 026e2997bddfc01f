//! The Markdown report: medians per server, transport and concurrency, cold starts, ratios of
//! ours to each peer, the build cost, and each target of the benchmark issue with whether it
//! is met.

use std::fmt::Write as _;

use crate::allocs::PerCall;
use crate::build_cost::{BuildCost, BuildKind, Framework};
use crate::run::{Call, HttpWorkload, Server, Transport};
use crate::stats::median;

/// The summary of one run.
pub struct Sample {
    /// The server's name ([`Server::name`] in `all`).
    pub server: &'static str,
    pub transport: Transport,
    /// How the responses came over HTTP ("JSON", "SSE", "mixed"; "–" for stdio).
    pub bodies: &'static str,
    /// Calls that asked for progress and were answered without their notification.
    pub lost_progress: usize,
    pub concurrency: usize,
    pub calls_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub cold_start_ms: f64,
    pub peak_rss_mib: f64,
    /// The most anonymous memory (heap and stacks) it held: the peak RSS without the pages
    /// of the program's file and the shared libraries.
    pub peak_anon_mib: f64,
    /// The repetition the run belongs to (from 1; 0 outside `all`): ratios pair the runs of
    /// one repetition, which ran minutes apart at most.
    pub rep: usize,
}

/// The resident memory of idle Streamable HTTP sessions.
pub struct SessionCost {
    pub server: &'static str,
    /// Sessions opened after the warm-up.
    pub sessions: usize,
    /// The server's resident set size after the warm-up's sessions, KiB.
    pub idle_kib: u64,
    pub kib_per_session: f64,
}

impl SessionCost {
    pub fn describe(&self) -> String {
        format!(
            "{}: {:.2} KiB per idle HTTP session ({} sessions over {:.1} MiB)",
            self.server,
            self.kib_per_session,
            self.sessions,
            self.idle_kib as f64 / 1024.0
        )
    }
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
    /// Heap allocations per stdio `echo` call, per build of ours.
    pub allocations: Vec<PerCall>,
    /// What idle HTTP sessions cost.
    pub sessions: Vec<SessionCost>,
    pub builds: Vec<BuildCost>,
}

/// What a run measured; lower is better for every measure but throughput.
#[derive(Clone, Copy)]
enum Measure {
    CallsPerS,
    P50,
    P99,
    PeakRss,
    PeakAnon,
}

impl Measure {
    fn of(self, s: &Sample) -> f64 {
        match self {
            Measure::CallsPerS => s.calls_per_s,
            Measure::P50 => s.p50_us,
            Measure::P99 => s.p99_us,
            Measure::PeakRss => s.peak_rss_mib,
            Measure::PeakAnon => s.peak_anon_mib,
        }
    }
}

/// Ours ÷ a peer, for one row of a ratio table.
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

    /// The servers measured over stdio (`http` false) or over HTTP, in order.
    fn servers(&self, http: bool) -> Vec<Server> {
        Server::ALL
            .into_iter()
            .filter(|&server| {
                self.samples
                    .iter()
                    .any(|s| s.transport.is_http() == http && s.server == server.name())
            })
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

    /// The median over the repetitions of `ours ÷ peer` in one measure, each ratio from the
    /// two servers' runs in the same repetition (runs minutes apart drift together; runs of
    /// different repetitions may not).
    fn paired(
        &self,
        measure: Measure,
        transport: Transport,
        ours: Server,
        peer: Server,
        concurrency: usize,
    ) -> Option<f64> {
        let of = |server: Server, rep: usize| {
            median(
                self.samples
                    .iter()
                    .filter(|s| {
                        s.transport == transport
                            && s.server == server.name()
                            && s.concurrency == concurrency
                            && s.rep == rep
                    })
                    .map(|s| measure.of(s)),
            )
        };
        let mut reps: Vec<usize> = self.samples.iter().map(|s| s.rep).collect();
        reps.sort_unstable();
        reps.dedup();
        median(
            reps.into_iter()
                .filter_map(|r| ratio(of(ours, r), of(peer, r))),
        )
    }

    /// The median cold start of one server over stdio or over HTTP (every HTTP workload
    /// together), over its measured runs and its extra starts, and how many starts that is.
    fn cold_start(&self, http: bool, server: Server) -> (Option<f64>, usize) {
        let starts: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.transport.is_http() == http && s.server == server.name())
            .map(|s| s.cold_start_ms)
            .chain(
                self.cold_starts
                    .iter()
                    .filter(|c| c.transport.is_http() == http && c.server == server.name())
                    .map(|c| c.ms),
            )
            .collect();
        let n = starts.len();
        (median(starts), n)
    }

    fn build_median(
        &self,
        kind: BuildKind,
        framework: Framework,
        f: impl Fn(&BuildCost) -> f64,
    ) -> Option<f64> {
        median(
            self.builds
                .iter()
                .filter(|b| b.kind == kind && b.framework == framework)
                .map(f),
        )
    }

    /// The HTTP workloads measured, in order.
    fn http_workloads(&self) -> Vec<HttpWorkload> {
        self.transports()
            .into_iter()
            .filter_map(|t| match t {
                Transport::Http(w) => Some(w),
                Transport::Stdio => None,
            })
            .collect()
    }

    /// How the responses of one server's runs came ("JSON", "SSE", or each seen, joined).
    fn bodies(&self, transport: Transport, server: Server, concurrency: usize) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for s in &self.samples {
            if s.transport == transport
                && s.server == server.name()
                && s.concurrency == concurrency
                && !seen.contains(&s.bodies)
            {
                seen.push(s.bodies);
            }
        }
        if seen.is_empty() {
            "–".into()
        } else {
            seen.join(", ")
        }
    }

    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "### Measured {}\n", self.date);
        for line in [&self.machine, &self.workload] {
            if !line.is_empty() {
                let _ = writeln!(md, "{line}\n");
            }
        }
        if self.transports().contains(&Transport::Stdio) {
            self.write_medians(&mut md, Transport::Stdio);
            self.write_ratios(&mut md, Transport::Stdio);
        }
        if !self.http_workloads().is_empty() {
            self.write_http_medians(&mut md);
            self.write_http_ratios(&mut md);
        }
        self.write_allocations(&mut md);
        self.write_sessions(&mut md);
        self.write_builds(&mut md);
        self.write_targets(&mut md);
        md
    }

    fn write_medians(&self, md: &mut String, transport: Transport) {
        let _ = writeln!(md, "#### {}: medians\n", transport.name());
        md.push_str(
            "| server | in flight | calls/s | p50 µs | p99 µs | peak RSS MiB | of it anonymous |\n",
        );
        md.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
        for c in self.concurrencies() {
            for server in self.servers(transport.is_http()) {
                let m = |measure| self.median(measure, transport, server, Some(c));
                let _ = writeln!(
                    md,
                    "| {} | {c} | {} | {} | {} | {} | {} |",
                    server.name(),
                    fmt(m(Measure::CallsPerS), 0),
                    fmt(m(Measure::P50), 1),
                    fmt(m(Measure::P99), 1),
                    fmt(m(Measure::PeakRss), 1),
                    fmt(m(Measure::PeakAnon), 2),
                );
            }
        }
        md.push_str("\n| server | cold start ms | starts |\n|---|---:|---:|\n");
        for server in self.servers(transport.is_http()) {
            let (ms, n) = self.cold_start(transport.is_http(), server);
            let _ = writeln!(md, "| {} | {} | {n} |", server.name(), fmt(ms, 2));
        }
        md.push('\n');
    }

    fn write_ratios(&self, md: &mut String, transport: Transport) {
        let servers = self.servers(transport.is_http());
        let peers: Vec<Server> = servers.iter().copied().filter(|&s| !s.is_ours()).collect();
        if peers.is_empty() || !servers.contains(&Server::Ours) {
            return;
        }
        let _ = writeln!(
            md,
            "#### {}: ours ÷ peer (calls/s: higher is better for ours; the rest: lower is)\n",
            transport.name()
        );
        let per_run = |measure: Measure, c: usize| -> Figure<'_> {
            Box::new(move |peer| self.paired(measure, transport, Server::Ours, peer, c))
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
            Box::new(move |peer| {
                let start = |server| self.cold_start(transport.is_http(), server).0;
                ratio(start(Server::Ours), start(peer))
            }),
        ));
        for c in self.concurrencies() {
            rows.push((
                format!("peak RSS, {c} in flight"),
                per_run(Measure::PeakRss, c),
            ));
            rows.push((
                format!("peak anonymous memory, {c} in flight"),
                per_run(Measure::PeakAnon, c),
            ));
        }
        write_ratio_rows(md, &peers, rows);
    }

    fn write_http_medians(&self, md: &mut String) {
        md.push_str("#### Streamable HTTP: medians\n\n");
        md.push_str(
            "| workload | server | in flight | responses | calls/s | p50 µs | p99 µs | peak RSS MiB \
             | of it anonymous | progress lost |\n",
        );
        md.push_str("|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for workload in self.http_workloads() {
            let transport = Transport::Http(workload);
            for c in self.concurrencies() {
                for server in self.servers(true) {
                    let m = |measure| self.median(measure, transport, server, Some(c));
                    if m(Measure::CallsPerS).is_none() {
                        continue;
                    }
                    let lost: usize = self
                        .samples
                        .iter()
                        .filter(|s| {
                            s.transport == transport
                                && s.server == server.name()
                                && s.concurrency == c
                        })
                        .map(|s| s.lost_progress)
                        .sum();
                    let lost = match (workload.call, lost) {
                        (Call::Echo, _) => "–".to_owned(),
                        (_, 0) => "0".to_owned(),
                        (_, n) => format!("**{n}**"),
                    };
                    let _ = writeln!(
                        md,
                        "| {} | {} | {c} | {} | {} | {} | {} | {} | {} | {lost} |",
                        workload.label(),
                        server.name(),
                        self.bodies(transport, server, c),
                        fmt(m(Measure::CallsPerS), 0),
                        fmt(m(Measure::P50), 1),
                        fmt(m(Measure::P99), 1),
                        fmt(m(Measure::PeakRss), 1),
                        fmt(m(Measure::PeakAnon), 2),
                    );
                }
            }
        }
        md.push_str(
            "\n| server | HTTP cold start ms (spawn → listening → first response) | starts |\n\
             |---|---:|---:|\n",
        );
        for server in self.servers(true) {
            let (ms, n) = self.cold_start(true, server);
            let _ = writeln!(md, "| {} | {} | {n} |", server.name(), fmt(ms, 2));
        }
        md.push('\n');
    }

    fn write_http_ratios(&self, md: &mut String) {
        let servers = self.servers(true);
        let peers: Vec<Server> = servers.iter().copied().filter(|&s| !s.is_ours()).collect();
        if peers.is_empty() || !servers.contains(&Server::Ours) {
            return;
        }
        md.push_str(
            "#### Streamable HTTP: ours ÷ peer (calls/s: higher is better for ours; the rest: \
             lower is)\n\n",
        );
        let per_run = |measure: Measure, transport: Transport, c: usize| -> Figure<'_> {
            Box::new(move |peer| self.paired(measure, transport, Server::Ours, peer, c))
        };
        let mut rows: Vec<(String, Figure<'_>)> = Vec::new();
        for workload in self.http_workloads() {
            let t = Transport::Http(workload);
            let label = workload.label();
            for c in self.concurrencies() {
                rows.push((
                    format!("{label}: calls/s, {c} in flight"),
                    per_run(Measure::CallsPerS, t, c),
                ));
                rows.push((
                    format!("{label}: p50 latency, {c} in flight"),
                    per_run(Measure::P50, t, c),
                ));
                rows.push((
                    format!("{label}: p99 latency, {c} in flight"),
                    per_run(Measure::P99, t, c),
                ));
            }
        }
        rows.push((
            "cold start".into(),
            Box::new(move |peer| {
                let start = |server| self.cold_start(true, server).0;
                ratio(start(Server::Ours), start(peer))
            }),
        ));
        if let Some(&c) = self.concurrencies().last() {
            for workload in self.http_workloads() {
                rows.push((
                    format!("{}: peak RSS, {c} in flight", workload.label()),
                    per_run(Measure::PeakRss, Transport::Http(workload), c),
                ));
                rows.push((
                    format!("{}: peak anonymous memory, {c} in flight", workload.label()),
                    per_run(Measure::PeakAnon, Transport::Http(workload), c),
                ));
            }
        }
        write_ratio_rows(md, &peers, rows);
    }

    fn write_allocations(&self, md: &mut String) {
        if self.allocations.is_empty() {
            return;
        }
        md.push_str(
            "#### Heap allocations per stdio `echo` call (ours, one call in flight)\n\n\
             | build | allocations | bytes asked for |\n|---|---:|---:|\n",
        );
        for a in &self.allocations {
            let _ = writeln!(
                md,
                "| {} | {:.1} | {:.0} |",
                a.build, a.allocations, a.bytes
            );
        }
        md.push('\n');
    }

    fn write_sessions(&self, md: &mut String) {
        if self.sessions.is_empty() {
            return;
        }
        md.push_str(
            "#### Idle Streamable HTTP sessions (2025-11-25, after 100 that warm up)\n\n\
             | server | sessions | RSS before, MiB | KiB per session |\n|---|---:|---:|---:|\n",
        );
        for s in &self.sessions {
            let _ = writeln!(
                md,
                "| {} | {} | {:.1} | {:.2} |",
                s.server,
                s.sessions,
                s.idle_kib as f64 / 1024.0,
                s.kib_per_session
            );
        }
        md.push('\n');
    }

    fn write_builds(&self, md: &mut String) {
        if self.builds.is_empty() {
            return;
        }
        md.push_str("#### Build cost\n\n");
        md.push_str(
            "| build | ours s | rmcp s | ours ÷ rmcp | ours MiB | rmcp MiB | ours ÷ rmcp | builds |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for kind in BuildKind::ALL {
            let n = self.builds.iter().filter(|b| b.kind == kind).count();
            if n == 0 {
                continue;
            }
            let seconds = |f| self.build_median(kind, f, |b| b.seconds);
            let mib = |f| self.build_median(kind, f, |b| b.binary_bytes as f64 / MIB);
            let (ours_mib, rmcp_mib, size_ratio) = if kind == BuildKind::Incremental {
                // A dev-profile binary's size says little.
                ("–".into(), "–".into(), "–".into())
            } else {
                (
                    fmt(mib(Framework::Ours), 2),
                    fmt(mib(Framework::Rmcp), 2),
                    fmt(ratio(mib(Framework::Ours), mib(Framework::Rmcp)), 2),
                )
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {ours_mib} | {rmcp_mib} | {size_ratio} | {n} |",
                kind.label(),
                fmt(seconds(Framework::Ours), 1),
                fmt(seconds(Framework::Rmcp), 1),
                fmt(ratio(seconds(Framework::Ours), seconds(Framework::Rmcp)), 2),
            );
        }
        md.push('\n');
    }

    fn write_targets(&self, md: &mut String) {
        let stdio = Transport::Stdio;
        let calls = |ours, peer, c| self.paired(Measure::CallsPerS, stdio, ours, peer, c);
        let highest = self.concurrencies().last().copied();
        let rss = |server| self.median(Measure::PeakRss, stdio, server, highest);
        let start = |server| self.cold_start(false, server).0;
        let build = |f: fn(&BuildCost) -> f64| {
            ratio(
                self.build_median(BuildKind::Stdio, Framework::Ours, f),
                self.build_median(BuildKind::Stdio, Framework::Rmcp, f),
            )
        };
        let mut targets: Vec<(String, Option<f64>, Goal)> = vec![
            (
                "stdio, 1 in flight: calls/s, ours ÷ ceiling".into(),
                calls(Server::Ours, Server::Ceiling, 1),
                Goal::AtLeast(0.9),
            ),
            (
                "stdio, 1 in flight: calls/s, ours-http-build ÷ ceiling".into(),
                calls(Server::OursHttpBuild, Server::Ceiling, 1),
                Goal::AtLeast(0.9),
            ),
            (
                "stdio, 1 in flight: calls/s, ours-http-build ÷ ours (stdio-only build)".into(),
                calls(Server::OursHttpBuild, Server::Ours, 1),
                Goal::AtLeast(0.95),
            ),
            (
                "stdio, 16 in flight: calls/s, ours ÷ rmcp-fast".into(),
                calls(Server::Ours, Server::RmcpFast, 16),
                Goal::AtLeast(1.5),
            ),
        ];
        let leaner_rmcp = lower(rss(Server::RmcpDefault), rss(Server::RmcpFast));
        for ours in [Server::Ours, Server::OursHttpBuild] {
            targets.push((
                format!(
                    "stdio peak RSS (most in flight): {} ÷ the leaner rmcp",
                    ours.name()
                ),
                ratio(rss(ours), leaner_rmcp),
                Goal::AtMost(0.5),
            ));
        }
        for workload in self.http_workloads() {
            let transport = Transport::Http(workload);
            if workload.call != Call::Echo {
                continue;
            }
            for c in self.concurrencies() {
                targets.push((
                    format!(
                        "HTTP {}, {c} in flight: calls/s, ours ÷ ceiling",
                        workload.label()
                    ),
                    self.paired(
                        Measure::CallsPerS,
                        transport,
                        Server::Ours,
                        Server::Ceiling,
                        c,
                    ),
                    Goal::AtLeast(0.85),
                ));
            }
            let rss = |server| self.median(Measure::PeakRss, transport, server, highest);
            targets.push((
                format!(
                    "HTTP {} peak RSS (most in flight): ours ÷ the leaner rmcp",
                    workload.label()
                ),
                ratio(
                    rss(Server::Ours),
                    lower(rss(Server::RmcpDefault), rss(Server::RmcpFast)),
                ),
                Goal::AtMost(0.5),
            ));
        }
        if let Some(ours) = self.sessions.iter().find(|s| s.server == "ours") {
            targets.push((
                format!(
                    "idle HTTP session ({} of them): ours, KiB each",
                    ours.sessions
                ),
                Some(ours.kib_per_session),
                Goal::AtMost(2.0),
            ));
        }
        targets.extend([
            (
                "cold start: ours ÷ the faster rmcp".into(),
                ratio(
                    start(Server::Ours),
                    lower(start(Server::RmcpDefault), start(Server::RmcpFast)),
                ),
                Goal::AtMost(1.0),
            ),
            (
                "clean release build time: ours ÷ rmcp".into(),
                build(|b| b.seconds),
                Goal::AtMost(0.5),
            ),
            (
                "binary size: ours ÷ rmcp".into(),
                build(|b| b.binary_bytes as f64),
                Goal::AtMost(0.5),
            ),
            (
                "one-tool rebuild of the 50-tool crate: ours ÷ rmcp".into(),
                ratio(
                    self.build_median(BuildKind::Incremental, Framework::Ours, |b| b.seconds),
                    self.build_median(BuildKind::Incremental, Framework::Rmcp, |b| b.seconds),
                ),
                Goal::AtMost(0.75),
            ),
        ]);
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

/// One row per measure, one column per peer: ours ÷ that peer (the median of the
/// repetitions' ratios, or for cold starts the ratio of the medians).
fn write_ratio_rows(md: &mut String, peers: &[Server], rows: Vec<(String, Figure<'_>)>) {
    md.push_str("| measure |");
    for peer in peers {
        let _ = write!(md, " ours ÷ {} |", peer.name());
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(peers.len()));
    md.push('\n');
    for (label, figure) in rows {
        let _ = write!(md, "| {label} |");
        for &peer in peers {
            let _ = write!(md, " {} |", fmt(figure(peer), 2));
        }
        md.push('\n');
    }
    md.push('\n');
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
