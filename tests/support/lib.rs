//! Test support: a client that drives a server binary over real pipes, an HTTP/1.1 client
//! for servers over Streamable HTTP ([`http`]), and the official schemas of each protocol
//! revision as validators.

pub mod cluster;
pub mod files;
#[cfg(unix)]
pub mod group;
pub mod http;
#[cfg(target_os = "linux")]
pub mod inotify;
pub mod memory;
pub mod oauth;
pub mod peer;
#[cfg(unix)]
pub mod prometheus;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for any one message before it fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A directory of a test's own under the system's temporary directory, removed with
/// everything in it when dropped (declare it before the server that writes there).
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A fresh, empty directory whose name starts `mcp-{name}-`.
    pub fn new(name: &str) -> Scratch {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mcp-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        Scratch { dir }
    }

    /// The path of `file` in the directory (not created).
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server process spoken to over its standard input and output.
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// While true, nothing more is read from the server's standard output.
    reading_paused: Arc<(Mutex<bool>, Condvar)>,
    /// Messages read while waiting for something else, in arrival order.
    backlog: Vec<Value>,
    /// The server's standard error, line by line, when the test reads it.
    stderr: Option<mpsc::Receiver<String>>,
    /// Lines of standard error read so far.
    stderr_seen: Vec<String>,
}

impl StdioServer {
    /// How many bytes the pipe to the server's standard input holds now.
    #[cfg(target_os = "linux")]
    pub fn stdin_pipe_bytes(&self) -> usize {
        use std::os::fd::AsRawFd as _;
        let stdin = self.stdin.as_ref().expect("standard input is open");
        // SAFETY: F_GETPIPE_SZ only reads the capacity of the pipe the descriptor names.
        let bytes = unsafe { libc::fcntl(stdin.as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(bytes).expect("standard input is a pipe")
    }

    /// Starts a server binary.
    pub fn spawn(program: &Path) -> StdioServer {
        StdioServer::spawn_with_env(program, &[])
    }

    /// Starts a server binary with extra environment variables.
    pub fn spawn_with_env(program: &Path, env: &[(&str, &str)]) -> StdioServer {
        StdioServer::start(program, &[], env, false, false)
    }

    /// Starts a server binary with arguments.
    pub fn spawn_with_args(program: &Path, args: &[&std::ffi::OsStr]) -> StdioServer {
        StdioServer::start(program, args, &[], false, false)
    }

    /// Starts a server binary whose standard error the test reads
    /// ([`StdioServer::wait_for_stderr`]); it is shown on the test's too.
    pub fn spawn_reading_stderr(program: &Path, env: &[(&str, &str)]) -> StdioServer {
        StdioServer::start(program, &[], env, true, false)
    }

    /// Starts a server binary whose standard output is a socket rather than a pipe, as when
    /// a supervisor hands it one end of a socket pair: the server then writes from a thread
    /// of its own.
    #[cfg(unix)]
    pub fn spawn_with_socket_stdout(program: &Path) -> StdioServer {
        StdioServer::start(program, &[], &[], false, true)
    }

    fn start(
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &str)],
        read_stderr: bool,
        socket_stdout: bool,
    ) -> StdioServer {
        #[cfg(unix)]
        let (ours, stdout) = if socket_stdout {
            let (ours, theirs) =
                std::os::unix::net::UnixStream::pair().expect("a socket pair for standard output");
            (Some(ours), Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        } else {
            (None, Stdio::piped())
        };
        #[cfg(not(unix))]
        let (ours, stdout): (Option<std::fs::File>, Stdio) = {
            assert!(!socket_stdout, "a socket for standard output is for Unix");
            (None, Stdio::piped())
        };
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(if read_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stderr = child.stderr.take().map(|stderr| {
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    eprintln!("[server] {line}");
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            lines
        });
        let stdout: Box<dyn std::io::Read + Send> = match ours {
            Some(ours) => Box::new(ours),
            None => Box::new(child.stdout.take().expect("piped stdout")),
        };
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        let reading_paused = Arc::new((Mutex::new(false), Condvar::new()));
        let paused = Arc::clone(&reading_paused);
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                {
                    let (lock, resumed) = &*paused;
                    let mut paused = lock.lock().unwrap_or_else(|p| p.into_inner());
                    while *paused {
                        paused = resumed.wait(paused).unwrap_or_else(|p| p.into_inner());
                    }
                }
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.ends_with('\n') {
                    line.pop();
                    if line.ends_with('\r') {
                        line.pop();
                    }
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioServer {
            child,
            stdin,
            lines,
            reading_paused,
            backlog: Vec::new(),
            stderr,
            stderr_seen: Vec::new(),
        }
    }

    /// Waits for a line of standard error containing `text` (started with
    /// [`StdioServer::spawn_reading_stderr`]), and returns it.
    pub fn wait_for_stderr(&mut self, text: &str) -> String {
        if let Some(line) = self.stderr_seen.iter().find(|l| l.contains(text)) {
            return line.clone();
        }
        let stderr = self
            .stderr
            .as_ref()
            .expect("a server started with spawn_reading_stderr");
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = stderr.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "the server wrote no `{text}` to standard error; it wrote:\n{}",
                    self.stderr_seen.join("\n")
                )
            });
            self.stderr_seen.push(line.clone());
            if line.contains(text) {
                return line;
            }
        }
    }

    /// Every line the server wrote to standard output from now until it closed it, each of
    /// which must be a message (call after [`StdioServer::close_stdin`]).
    pub fn remaining_messages(&mut self) -> Vec<Value> {
        let mut messages = self.take_backlog();
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => messages.push(serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the server wrote a line that is not JSON ({e}): {line:?}")
                })),
                Err(mpsc::RecvTimeoutError::Disconnected) => return messages,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("the server did not close its standard output")
                }
            }
        }
    }

    /// Stops reading the server's standard output, as a client that does not read: once
    /// the pipe is full, the server's writes wait. At most the line being read when this is
    /// called still arrives.
    pub fn pause_reading(&self) {
        *self
            .reading_paused
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = true;
    }

    /// Reads the server's standard output again.
    pub fn resume_reading(&self) {
        let (lock, resumed) = &*self.reading_paused;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = false;
        resumed.notify_all();
    }

    /// Writes raw bytes, exactly as given.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    /// Writes one message and a newline.
    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// Sends a request.
    pub fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}));
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next line the server wrote, parsed; every line must be JSON.
    pub fn recv(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        self.recv_line_within(TIMEOUT)
            .expect("the server answered within the timeout")
    }

    /// The next line within `timeout`, or `None`.
    pub fn recv_line_within(&mut self, timeout: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(timeout).ok()?;
        Some(
            serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line:?}")
            }),
        )
    }

    /// Waits for the response with this id, keeping other messages for later.
    pub fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        if let Some(i) = self
            .backlog
            .iter()
            .position(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .recv_line_within(left)
                .unwrap_or_else(|| panic!("no response to id {id}"));
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
            self.backlog.push(message);
        }
    }

    /// Messages received so far that were not responses taken by [`StdioServer::response`].
    pub fn take_backlog(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.backlog)
    }

    /// Performs the handshake at `version` and sends `notifications/initialized`.
    pub fn initialize(&mut self, version: &str) -> Value {
        self.request(
            0,
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1.0.0"},
            }),
        );
        let response = self.response(0);
        self.notify("notifications/initialized", json!({}));
        response
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes the server's standard input (end of file).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit.
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `command`, which is expected to refuse to start: its exit status and what it wrote
/// to standard error. A program still running after [`TIMEOUT`] is killed and fails the
/// test.
pub fn refusal_of(command: &mut Command) -> (ExitStatus, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    let deadline = std::time::Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the program") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the program did not refuse: it was still running after {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    (status, stderr)
}

