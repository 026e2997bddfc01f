//! Helper processes that start processes of their own (nginx's master and its workers), run
//! as process groups, so that stopping one ends everything it started.
//!
//! A helper is asked to stop with a signal it handles (nginx finishes its workers on
//! SIGTERM), its exit is awaited without reaping it, and then whatever is still in its group
//! is killed. The leader is reaped only after that: until then its process id, which is the
//! group's id, cannot be given to another process, so the group kill can reach nothing else.
//!
//! On Linux a helper is also told to stop when the thread that started it ends
//! (`PR_SET_PDEATHSIG`): a test binary interrupted with Ctrl-C, whose destructors never
//! run, leaves no helper behind (a group of its own does not receive the terminal's
//! SIGINT).

use std::io;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A process leading a group of its own.
pub struct ProcessGroup {
    child: Option<Child>,
    name: String,
}

impl ProcessGroup {
    /// Starts `command` as the leader of a new process group, which is sent `orphan_signal`
    /// when the thread that started it ends (Linux).
    pub fn spawn(command: &mut Command, orphan_signal: libc::c_int) -> io::Result<ProcessGroup> {
        command.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: the closure calls only async-signal-safe functions (prctl, getppid, kill,
        // getpid) between fork and exec.
        unsafe {
            let parent = libc::getpid();
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, orphan_signal) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have ended before the request took effect.
                if libc::getppid() != parent {
                    libc::kill(libc::getpid(), orphan_signal);
                }
                Ok(())
            });
        }
        #[cfg(not(target_os = "linux"))]
        let _ = orphan_signal;
        let name = command.get_program().to_string_lossy().into_owned();
        Ok(ProcessGroup {
            child: Some(command.spawn()?),
            name,
        })
    }

    /// The leader's piped standard input, output and error, each once.
    pub fn take_stdio(
        &mut self,
    ) -> (
        Option<std::process::ChildStdin>,
        Option<std::process::ChildStdout>,
        Option<std::process::ChildStderr>,
    ) {
        match self.child.as_mut() {
            Some(child) => (child.stdin.take(), child.stdout.take(), child.stderr.take()),
            None => (None, None, None),
        }
    }

    /// The leader's process id, which is the group's id too.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the leader has exited (without reaping it).
    pub fn has_exited(&self) -> bool {
        let Some(child) = &self.child else {
            return true;
        };
        leader_exited(child.id())
    }

    /// Sends `signal` to the leader alone, waits up to `grace` for it to exit, then kills
    /// every process left in its group and reaps the leader.
    pub fn stop(&mut self, signal: libc::c_int, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id() as libc::pid_t;
        if signal != libc::SIGKILL {
            // SAFETY: `pid` is our unreaped child: it names this process or its zombie.
            unsafe { libc::kill(pid, signal) };
            let deadline = Instant::now() + grace;
            while !leader_exited(child.id()) {
                if Instant::now() >= deadline {
                    eprintln!(
                        "{} (pid {pid}) did not stop within {grace:?} of signal {signal}: killed",
                        self.name
                    );
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        // SAFETY: the leader is not reaped yet, so the group id is still ours alone.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        let _ = child.wait();
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.stop(libc::SIGKILL, Duration::ZERO);
    }
}

/// Whether the child `pid` has exited, leaving it to be reaped.
fn leader_exited(pid: u32) -> bool {
    // SAFETY: waitid with WNOWAIT only reads the child's state into `info`.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let found = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // With WNOHANG, a child still running leaves the pid field zero.
        found == 0 && info.si_pid() != 0
    }
}

/// The processes whose parent is `pid`, from `/proc` (Linux).
#[cfg(target_os = "linux")]
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&candidate| parent_of(candidate) == Some(pid))
        .collect()
}

/// The parent of `pid`, while it is alive (not a zombie).
#[cfg(target_os = "linux")]
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may itself hold spaces and parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(1)?.parse().ok()
}

/// Whether `pid` names a live process (not a zombie).
#[cfg(target_os = "linux")]
pub fn is_alive(pid: u32) -> bool {
    parent_of(pid).is_some()
}

/// A memory figure of `pid` from `/proc/{pid}/status`, in KiB: `VmRSS` (resident now) or
/// `VmHWM` (the most it was resident). `None` once the process is gone.
#[cfg(target_os = "linux")]
pub fn memory_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
