//! `cargo mcp dev`: build and run the current crate's server, rebuild and restart it when one
//! of the package's files changes, and (with `--inspector`) start the MCP Inspector on it.
//!
//! Over stdio, `cargo mcp dev` stands between the client and the server: it passes every
//! line through, remembers the client's `initialize`, and after a restart replays it to the
//! new server and tells the client that the tools, prompts and resources changed. Over HTTP
//! the server listens itself, and is restarted on the same address.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use clap::ArgMatches;
use mcp_runtime::tokio::{
    self,
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, Command},
    sync::mpsc,
};
use serde_json::{Value, json};

use crate::crate_build::{self, Built, Selection};
use crate::{Failure, Outcome};

/// How often the package's files are looked at.
const POLL: Duration = Duration::from_millis(400);

/// What the main loop of `dev` reacts to.
enum Event {
    FromClient(String),
    ClientClosed,
    FromServer(u64, String),
    /// The server closed its output: it exited, or is about to.
    ServerExited(u64),
    Changed,
    Built(Result<Built, Failure>),
    Stop,
}

/// `cargo mcp dev`.
pub(crate) async fn run(m: &ArgMatches) -> Outcome {
    let selection = Selection::from_matches(m);
    let args: Vec<String> = m
        .get_many::<String>("args")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let http = m.get_one::<String>("http").cloned();
    if m.get_flag("inspector") {
        return with_inspector(&selection, http, &args).await;
    }
    let built = crate_build::build(Path::new("."), &selection, false).await?;
    let (events, receiver) = mpsc::unbounded_channel();
    watch(built.package_dir.clone(), events.clone());
    stop_on_signals(events.clone());
    match http {
        Some(addr) => serve_http(built, selection, addr, args, events, receiver).await,
        None => proxy_stdio(built, selection, args, events, receiver).await,
    }
}

fn note(message: impl std::fmt::Display) {
    eprintln!("cargo mcp dev: {message}");
}

/// Sends `Changed` whenever a file of the package (outside `target/` and hidden folders)
/// is added, removed or modified.
fn watch(dir: PathBuf, events: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        let mut last = fingerprint(&dir);
        let mut ticks = tokio::time::interval(POLL);
        loop {
            ticks.tick().await;
            let now = fingerprint(&dir);
            if now != last {
                last = now;
                if events.send(Event::Changed).is_err() {
                    return;
                }
            }
        }
    });
}

fn fingerprint(dir: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut entries = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                stack.push(entry.path());
            } else {
                let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                entries.push((entry.path(), modified, metadata.len()));
            }
        }
    }
    entries.sort();
    entries.hash(&mut hasher);
    hasher.finish()
}

/// Sends `Stop` on Ctrl-C (and SIGTERM on Unix).
fn stop_on_signals(events: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut terminate = signal(SignalKind::terminate()).ok();
            let terminated = async {
                match terminate.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = terminated => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        let _ = events.send(Event::Stop);
    });
}

/// The builds of one `dev` run: at most one at a time, and one more when files changed
/// while it ran.
struct Builds {
    selection: Selection,
    events: mpsc::UnboundedSender<Event>,
    building: bool,
    dirty: bool,
}

impl Builds {
    fn new(selection: &Selection, events: &mpsc::UnboundedSender<Event>) -> Builds {
        Builds {
            selection: selection.clone(),
            events: events.clone(),
            building: false,
            dirty: false,
        }
    }

    /// A file changed: build now, or after the build under way.
    fn changed(&mut self) {
        if self.building {
            self.dirty = true;
        } else {
            self.start();
        }
    }

    /// A build ended: whether its outcome is the one to act on (false when files changed
    /// meanwhile, and another build has started).
    fn finished(&mut self) -> bool {
        self.building = false;
        if std::mem::take(&mut self.dirty) {
            self.start();
            return false;
        }
        true
    }

    /// Starts a build in the background; its outcome arrives as `Built`.
    fn start(&mut self) {
        self.building = true;
        let selection = self.selection.clone();
        let events = self.events.clone();
        note("a file changed: rebuilding");
        tokio::spawn(async move {
            let built = crate_build::build(Path::new("."), &selection, false).await;
            let _ = events.send(Event::Built(built));
        });
    }
}

/// A server process, numbered so that lines of one already replaced are dropped.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
}