/// The path of a binary of another package of this workspace, built on first use.
pub fn workspace_binary(package: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", package])
        .current_dir(workspace_root())
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build -p {package} failed");
    // Test executables live in target/<profile>/deps; binaries one level up.
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    dir.join(format!("{package}{}", std::env::consts::EXE_SUFFIX))
}

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The official JSON Schema of a revision, kept in `tests/spec/`.
pub fn spec_schema(version: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("spec")
        .join(version)
        .join("schema.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("the spec schema is JSON")
}

/// The definition `name` of a revision's schema, as a standalone schema document.
pub fn spec_definition(version: &str, name: &str) -> Value {
    let mut schema = spec_schema(version);
    let defs = if schema.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    assert!(
        schema[defs].get(name).is_some(),
        "{version} defines no `{name}`"
    );
    let obj = schema.as_object_mut().expect("an object");
    if defs == "definitions" {
        // Draft-07 ignores keywords beside `$ref`; wrap so the reference is the whole check.
        obj.insert(
            "allOf".into(),
            json!([{ "$ref": format!("#/definitions/{name}") }]),
        );
    } else {
        obj.insert("$ref".into(), json!(format!("#/$defs/{name}")));
    }
    schema
}

/// Asserts that `value` is valid against the definition `name` of the revision `version`.
pub fn assert_valid(version: &str, name: &str, value: &Value) {
    let schema = spec_definition(version, name);
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("the {version} schema compiles: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {version} `{name}`:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

impl StdioServer {
    /// Performs the handshake declaring client capabilities.
    pub fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        self.request(
            0,
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "e2e", "version": "1.0.0"},
            }),
        );
        let response = self.response(0);
        self.notify("notifications/initialized", json!({}));
        response
    }

    /// Waits for a request from the server with this method, keeping other messages.
    pub fn server_request(&mut self, method: &str) -> Value {
        if let Some(i) = self
            .backlog
            .iter()
            .position(|m| m["method"] == method && m.get("id").is_some())
        {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .recv_line_within(left)
                .unwrap_or_else(|| panic!("the server sent no `{method}` request"));
            if message["method"] == method && message.get("id").is_some() {
                return message;
            }
            self.backlog.push(message);
        }
    }

    /// Answers a request of the server's.
    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers a request of the server's with an error.
    pub fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod leftovers {
    use std::process::Command;

    use super::group::is_alive;
    use super::workspace_root;

    /// Runs `script` with bash through `tests/support/leftovers`: its exit code, what it
    /// printed, and what the checker said.
    fn run_checked(script: &str) -> (Option<i32>, String, String) {
        let output = Command::new(workspace_root().join("tests/support/leftovers"))
            .args(["bash", "-c", script])
            .env("LEFTOVERS_GRACE_SECONDS", "1")
            .output()
            .expect("run tests/support/leftovers");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    #[test]
    fn a_process_left_running_by_the_suite_fails_the_run_and_is_ended() {
        let (code, stdout, stderr) = run_checked("sleep 3600 & echo $!; (sleep 3601 &); exit 0");
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("sleep 3600"), "{stderr}");
        assert!(
            stderr.contains("sleep 3601"),
            "an orphan of an orphan: {stderr}"
        );
        let pid: u32 = stdout.trim().parse().expect("the pid of the sleep");
        assert!(!is_alive(pid), "the leftover was ended");
    }

    #[test]
    fn a_run_that_leaves_nothing_keeps_its_exit_status() {
        assert_eq!(run_checked("sleep 0.1 & wait; exit 0").0, Some(0));
        let (code, _, stderr) = run_checked("exit 3");
        assert_eq!(code, Some(3));
        assert!(!stderr.contains("outlived"), "{stderr}");
    }
}
