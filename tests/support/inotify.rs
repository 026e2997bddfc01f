//! What a server opens in a folder, as inotify tells it (`IN_OPEN`): how a test sees the work
//! a server does on the disk without timing it.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

/// The opens of the entries of one folder (files and folders alike), by anyone.
pub struct Opens {
    fd: OwnedFd,
}

impl Opens {
    /// Starts watching `dir`: opens from now on are seen.
    pub fn watch(dir: &Path) -> Opens {
        // SAFETY: a plain system call; the descriptor is owned from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `fd` is a descriptor just opened, and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = CString::new(dir.as_os_str().as_bytes()).expect("a path without NUL");
        // SAFETY: a plain system call on a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), libc::IN_OPEN) };
        assert!(
            wd >= 0,
            "inotify_add_watch: {}",
            std::io::Error::last_os_error()
        );
        Opens { fd }
    }

    /// Waits at most `timeout` for an open not taken yet; whether there is one.
    pub fn wait(&self, timeout: Duration) -> bool {
        let mut poll = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one valid `pollfd`, for the duration of the call.
        unsafe { libc::poll(&mut poll, 1, millis) > 0 }
    }

    /// The names of the entries opened since the last call, once each; `<overflow>` when more
    /// were opened than inotify could queue. The folder's own opens (no name) are left out.
    pub fn take(&self) -> BTreeSet<String> {
        const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
        let mut names = BTreeSet::new();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: the buffer is valid for its length.
            let read = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                )
            };
            let Ok(read) = usize::try_from(read) else {
                return names;
            };
            let mut at = 0;
            while at + HEADER <= read {
                // SAFETY: a whole header lies at `at`, perhaps unaligned.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buffer.as_ptr().add(at).cast()) };
                let end = at + HEADER + event.len as usize;
                let name = buffer[at + HEADER..end]
                    .split(|&b| b == 0)
                    .next()
                    .unwrap_or_default();
                if event.mask & libc::IN_Q_OVERFLOW != 0 {
                    names.insert("<overflow>".to_owned());
                } else if !name.is_empty() {
                    names.insert(String::from_utf8_lossy(name).into_owned());
                }
                at = end;
            }
        }
    }
}