fn spawn(
    built: &Built,
    args: &[String],
    generation: u64,
    piped: bool,
    events: &mpsc::UnboundedSender<Event>,
) -> Result<Running, Failure> {
    let mut command = Command::new(&built.executable);
    command
        .args(args)
        .kill_on_drop(true)
        .stderr(Stdio::inherit());
    if piped {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
    } else {
        command.stdin(Stdio::null()).stdout(Stdio::inherit());
    }
    let mut child = command.spawn().map_err(|e| {
        Failure::Connection(format!("cannot start {}: {e}", built.executable.display()))
    })?;
    let stdin = child.stdin.take();
    if let Some(stdout) = child.stdout.take() {
        let events = events.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if events.send(Event::FromServer(generation, line)).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::ServerExited(generation));
        });
    }
    Ok(Running { child, stdin })
}

async fn stop(running: Option<Running>) {
    if let Some(mut running) = running {
        drop(running.stdin.take());
        let _ = running.child.start_kill();
        let _ = running.child.wait().await;
    }
}

/// The JSON-RPC error answered to a request the server will not answer.
fn error_answer(id: &Value, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}}).to_string()
}

struct StdioState {
    running: Option<Running>,
    generation: u64,
    /// Ids of the client's requests the current server has not answered.
    pending: HashSet<String>,
    /// The client's `initialize` request, replayed to every new server.
    initialize: Option<Value>,
    initialized: bool,
    /// The id of the replayed `initialize` while its answer is awaited.
    replaying: Option<String>,
    /// What the client sent while a replay was in progress.
    held: Vec<String>,
}

/// One line to the client. Standard output is written directly: this process does nothing
/// else meanwhile worth the wait.
fn write_line(out: &mut std::io::Stdout, line: &str) {
    use std::io::Write as _;
    let mut out = out.lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

async fn to_server(state: &mut StdioState, line: &str) -> bool {
    let Some(stdin) = state.running.as_mut().and_then(|r| r.stdin.as_mut()) else {
        return false;
    };
    stdin.write_all(line.as_bytes()).await.is_ok()
        && stdin.write_all(b"\n").await.is_ok()
        && stdin.flush().await.is_ok()
}

/// Answers every request in flight with an error naming `why`.
fn fail_pending(state: &mut StdioState, out: &mut std::io::Stdout, why: &str) {
    for id in state.pending.drain() {
        let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
        write_line(out, &error_answer(&id, why));
    }
}

async fn proxy_stdio(
    built: Built,
    selection: Selection,
    args: Vec<String>,
    events: mpsc::UnboundedSender<Event>,
    mut receiver: mpsc::UnboundedReceiver<Event>,
) -> Outcome {
    {
        // Standard input is read on a thread of its own: a blocking read.
        let events = events.clone();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if events.send(Event::FromClient(line)).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::ClientClosed);
        });
    }
    let mut out = std::io::stdout();
    let mut state = StdioState {
        running: None,
        generation: 0,
        pending: HashSet::new(),
        initialize: None,
        initialized: false,
        replaying: None,
        held: Vec::new(),
    };
    state.running = Some(spawn(&built, &args, 0, true, &events)?);
    note(format!(
        "serving {} over standard input and output; watching {} for changes",
        built.name,
        built.package_dir.display()
    ));
    let mut builds = Builds::new(&selection, &events);
    while let Some(event) = receiver.recv().await {
        match event {
            Event::FromClient(line) => {
                if state.replaying.is_some() {
                    state.held.push(line);
                    continue;
                }
                from_client(&mut state, &mut out, line).await;
            }
            Event::FromServer(generation, line) => {
                if generation != state.generation {
                    continue;
                }
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                let is_answer = message.get("method").is_none() && message.get("id").is_some();
                if is_answer {
                    let id = message["id"].to_string();
                    if state.replaying.as_deref() == Some(id.as_str()) {
                        state.replaying = None;
                        finish_replay(&mut state, &mut out, &message["result"]["capabilities"])
                            .await;
                        continue;
                    }
                    state.pending.remove(&id);
                }
                write_line(&mut out, &line);
            }
            Event::ServerExited(generation) => {
                if generation != state.generation {
                    continue;
                }
                let Some(mut running) = state.running.take() else {
                    continue;
                };
                drop(running.stdin.take());
                let how = match tokio::time::timeout(Duration::from_secs(2), running.child.wait())
                    .await
                {
                    Ok(Ok(status)) => status.to_string(),
                    Ok(Err(e)) => e.to_string(),
                    Err(_) => {
                        let _ = running.child.start_kill();
                        let _ = running.child.wait().await;
                        "it closed its output, and was stopped".to_owned()
                    }
                };
                note(format!(
                    "the server exited ({how}); it restarts after the next change"
                ));
                state.replaying = None;
                fail_pending(&mut state, &mut out, &format!("the server exited ({how})"));
                for line in std::mem::take(&mut state.held) {
                    from_client(&mut state, &mut out, line).await;
                }
            }
            Event::Changed => builds.changed(),
            Event::Built(result) => {
                if !builds.finished() {
                    continue;
                }
                let built = match result {
                    Ok(built) => built,
                    Err(failure) => {
                        note(format!(
                            "{}; the running server is left as it is",
                            failure.message()
                        ));
                        continue;
                    }
                };
                if built.fresh && state.running.is_some() {
                    note("nothing to rebuild");
                    continue;
                }
                stop(state.running.take()).await;
                fail_pending(
                    &mut state,
                    &mut out,
                    "the server was restarted by `cargo mcp dev` after a change; send the request again",
                );
                state.generation += 1;
                match spawn(&built, &args, state.generation, true, &events) {
                    Ok(running) => state.running = Some(running),
                    Err(failure) => {
                        note(failure.message());
                        continue;
                    }
                }
                note(format!("restarted {}", built.name));
                if let Some(initialize) = state.initialize.clone() {
                    let id = format!("cargo-mcp-dev-{}", state.generation);
                    let mut request = initialize;
                    request["id"] = Value::String(id.clone());
                    state.replaying = Some(Value::String(id).to_string());
                    to_server(&mut state, &request.to_string()).await;
                }
            }
            Event::ClientClosed | Event::Stop => break,
        }
    }
    stop(state.running.take()).await;
    Ok(())
}

