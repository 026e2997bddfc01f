//! The scheduler `#[mcp_runtime::main]` picks in a build with `http` (as every example
//! ships): one thread when the server serves standard input and output, Tokio's
//! multi-threaded scheduler for HTTP, whether the command line asks for it (`--http ADDR`,
//! read by `serve()`) or `main` calls `serve_http` itself. Read from the threads of the real
//! processes (`/proc/PID/task`).

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use mcp_tests::http::{HttpServer, Request};
use mcp_tests::{StdioServer, TIMEOUT, workspace_binary};
use serde_json::json;

/// The names of a process's threads (their `comm`, at most 15 bytes: Tokio's workers show
/// as `tokio-rt-worker`).
fn threads(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|task| {
            let comm = task.unwrap().path().join("comm");
            std::fs::read_to_string(comm)
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .collect();
    names.sort();
    names
}

fn workers(names: &[String]) -> usize {
    names.iter().filter(|n| n.starts_with("tokio-r")).count()
}

/// The names of a process's threads once `settled` holds for them, or after [`TIMEOUT`]: a
/// new thread names itself once it runs, and shows its process's name until then.
fn threads_once(pid: u32, settled: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let names = threads(pid);
        if settled(&names) || std::time::Instant::now() > deadline {
            return names;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A child process killed (and reaped) when the test ends, also when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn quickstart() -> &'static Path {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| workspace_binary("quickstart"))
}

fn call_add(addr: std::net::SocketAddr, body: serde_json::Value) -> serde_json::Value {
    Request::new(addr, "POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "add")
        .json(&body)
        .send()
        .json()
}

#[test]
fn a_build_with_http_serves_stdio_on_one_thread() {
    let mut server = StdioServer::spawn(quickstart());
    server.initialize("2025-11-25");
    server.request(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert_eq!(server.response(2)["result"]["content"][0]["text"], "5");
    let names = threads(server.pid());
    assert_eq!(
        workers(&names),
        0,
        "no scheduler threads for stdio: {names:?}"
    );
}

#[test]
fn the_http_flag_gets_the_multi_threaded_scheduler() {
    let server = HttpServer::spawn(quickstart(), &[]);
    let names = threads_once(server.pid(), |names| workers(names) == cores());
    assert_eq!(workers(&names), cores(), "one worker per core: {names:?}");
}

#[test]
fn serve_http_without_the_flag_moves_to_a_multi_threaded_scheduler() {
    let program = env!("CARGO_BIN_EXE_http-direct");
    let mut child = KillOnDrop(
        Command::new(program)
            .env("MCP_TEST_ADDR", "127.0.0.1:0")
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut child.0;
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[server] {line}");
            let _ = tx.send(line);
        }
    });
    let addr = loop {
        let line = rx
            .recv_timeout(TIMEOUT)
            .expect("the server says where it listens");
        if let Some(rest) = line.strip_prefix("mcp: serving Streamable HTTP on http://") {
            break rest.trim_end_matches("/mcp").parse().unwrap();
        }
    };
    // The scheduler's threads start with it, before the server listens.
    let names = threads_once(child.id(), |names| {
        workers(names) == cores() && names.iter().any(|n| n == "mcp-http")
    });
    assert!(names.iter().any(|n| n == "mcp-http"), "{names:?}");
    assert_eq!(workers(&names), cores(), "{names:?}");
    let answer = call_add(
        addr,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "add", "arguments": {"a": 2, "b": 3},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
    // SIGTERM stops it as it stops any HTTP server: gracefully, with success.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = std::time::Instant::now() + TIMEOUT;
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no exit after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit}");
}
