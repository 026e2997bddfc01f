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

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
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

/// A TCP proxy in front of Redis that can silence the pub/sub subscriptions made through
/// it: such a connection stays open and what its client sends still reaches Redis, but
/// nothing Redis sends on it reaches the client any more, as when a connection is left
/// half-open behind a NAT or a proxy that lost its state. Every other connection (commands,
/// `PUBLISH`) passes untouched, and so does every subscription made after the silence.
pub struct SilencingProxy {
    pub port: u16,
    shared: Arc<ProxyShared>,
}

#[derive(Default)]
struct ProxyShared {
    stop: AtomicBool,
    links: Mutex<Vec<Link>>,
    /// How many subscriptions Redis confirmed.
    confirmed: Mutex<usize>,
    changed: Condvar,
}

/// One client's connection, and the proxy's to Redis for it.
struct Link {
    client: TcpStream,
    redis: TcpStream,
    /// The client subscribed on this connection.
    subscribed: Arc<AtomicBool>,
    silenced: Arc<AtomicBool>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `needle` is in what was read, counting the end of the last read (a command or a
/// reply may be split between two reads); keeps the end of `chunk` for the next read.
fn seen_across(tail: &mut Vec<u8>, chunk: &[u8], needle: &[u8]) -> bool {
    tail.extend_from_slice(chunk);
    let found = tail.windows(needle.len()).any(|w| w == needle);
    let keep_from = tail.len().saturating_sub(needle.len());
    tail.drain(..keep_from);
    found
}

/// Copies what `from` sends to `to`, each read passed on when `look` says so, until either
/// side closes; then closes both.
fn copy(from: &TcpStream, to: &TcpStream, mut look: impl FnMut(&[u8]) -> bool) {
    use std::io::{Read, Write};
    let (mut reader, mut writer) = (from, to);
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if look(&buffer[..n]) && writer.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

impl SilencingProxy {
    /// Listens on a loopback port of its own and passes every connection on to Redis on
    /// `redis_port`.
    pub fn start(redis_port: u16) -> SilencingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the proxy's port");
        let port = listener.local_addr().expect("the proxy's address").port();
        let shared = Arc::new(ProxyShared::default());
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stop.load(Ordering::Acquire) {
                    break;
                }
                let Ok(client) = client else { continue };
                match TcpStream::connect(("127.0.0.1", redis_port)) {
                    Ok(redis) => SilencingProxy::pass(&accepting, client, redis),
                    Err(_) => {
                        let _ = client.shutdown(Shutdown::Both);
                    }
                }
            }
        });
        SilencingProxy { port, shared }
    }

    /// Copies both ways between `client` and `redis` until either side closes.
    fn pass(shared: &Arc<ProxyShared>, client: TcpStream, redis: TcpStream) {
        let clone = |stream: &TcpStream| stream.try_clone().expect("a handle on a connection");
        let link = Link {
            client: clone(&client),
            redis: clone(&redis),
            subscribed: Arc::default(),
            silenced: Arc::default(),
        };
        let subscribed = Arc::clone(&link.subscribed);
        let marking = Arc::clone(&link.subscribed);
        let silenced = Arc::clone(&link.silenced);
        locked(&shared.links).push(link);
        // The client's commands, on to Redis; a SUBSCRIBE marks the connection.
        let (up_from, up_to) = (clone(&client), clone(&redis));
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            copy(&up_from, &up_to, |chunk| {
                // Marked before the command goes on, so before Redis can confirm it.
                if !marking.load(Ordering::Acquire)
                    && seen_across(&mut tail, chunk, b"\r\nSUBSCRIBE\r\n")
                {
                    marking.store(true, Ordering::Release);
                }
                true
            });
        });
        // Redis's replies and messages, back to the client unless silenced.
        let shared = Arc::clone(shared);
        std::thread::spawn(move || {
            let (mut tail, mut confirmed) = (Vec::new(), false);
            copy(&redis, &client, |chunk| {
                if silenced.load(Ordering::Acquire) {
                    return false;
                }
                if !confirmed
                    && subscribed.load(Ordering::Acquire)
                    && seen_across(&mut tail, chunk, b"\r\nsubscribe\r\n")
                {
                    confirmed = true;
                    *locked(&shared.confirmed) += 1;
                    shared.changed.notify_all();
                }
                true
            });
        });
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Silences every subscription made so far; returns how many.
    pub fn silence_subscriptions(&self) -> usize {
        let links = locked(&self.shared.links);
        let subscriptions = links
            .iter()
            .filter(|l| l.subscribed.load(Ordering::Acquire));
        subscriptions
            .map(|link| link.silenced.store(true, Ordering::Release))
            .count()
    }

    /// Waits until Redis has confirmed `count` subscriptions made through the proxy, or
    /// fails the test after `within`.
    pub fn wait_for_subscriptions(&self, count: usize, within: Duration) {
        let deadline = Instant::now() + within;
        let mut confirmed = locked(&self.shared.confirmed);
        while *confirmed < count {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{} of {count} subscriptions through the proxy within {within:?}",
                *confirmed
            );
            confirmed = self
                .shared
                .changed
                .wait_timeout(confirmed, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for SilencingProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        for link in locked(&self.shared.links).iter() {
            let _ = link.client.shutdown(Shutdown::Both);
            let _ = link.redis.shutdown(Shutdown::Both);
        }
    }
}