async fn from_client(state: &mut StdioState, out: &mut std::io::Stdout, line: String) {
    let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
    let method = message["method"].as_str();
    let id = message.get("id").filter(|_| method.is_some());
    match method {
        Some("initialize") => state.initialize = Some(message.clone()),
        Some("notifications/initialized") => state.initialized = true,
        _ => {}
    }
    if state.running.is_none() {
        if let Some(id) = id {
            write_line(
                out,
                &error_answer(
                    id,
                    "the server is not running (it exited): fix it and save a file to rebuild it",
                ),
            );
        }
        return;
    }
    if let Some(id) = id {
        state.pending.insert(id.to_string());
    }
    if !to_server(state, &line).await
        && let Some(id) = id
    {
        state.pending.remove(&id.to_string());
        write_line(
            out,
            &error_answer(id, "the server stopped reading its input"),
        );
    }
}

/// After the new server answered the replayed `initialize`: `initialized` to it, the news
/// to the client (for each kind of item the new server offers), then what the client sent
/// meanwhile.
async fn finish_replay(state: &mut StdioState, out: &mut std::io::Stdout, capabilities: &Value) {
    if state.initialized {
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        to_server(state, &initialized.to_string()).await;
    }
    for kind in ["tools", "prompts", "resources"] {
        if capabilities.get(kind).is_none() {
            continue;
        }
        let changed =
            json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed")});
        write_line(out, &changed.to_string());
    }
    for line in std::mem::take(&mut state.held) {
        from_client(state, out, line).await;
    }
}

