//! A server under test as an operating-system process: how it is started, its peak resident
//! memory, a watchdog against hangs, and how it is waited for.

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::Result;

/// How to start one server: a program and its arguments.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ServerCommand {
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }

    /// The command with piped standard input and output (stdio's transport), and its
    /// standard error shown.
    pub fn stdio_command(&self) -> Command {
        let mut command = self.command();
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        command
    }
}

/// A running server: the child process, a thread sampling its peak resident set size, and a
/// watchdog that kills it if a run takes longer than it may.
pub struct ServerProcess {
    child: Arc<Mutex<Child>>,
    pid: u32,
    peak_kib: Arc<AtomicU64>,
    peak_anon_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<()>>,
    disarm: Option<mpsc::Sender<()>>,
}

/// How often the sampler reads the peak resident set size while the server runs.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);

impl ServerProcess {
    /// Starts the process (with its standard streams as `command` sets them) and the watchdog,
    /// which kills it after `deadline`.
    pub fn spawn(mut command: Command, deadline: Duration) -> Result<ServerProcess> {
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))?;
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        let peak_kib = Arc::new(AtomicU64::new(0));
        let peak_anon_kib = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak_kib, peak_anon_kib, stop) = (
                Arc::clone(&peak_kib),
                Arc::clone(&peak_anon_kib),
                Arc::clone(&stop),
            );
            std::thread::Builder::new()
                .name("rss-sampler".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Some(status) = read_status(pid) else {
                            break;
                        };
                        if let Some(kib) = status_kib(&status, PEAK) {
                            peak_kib.fetch_max(kib, Ordering::Relaxed);
                        }
                        if let Some(kib) = status_kib(&status, ANONYMOUS) {
                            peak_anon_kib.fetch_max(kib, Ordering::Relaxed);
                        }
                        std::thread::sleep(SAMPLE_EVERY);
                    }
                })?
        };
        let (disarm, disarmed) = mpsc::channel::<()>();
        {
            let child = Arc::clone(&child);
            std::thread::Builder::new()
                .name("watchdog".into())
                .spawn(move || {
                    if let Err(mpsc::RecvTimeoutError::Timeout) = disarmed.recv_timeout(deadline) {
                        eprintln!(
                            "mcp-load: server {pid} still running after {deadline:?}; killing it"
                        );
                        let _ = lock(&child).kill();
                    }
                })?;
        }
        Ok(ServerProcess {
            child,
            pid,
            peak_kib,
            peak_anon_kib,
            stop,
            sampler: Some(sampler),
            disarm: Some(disarm),
        })
    }

    /// Takes a standard stream of the child, e.g. `|c| c.stdin.take()`.
    pub fn take<T>(&self, f: impl FnOnce(&mut Child) -> Option<T>) -> Result<T> {
        f(&mut lock(&self.child)).ok_or_else(|| "the server's standard stream is not piped".into())
    }

    /// The peak resident set size so far, in KiB: the kernel's high-water mark read now,
    /// or the highest the sampler saw.
    pub fn peak_rss_kib(&self) -> u64 {
        let now = read_peak_rss_kib(self.pid).unwrap_or(0);
        self.peak_kib.fetch_max(now, Ordering::Relaxed).max(now)
    }

    /// The most anonymous memory (heap, stacks: `RssAnon`) the process held so far, in KiB:
    /// what it reads now, or the most the sampler saw. Unlike the peak resident set size, it
    /// leaves out the pages of the program's file and of the shared libraries mapped in.
    pub fn peak_anon_kib(&self) -> u64 {
        let now = read_status(self.pid)
            .and_then(|s| status_kib(&s, ANONYMOUS))
            .unwrap_or(0);
        self.peak_anon_kib
            .fetch_max(now, Ordering::Relaxed)
            .max(now)
    }

    /// The resident set size now, in KiB.
    pub fn rss_kib(&self) -> u64 {
        read_rss_kib(self.pid).unwrap_or(0)
    }

    /// Asks the process to stop with SIGTERM, as a service manager does (the HTTP servers
    /// then finish what is in flight and exit).
    pub fn terminate(&self) -> Result<()> {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .map_err(|e| format!("cannot run kill: {e}"))?;
        if !status.success() {
            return Err(format!("kill -TERM {} failed ({status})", self.pid).into());
        }
        Ok(())
    }

    /// Stops the process with SIGTERM and waits for it; an unclean exit is an error.
    pub fn stop(self) -> Result<()> {
        self.terminate()?;
        let status = self.wait(Duration::from_secs(10))?;
        match describe_exit(status) {
            Some(problem) => Err(format!("{problem} after SIGTERM").into()),
            None => Ok(()),
        }
    }

    /// Waits for the process to exit (after its input was closed), killing it after `grace`.
    pub fn wait(mut self, grace: Duration) -> Result<ExitStatus> {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = lock(&self.child).try_wait()? {
                break status;
            }
            if started.elapsed() > grace {
                let mut child = lock(&self.child);
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the server did not exit within {grace:?} of being told to (its input \
                     closed, or SIGTERM)"
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        self.finish();
        Ok(status)
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(sampler) = self.sampler.take() {
            let _ = sampler.join();
        }
        // Dropping the sender ends the watchdog without killing.
        self.disarm.take();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.disarm.is_some() {
            let mut child = lock(&self.child);
            let _ = child.kill();
            let _ = child.wait();
            drop(child);
            self.finish();
        }
    }
}

fn lock(child: &Mutex<Child>) -> std::sync::MutexGuard<'_, Child> {
    child.lock().unwrap_or_else(|p| p.into_inner())
}

/// `VmHWM` of `/proc/<pid>/status`: the peak resident set size, in KiB. `None` once the
/// process is gone (or off Linux).
pub fn read_peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(&read_status(pid)?, PEAK)
}

/// `VmRSS` of `/proc/<pid>/status`: the resident set size now, in KiB.
pub fn read_rss_kib(pid: u32) -> Option<u64> {
    status_kib(&read_status(pid)?, "VmRSS:")
}

/// The peak resident set size's field of `/proc/<pid>/status`.
const PEAK: &str = "VmHWM:";
/// The resident anonymous memory's field of `/proc/<pid>/status`.
const ANONYMOUS: &str = "RssAnon:";

/// `/proc/<pid>/status`; `None` once the process is gone (or off Linux).
fn read_status(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status")).ok()
}

/// A size in KiB from the text of `/proc/<pid>/status`, by its field name.
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Whether the process exited normally; a description of how it did not otherwise.
pub fn describe_exit(status: ExitStatus) -> Option<String> {
    (!status.success()).then(|| format!("the server exited with {status}"))
}
