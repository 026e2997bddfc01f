//! Replicas sharing Redis, as deployments run them: a real `redis-server` on a loopback port
//! of its own, server processes started with `MCP_REDIS_URL`, and `nginx` in front of them
//! (round-robin, buffering off, as the book's deployment chapter configures it).
//!
//! Needs `redis-server` and `nginx`: the system's (Debian's packages `redis-server` and
//! `nginx`), or the copies `./run-tests` unpacks under `target/tools/services` when the
//! system has none (`tests/cluster/prepare-services`).
//!
//! Both run as process groups of their own ([`ProcessGroup`]): nginx is stopped with SIGTERM,
//! on which its master ends its workers and then itself, and whatever is left in the group
//! is killed after that, so no worker outlives a test.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::group::ProcessGroup;
use crate::http::HttpServer;
use crate::{TIMEOUT, workspace_root};

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until `port` accepts connections, or fails the test when `helper` exits first or
/// nothing listens within the timeout.
pub(crate) fn wait_for_port(port: u16, what: &str, helper: &ProcessGroup) {
    let deadline = Instant::now() + TIMEOUT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            !helper.has_exited(),
            "{what} exited before it listened on {port}"
        );
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Where `program` is: on the `PATH`, in `/usr/sbin` (Debian's nginx), which is not on
/// every user's `PATH`, or among the copies `./run-tests` prepared.
pub(crate) fn require(program: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .chain([
            PathBuf::from("/usr/sbin"),
            PathBuf::from("/usr/bin"),
            workspace_root().join("target/tools/services/bin"),
        ])
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file());
    on_path.unwrap_or_else(|| {
        panic!(
            "`{program}` is not installed: `./run-tests` prepares Debian's under target/tools/services (tests/cluster/prepare-services); or `apt-get install {program}`"
        )
    })
}

/// A `redis-server` of the test's own, without persistence.
pub struct Redis {
    program: PathBuf,
    process: Option<ProcessGroup>,
    pub port: u16,
}

impl Redis {
    pub fn start() -> Redis {
        let program = require("redis-server");
        let port = free_port();
        let mut redis = Redis {
            program,
            process: None,
            port,
        };
        redis.spawn();
        redis
    }

    fn spawn(&mut self) {
        let mut command = Command::new(&self.program);
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let process = ProcessGroup::spawn(&mut command, libc::SIGKILL).expect("start redis-server");
        wait_for_port(self.port, "redis-server", &process);
        self.process = Some(process);
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops Redis at once, as a crash would (SIGKILL: nothing of it is saved anyway);
    /// requests that need it fail until [`Redis::restart`].
    pub fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.stop(libc::SIGKILL, Duration::ZERO);
        }
    }

    /// Starts Redis again on the same port (empty: nothing was persisted).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Server processes sharing one Redis.
pub struct Replicas {
    pub redis: Redis,
    pub servers: Vec<Option<HttpServer>>,
}

impl Replicas {
    /// Starts Redis and `count` replicas of `program` serving HTTP.
    pub fn start(program: &Path, count: usize) -> Replicas {
        Replicas::start_with(program, count, &[], &[])
    }

    /// Starts Redis and `count` replicas of `program --http … ARGS…` serving HTTP, with `env`
    /// besides the shared Redis.
    pub fn start_with(
        program: &Path,
        count: usize,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &str)],
    ) -> Replicas {
        let redis = Redis::start();
        let url = redis.url();
        let mut env = env.to_vec();
        env.extend([
            ("MCP_REDIS_URL", url.as_str()),
            ("MCP_STATE_KEY", "a key every replica of the test shares"),
        ]);
        let servers = (0..count)
            .map(|_| Some(HttpServer::spawn_with_args(program, args, &env)))
            .collect();
        Replicas { redis, servers }
    }

    /// The replica `i`.
    pub fn replica(&self, i: usize) -> &HttpServer {
        self.servers[i]
            .as_ref()
            .expect("a replica that was not killed")
    }

    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.servers
            .iter()
            .flatten()
            .map(HttpServer::addr)
            .collect()
    }

    /// Kills the replica `i` at once (SIGKILL), as a crash would.
    pub fn kill(&mut self, i: usize) {
        if let Some(server) = self.servers[i].take() {
            drop(server);
        }
    }
}

/// `nginx` in front of some backends, round-robin.
pub struct Nginx {
    process: ProcessGroup,
    pub port: u16,
    dir: PathBuf,
}

impl Nginx {
    pub fn start(backends: &[SocketAddr]) -> Nginx {
        let nginx = require("nginx");
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("mcp-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(dir.join("logs")).expect("nginx's folder");
        let upstream: String = backends
            .iter()
            .map(|a| format!("        server {a};\n"))
            .collect();
        let conf = format!(
            include_str!("nginx.conf.in"),
            upstream = upstream,
            port = port,
            dir = dir.display()
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("write nginx.conf");
        let mut command = Command::new(nginx);
        command
            // Its workers inherit this: none of them holds a folder of the checkout.
            .current_dir(&dir)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf_path)
            .arg("-e")
            .arg(dir.join("logs/error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // SIGTERM: nginx's fast shutdown, which ends the workers before the master.
        let process = ProcessGroup::spawn(&mut command, libc::SIGTERM).expect("start nginx");
        wait_for_port(port, "nginx", &process);
        Nginx { process, port, dir }
    }

    /// The master process's id.
    pub fn pid(&self) -> u32 {
        self.process.id().expect("nginx is running")
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // A SIGKILL to the master alone would leave its workers running, orphaned.
        self.process.stop(libc::SIGTERM, TIMEOUT);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