/// Waits until something listens at `addr`, or the server exits, or 30 s pass.
async fn listening(addr: &str, running: &mut Running) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return true;
        }
        if let Ok(Some(_)) = running.child.try_wait() {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn start_http(
    built: &Built,
    args: &[String],
    addr: &str,
    generation: u64,
    events: &mpsc::UnboundedSender<Event>,
) -> Option<Running> {
    let mut full = vec!["--http".to_owned(), addr.to_owned()];
    full.extend(args.iter().cloned());
    let mut running = match spawn(built, &full, generation, false, events) {
        Ok(running) => running,
        Err(failure) => {
            note(failure.message());
            return None;
        }
    };
    if listening(addr, &mut running).await {
        note(format!("serving http://{addr}/mcp"));
    } else {
        note(format!(
            "the server does not listen at {addr}: its `main` must serve with `serve()`, which reads `--http ADDR` (`serve_stdio()` does not)"
        ));
    }
    Some(running)
}

async fn serve_http(
    built: Built,
    selection: Selection,
    addr: String,
    args: Vec<String>,
    events: mpsc::UnboundedSender<Event>,
    mut receiver: mpsc::UnboundedReceiver<Event>,
) -> Outcome {
    let mut generation = 0;
    let mut running = start_http(&built, &args, &addr, generation, &events).await;
    note(format!(
        "watching {} for changes",
        built.package_dir.display()
    ));
    let mut builds = Builds::new(&selection, &events);
    while let Some(event) = receiver.recv().await {
        match event {
            Event::Changed => builds.changed(),
            Event::Built(result) => {
                if !builds.finished() {
                    continue;
                }
                match result {
                    Ok(built) if built.fresh && running.is_some() => note("nothing to rebuild"),
                    Ok(built) => {
                        note(format!("restarting {}", built.name));
                        stop(running.take()).await;
                        generation += 1;
                        running = start_http(&built, &args, &addr, generation, &events).await;
                    }
                    Err(failure) => {
                        note(format!(
                            "{}; the running server is left as it is",
                            failure.message()
                        ));
                    }
                }
            }
            Event::Stop => break,
            _ => {}
        }
    }
    stop(running).await;
    Ok(())
}

/// The Inspector's command: `MCP_INSPECTOR` split at white space, or `npx`.
fn inspector_command() -> Command {
    let configured = std::env::var("MCP_INSPECTOR")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let words: Vec<String> = match configured {
        Some(command) => command.split_whitespace().map(str::to_owned).collect(),
        None => ["npx", "-y", "@modelcontextprotocol/inspector@2"]
            .map(str::to_owned)
            .to_vec(),
    };
    let mut command = Command::new(&words[0]);
    command.args(&words[1..]);
    command
}

/// `dev --inspector`: the Inspector's web UI, connected to the server over HTTP, or running
/// `cargo mcp dev` itself as its stdio server.
async fn with_inspector(selection: &Selection, http: Option<String>, args: &[String]) -> Outcome {
    // Build once here, so that errors show in this terminal before the Inspector starts.
    let built = crate_build::build(Path::new("."), selection, false).await?;
    let mut inspector = inspector_command();
    inspector.arg("--web");
    let (events, mut receiver) = mpsc::unbounded_channel();
    stop_on_signals(events.clone());
    let mut server = None;
    match &http {
        Some(addr) => {
            server = start_http(&built, args, addr, 0, &events).await;
            inspector.args(["--transport", "http", "--server-url"]);
            inspector.arg(format!("http://{addr}/mcp"));
        }
        None => {
            let me = std::env::current_exe()
                .map_err(|e| Failure::Failed(format!("cannot find this program: {e}")))?;
            inspector.arg(me).args(["mcp", "dev"]);
            if let Some(package) = &selection.package {
                inspector.args(["--package", package]);
            }
            if let Some(bin) = &selection.bin {
                inspector.args(["--bin", bin]);
            }
            if !args.is_empty() {
                inspector.arg("--").args(args);
            }
        }
    }
    inspector.stdin(Stdio::null()).kill_on_drop(true);
    #[cfg(unix)]
    inspector.process_group(0);
    let mut inspector = inspector.spawn().map_err(|e| {
        Failure::Connection(format!(
            "cannot start the MCP Inspector ({e}): install Node.js 22 (for `npx`), or set MCP_INSPECTOR to its command"
        ))
    })?;
    note(format!(
        "the MCP Inspector is starting ({}); stop both with Ctrl-C",
        if http.is_some() {
            "connected over HTTP"
        } else {
            "it runs `cargo mcp dev` as its server"
        }
    ));
    if http.is_some() {
        watch(built.package_dir.clone(), events.clone());
    }
    let mut generation = 0;
    let mut builds = Builds::new(selection, &events);
    let outcome = loop {
        tokio::select! {
            status = inspector.wait() => {
                break match status {
                    Ok(status) if status.success() => Ok(()),
                    Ok(status) => Err(Failure::Connection(format!("the MCP Inspector exited ({status})"))),
                    Err(e) => Err(Failure::Connection(format!("the MCP Inspector: {e}"))),
                };
            }
            event = receiver.recv() => match event {
                Some(Event::Changed) => builds.changed(),
                Some(Event::Built(result)) => {
                    if !builds.finished() {
                        continue;
                    }
                    match (result, &http) {
                        (Ok(built), Some(addr)) if !built.fresh || server.is_none() => {
                            note(format!("restarting {}", built.name));
                            stop(server.take()).await;
                            generation += 1;
                            server = start_http(&built, args, addr, generation, &events).await;
                        }
                        (Err(failure), _) => note(format!("{}; the running server is left as it is", failure.message())),
                        _ => {}
                    }
                }
                Some(Event::Stop) | None => break Ok(()),
                Some(_) => {}
            }
        }
    };
    stop_group(&mut inspector).await;
    stop(server).await;
    outcome
}

/// Ends the Inspector and everything it started (its own process group).
async fn stop_group(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) with a negative pid signals the process group the Inspector leads.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGTERM);
        }
        if tokio::time::timeout(Duration::from_secs(3), child.wait())
            .await
            .is_ok()
        {
            // SAFETY: as above; whatever of the group is left.
            unsafe {
                libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
            }
            return;
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
}
