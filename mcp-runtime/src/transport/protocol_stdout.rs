//! The process's standard output, taken for the protocol.
//!
//! A stdio server's standard output carries JSON-RPC frames and nothing else, yet anything
//! in the process may print: a `println!` left in a tool, a dependency that reports
//! progress, a child process that inherits the descriptor. So the stdio transport keeps the
//! real standard output on a descriptor of its own, which no child process inherits
//! (close-on-exec), and points descriptor 1 at standard error for the rest of the program.
//! Stray output then lands in the server's log (clients keep a server's standard error)
//! instead of in the middle of a frame.

use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsRawFd as _, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

/// The real standard output, taken once per process: a later `serve_stdio` writes to the
/// same place as the first.
static PROTOCOL_STDOUT: OnceLock<Result<OwnedFd, io::ErrorKind>> = OnceLock::new();

/// A descriptor on the real standard output (close-on-exec); from the first call on,
/// descriptor 1 is standard error.
pub(crate) fn take() -> io::Result<File> {
    let kept = PROTOCOL_STDOUT.get_or_init(|| swap().map_err(|e| e.kind()));
    match kept {
        Ok(fd) => Ok(File::from(fd.try_clone()?)),
        Err(kind) => Err(io::Error::new(
            *kind,
            "standard output cannot be taken for the protocol",
        )),
    }
}

fn swap() -> io::Result<OwnedFd> {
    // Holding Rust's lock on standard output keeps other threads' prints out of the swap;
    // what was printed before it is flushed to where it was meant to go.
    let mut stdout = io::stdout().lock();
    let _ = stdout.flush();
    // SAFETY: descriptor 1 is only borrowed for the length of the duplication; a closed
    // one makes the call fail with EBADF.
    let kept = unsafe { BorrowedFd::borrow_raw(1) }.try_clone_to_owned()?;
    // SAFETY: dup2 on descriptors 1 and 2 touches no memory; descriptor 1 stays open, now
    // on standard error.
    if unsafe { libc::dup2(2, 1) } < 0 {
        // No standard error to send stray output to: it goes nowhere rather than into the
        // protocol.
        let null = File::options().write(true).open("/dev/null")?;
        // SAFETY: as above; `null` is open until the end of this block.
        if unsafe { libc::dup2(null.as_raw_fd(), 1) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    drop(stdout);
    Ok(kept)
}
