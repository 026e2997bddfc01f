//! `fs/didChange`: a watcher of the workspace root that tells every connected client what was
//! created, modified or deleted beneath it — whoever made the change, the server's own
//! `fs/writeFile` included — with `Server::notify_clients`.
//!
//! Two ways to notice, one way to report:
//!
//! - **inotify**, on Linux (through `libc`): a watch on every folder, added as folders appear.
//!   A burst of events is gathered until the folder has been quiet for 20 ms (or for at most
//!   200 ms), and then only the entries the events name are looked at again, so that a change
//!   costs what changed and not what its folder holds. A folder is listed again only when an
//!   event names no entry of it (a change of the folder itself), and the whole tree only when
//!   inotify dropped events;
//! - **a scan every 500 ms** of the whole tree, on other systems, with `--poll` (for file
//!   systems whose changes inotify does not see, such as network mounts), and when inotify is
//!   unavailable or runs out of watches (`fs.inotify.max_user_watches`), which the watcher
//!   says on standard error before it falls back.
//!
//! Either way, what is reported comes from comparing what the watcher saw last with the
//! folder as it is listed now, through the fence's handles: the root is held open, every
//! folder is opened beneath it, and a symbolic link is reported as itself, never followed. So
//! a file created and written in one burst is one `created`, and a file created and deleted
//! between two looks is not reported at all. inotify adds what a look cannot see: a file
//! written to without a change of size or time (within the clock's granularity) is still
//! `modified`.
//!
//! A folder's listing reads what `readdir` and `stat` give for every entry, and opens its
//! regular files for their modification time only when there are at most
//! [`MAX_TIMED_FILES`] of them: in a bigger folder a scan costs one `stat` per entry, and a
//! rewrite that keeps a file's size and identity is seen by inotify (which names the file
//! written) but not by a scan.
//!
//! What is reported, each path relative to the root with `/`: files, symbolic links and
//! folders `created` and `deleted`; files and links `modified` (size, modification time or
//! identity changed, or, with inotify, written to). A folder is never `modified`; a folder
//! deleted reports everything that was in it, deepest first, and then itself. Names that are
//! not UTF-8 are not watched (no path in JSON could name them), nor are the insides of a folder
//! the server cannot read.
//!
//! inotify's watches are pointed at folders the watcher opened itself, each beneath the one it
//! was listed in, by one name and without following a link (`openat` with `O_NOFOLLOW`), and
//! handed to inotify as `/proc/self/fd/N`: never by a path that a link swapped in could
//! redirect outside the root. A folder moved out of the root is forgotten with its watches.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::io;
use std::ops::Bound;
use std::time::{Duration, SystemTime};

use mcp_runtime::serde::Serialize;
use mcp_runtime::{FencedDir, FileIdentity, FileKind, Server};

use crate::Workspace;

/// How often the tree is scanned when it is not watched by inotify.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The most regular files of one folder whose modification time a listing reads, opening
/// each: past it, a listing of the folder opens none, so that a scan of a folder of many files
/// costs what `readdir` and `stat` cost.
const MAX_TIMED_FILES: usize = 1024;

/// Why a path is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
pub enum Reason {
    /// It appeared.
    Created,
    /// Its contents changed (files and links only).
    Modified,
    /// It is gone.
    Deleted,
}

/// The parameters of `fs/didChange`.
#[derive(Serialize)]
#[serde(crate = "mcp_runtime::serde")]
struct DidChange<'a> {
    /// Relative to the workspace root, with `/` between folders.
    path: &'a str,
    reason: Reason,
}

/// What a path was when the watcher last looked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    kind: FileKind,
    size: u64,
    /// Which file it is: a file replaced by another under its name is `modified`.
    identity: FileIdentity,
    /// For regular files, when they were last written, as their opened handle says; `None`
    /// when not read (a folder of more than [`MAX_TIMED_FILES`] files).
    modified: Option<SystemTime>,
}

impl Seen {
    /// Whether the contents look changed since `before`: another size, another file, or
    /// another modification time when both sightings read it.
    fn changed_since(&self, before: &Seen) -> bool {
        self.kind != before.kind
            || self.size != before.size
            || self.identity != before.identity
            || matches!((before.modified, self.modified), (Some(a), Some(b)) if a != b)
    }
}

/// What inotify said happened since the last look.
#[derive(Default)]
struct Pending {
    /// The folders that had events naming none of their entries, relative to the root (`""`
    /// for the root): each is listed again.
    dirs: BTreeSet<String>,
    /// The entries events named, by folder: only these are looked at again. In this order, a
    /// folder comes before the folders in it.
    entries: BTreeMap<String, BTreeSet<String>>,
    /// The files written to.
    written: HashSet<String>,
    /// Whether inotify dropped events (its queue overflowed): then the whole tree is looked at.
    overflow: bool,
}

/// The tree beneath the root as the watcher last saw it, and the changes not yet reported.
struct Tree {
    /// The root, held open: every folder is opened beneath it.
    root: FencedDir,
    /// Every path beneath the root, relative with `/`.
    seen: BTreeMap<String, Seen>,
    /// The changes found, in order, until they are reported.
    changes: Vec<(String, Reason)>,
    /// The inotify instance, while the tree is watched by inotify.
    #[cfg(target_os = "linux")]
    inotify: Option<inotify::Inotify>,
    /// Why a folder could not be watched (inotify ran out of watches, say): the watcher then
    /// scans instead.
    #[cfg(target_os = "linux")]
    lost: Option<io::Error>,
}

impl Tree {
    /// Brings what was seen up to date with the folders `dirs` (relative, `""` for the root),
    /// each looked at once, and records what changed. Folders that appear are looked into all
    /// the way down; folders already known only when `recursive`. `written` holds the files
    /// inotify saw written to, `modified` even when their size and time look the same.
    fn sync(
        &mut self,
        dirs: impl IntoIterator<Item = String>,
        recursive: bool,
        written: &HashSet<String>,
    ) {
        let mut queue: VecDeque<String> = dirs.into_iter().collect();
        while let Some(dir) = queue.pop_front() {
            // A folder gone (or no longer a folder) since it was queued is not looked at.
            if !dir.is_empty()
                && self.seen.get(&dir).map(|seen| seen.kind) != Some(FileKind::Directory)
            {
                continue;
            }
            // A folder that cannot be looked at now (unreadable, or gone: its parent's look
            // says so) is left as it was.
            let Some(now) = self.root.open_dir(&dir).ok().and_then(|d| look(&d)) else {
                continue;
            };
            let prefix = if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            };
            // What is gone first, so that a folder renamed within the root is forgotten under
            // its old name before it is watched under its new one.
            for (path, before) in self.children(&prefix) {
                let still = now.get(&path[prefix.len()..]);
                if !still.is_some_and(|now| same_object(&before, now)) {
                    self.remove(&path);
                }
            }
            for (name, now) in now {
                let path = format!("{prefix}{name}");
                match self.seen.insert(path.clone(), now) {
                    None => {
                        self.changes.push((path.clone(), Reason::Created));
                        if now.kind == FileKind::Directory {
                            self.watch(&path);
                            queue.push_back(path);
                        }
                    }
                    Some(_) if now.kind == FileKind::Directory => {
                        if recursive {
                            self.watch(&path);
                            queue.push_back(path);
                        }
                    }
                    Some(before) => {
                        if now.changed_since(&before) || written.contains(&path) {
                            self.changes.push((path, Reason::Modified));
                        }
                    }
                }
            }
        }
    }

    /// Brings what was seen up to date with the entries `names` of the folder `dir` (relative,
    /// `""` for the root), looking at those alone: the cost of an event is that of what it
    /// names, whatever else the folder holds. A folder that appears is listed all the way
    /// down.
    fn sync_entries(&mut self, dir: &str, names: &BTreeSet<String>, written: &HashSet<String>) {
        // A folder gone (or no longer a folder): its parent's events say what became of it.
        if !dir.is_empty() && self.seen.get(dir).map(|seen| seen.kind) != Some(FileKind::Directory)
        {
            return;
        }
        let Ok(folder) = self.root.open_dir(dir) else {
            return;
        };
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let now: Vec<(String, Option<Seen>)> = names
            .iter()
            .map(|name| (format!("{prefix}{name}"), look_at(&folder, name)))
            .collect();
        // What is gone first, as in `sync`: a folder renamed within the root is forgotten
        // under its old name before it is watched under its new one.
        for (path, now) in &now {
            if let Some(before) = self.seen.get(path).copied()
                && !now.is_some_and(|now| same_object(&before, &now))
            {
                self.remove(path);
            }
        }
        let mut appeared = Vec::new();
        for (path, now) in now {
            let Some(now) = now else { continue };
            match self.seen.insert(path.clone(), now) {
                None => {
                    self.changes.push((path.clone(), Reason::Created));
                    if now.kind == FileKind::Directory {
                        self.watch(&path);
                        appeared.push(path);
                    }
                }
                Some(_) if now.kind == FileKind::Directory => {}
                Some(before) => {
                    if now.changed_since(&before) || written.contains(&path) {
                        self.changes.push((path, Reason::Modified));
                    }
                }
            }
        }
        self.sync(appeared, false, written);
    }

    /// The paths seen directly in the folder whose entries start with `prefix`.
    fn children(&self, prefix: &str) -> Vec<(String, Seen)> {
        self.seen
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(path, _)| path.starts_with(prefix))
            .filter(|(path, _)| !path[prefix.len()..].contains('/'))
            .map(|(path, seen)| (path.clone(), *seen))
            .collect()
    }

    /// Forgets a path and everything beneath it, deepest first, reporting each `deleted`.
    fn remove(&mut self, path: &str) {
        let inside = format!("{path}/");
        let mut gone: Vec<String> = self
            .seen
            .range::<str, _>((Bound::Included(inside.as_str()), Bound::Unbounded))
            .take_while(|(below, _)| below.starts_with(&inside))
            .map(|(below, _)| below.clone())
            .collect();
        gone.push(path.to_owned());
        // A folder sorts before everything in it: backwards, everything in it comes first.
        gone.sort_unstable_by(|a, b| b.cmp(a));
        for path in gone {
            if let Some(seen) = self.seen.remove(&path) {
                if seen.kind == FileKind::Directory {
                    self.unwatch(&path);
                }
                self.changes.push((path, Reason::Deleted));
            }
        }
    }

    /// Watches a folder with inotify, if the tree is watched by inotify.
    fn watch(&mut self, dir: &str) {
        #[cfg(target_os = "linux")]
        if let Some(inotify) = &mut self.inotify
            && let Err(lost) = inotify.watch(dir)
        {
            self.lost.get_or_insert(lost);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = dir;
    }

    /// Stops watching a folder.
    fn unwatch(&mut self, dir: &str) {
        #[cfg(target_os = "linux")]
        if let Some(inotify) = &mut self.inotify {
            inotify.unwatch(dir);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = dir;
    }

    /// Sends the changes found to every connected client, in the order they were found.
    fn report(&mut self, server: &Server) {
        for (path, reason) in self.changes.drain(..) {
            server.notify_clients(
                "fs/didChange",
                &DidChange {
                    path: &path,
                    reason,
                },
            );
        }
    }
}

/// Whether two sightings of a name are the same object changed at most in its contents: the
/// same kind, and for a folder the same folder (one put in another's place is a deletion and
/// a creation, with everything in them).
fn same_object(before: &Seen, now: &Seen) -> bool {
    before.kind == now.kind && (now.kind != FileKind::Directory || before.identity == now.identity)
}

/// A folder's entries as they are now, by name; `None` if it cannot be listed. A regular
/// file's modification time is read from a handle opened beneath the folder (no content is
/// read), when the folder holds at most [`MAX_TIMED_FILES`] regular files.
fn look(dir: &FencedDir) -> Option<BTreeMap<String, Seen>> {
    let mut now = BTreeMap::new();
    let mut files = 0;
    for entry in dir.entries().ok()?.filter_map(Result::ok) {
        let Some(name) = entry.name().to_str() else {
            continue;
        };
        let info = entry.info();
        files += usize::from(info.kind() == FileKind::File);
        now.insert(
            name.to_owned(),
            Seen {
                kind: info.kind(),
                size: info.size(),
                identity: info.identity(),
                modified: None,
            },
        );
    }
    if files <= MAX_TIMED_FILES {
        for (name, seen) in &mut now {
            if seen.kind == FileKind::File {
                seen.modified = modified(dir, name);
            }
        }
    }
    Some(now)
}

/// One entry of a folder as it is now; `None` if it is gone (or cannot be seen).
fn look_at(dir: &FencedDir, name: &str) -> Option<Seen> {
    let info = dir.symlink_metadata(name).ok()?;
    Some(Seen {
        kind: info.kind(),
        size: info.size(),
        identity: info.identity(),
        modified: if info.kind() == FileKind::File {
            modified(dir, name)
        } else {
            None
        },
    })
}

/// When a regular file of `dir` was last written, from a handle opened beneath it.
fn modified(dir: &FencedDir, name: &str) -> Option<SystemTime> {
    dir.open_read(name)
        .ok()
        .and_then(|file| file.metadata().ok())
        .and_then(|metadata| metadata.modified().ok())
}

/// The watcher of the workspace root, once it has had its first look.
pub struct Watcher {
    tree: Tree,
}

impl Watcher {
    /// Opens the root, starts inotify (unless `poll`, or off Linux) and takes the first look at
    /// the whole tree, which reports nothing: it is what there was.
    pub fn start(workspace: &Workspace, poll: bool) -> io::Result<Watcher> {
        let root = workspace.roots().open_dir(".").map_err(io::Error::other)?;
        let mut tree = Tree {
            root,
            seen: BTreeMap::new(),
            changes: Vec::new(),
            #[cfg(target_os = "linux")]
            inotify: None,
            #[cfg(target_os = "linux")]
            lost: None,
        };
        #[cfg(target_os = "linux")]
        if !poll {
            let started = inotify::Inotify::new(workspace.root()).and_then(|mut inotify| {
                inotify.watch("")?;
                if inotify.watches("") {
                    Ok(inotify)
                } else {
                    Err(io::Error::other("/proc/self/fd is not available"))
                }
            });
            match started {
                Ok(inotify) => tree.inotify = Some(inotify),
                Err(e) => eprintln!(
                    "workspace: inotify is not available ({e}); scanning every 500 ms instead"
                ),
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = poll;
        tree.sync([String::new()], true, &HashSet::new());
        tree.changes.clear();
        #[cfg(target_os = "linux")]
        if let Some(lost) = tree.lost.take() {
            tree.inotify = None;
            eprintln!(
                "workspace: inotify cannot watch every folder ({lost}); scanning every 500 ms instead"
            );
        }
        Ok(Watcher { tree })
    }

    /// How changes are noticed: `inotify` or `polling`.
    pub fn backend(&self) -> &'static str {
        #[cfg(target_os = "linux")]
        if self.tree.inotify.is_some() {
            return "inotify";
        }
        "polling"
    }

    /// Watches on a thread of its own, reporting to the server's clients, for as long as the
    /// process runs.
    pub fn spawn(self, server: Server) {
        let spawned = std::thread::Builder::new()
            .name("workspace-watcher".into())
            .spawn(move || self.run(&server));
        if let Err(e) = spawned {
            eprintln!("workspace: cannot start the watcher ({e}); fs/didChange is not sent");
        }
    }

    fn run(mut self, server: &Server) {
        #[cfg(target_os = "linux")]
        if self.tree.inotify.is_some() {
            let Err(lost) = inotify::follow(&mut self.tree, server);
            self.tree.inotify = None;
            eprintln!("workspace: inotify stopped ({lost}); scanning every 500 ms instead");
        }
        loop {
            std::thread::sleep(POLL_INTERVAL);
            self.tree.sync([String::new()], true, &HashSet::new());
            self.tree.report(server);
        }
    }
}

/// inotify through `libc`.
#[cfg(target_os = "linux")]
mod inotify {
    use std::collections::HashMap;
    use std::convert::Infallible;
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use mcp_runtime::Server;

    use super::{Pending, Tree};

    /// What each folder's watch reports: entries created, deleted, moved in or out, written
    /// to, closed after writing, or with changed attributes (`touch`). Only folders are
    /// watched; a file unlinked while open reports nothing more.
    const MASK: u32 = libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_ATTRIB
        | libc::IN_ONLYDIR
        | libc::IN_EXCL_UNLINK;

    /// How long a burst of events must be quiet before the folders are looked at.
    const QUIET: Duration = Duration::from_millis(20);

    /// How long a burst that never goes quiet is gathered at most.
    const MAX_DELAY: Duration = Duration::from_millis(200);

    /// An inotify instance and its watches, one per folder.
    pub struct Inotify {
        fd: OwnedFd,
        /// The root, opened once by the path the operator gave.
        root: OwnedFd,
        by_wd: HashMap<i32, String>,
        by_path: HashMap<String, i32>,
    }

    impl Inotify {
        /// A non-blocking inotify instance for the tree at `root`, watching nothing yet.
        pub fn new(root: &Path) -> io::Result<Inotify> {
            // SAFETY: a plain system call; the descriptor it returns is owned from here on.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` is a descriptor this process just opened and nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let root = open_dir(libc::AT_FDCWD, root.as_os_str().as_bytes(), 0)?;
            Ok(Inotify {
                fd,
                root,
                by_wd: HashMap::new(),
                by_path: HashMap::new(),
            })
        }

        /// Whether a folder is watched.
        pub fn watches(&self, dir: &str) -> bool {
            self.by_path.contains_key(dir)
        }

        /// Watches a folder (relative to the root, `""` for the root). A folder gone, swapped
        /// for a link or unreadable meanwhile is passed over (its parent's next look says
        /// what became of it); running out of watches or memory is an error.
        pub fn watch(&mut self, dir: &str) -> io::Result<()> {
            if self.watches(dir) {
                return Ok(());
            }
            let opened = match self.open_beneath(dir) {
                Ok(opened) => opened,
                Err(e) if passed_over(&e) => return Ok(()),
                Err(e) => return Err(e),
            };
            // The opened folder itself, whatever has happened to its name since.
            let path = CString::new(format!("/proc/self/fd/{}", opened.as_raw_fd()))
                .map_err(io::Error::other)?;
            // SAFETY: both descriptors are open and `path` is a NUL-terminated string.
            let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), path.as_ptr(), MASK) };
            if wd < 0 {
                let e = io::Error::last_os_error();
                return if passed_over(&e) { Ok(()) } else { Err(e) };
            }
            // One folder seen under two names (a rename noticed late) keeps one watch, under
            // the newest name.
            if let Some(old) = self.by_wd.insert(wd, dir.to_owned()) {
                self.by_path.remove(&old);
            }
            self.by_path.insert(dir.to_owned(), wd);
            Ok(())
        }

        /// Stops watching a folder.
        pub fn unwatch(&mut self, dir: &str) {
            if let Some(wd) = self.by_path.remove(dir) {
                self.by_wd.remove(&wd);
                // SAFETY: a plain system call; a watch the kernel already dropped is EINVAL.
                unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
            }
        }

        /// Opens a folder beneath the root one name at a time, each beneath the last, never
        /// following a symbolic link.
        fn open_beneath(&self, dir: &str) -> io::Result<OwnedFd> {
            let mut opened = self.root.try_clone()?;
            for name in dir.split('/').filter(|name| !name.is_empty()) {
                if name == "." || name == ".." {
                    return Err(io::Error::new(io::ErrorKind::InvalidInput, "`.` or `..`"));
                }
                opened = open_dir(opened.as_raw_fd(), name.as_bytes(), libc::O_NOFOLLOW)?;
            }
            Ok(opened)
        }

        /// Waits until events can be read, or `timeout` passes (`None`: for ever); whether
        /// they can.
        fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
            let mut poll = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = timeout.map_or(-1, |timeout| {
                i32::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
            });
            // SAFETY: `poll` is one valid pollfd.
            match unsafe { libc::poll(&mut poll, 1, millis) } {
                ready if ready >= 0 => Ok(ready > 0),
                _ => match io::Error::last_os_error() {
                    e if e.kind() == io::ErrorKind::Interrupted => Ok(false),
                    e => Err(e),
                },
            }
        }

        /// Reads every event queued into `pending`; whether there was any.
        fn read(&mut self, pending: &mut Pending) -> io::Result<bool> {
            const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
            let mut buffer = [0u8; 16 * 1024];
            let mut any = false;
            loop {
                // SAFETY: the buffer is valid for its length.
                let read = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        buffer.as_mut_ptr().cast(),
                        buffer.len(),
                    )
                };
                let read = match usize::try_from(read) {
                    Ok(0) => return Ok(any),
                    Ok(read) => read,
                    Err(_) => match io::Error::last_os_error() {
                        e if e.kind() == io::ErrorKind::WouldBlock => return Ok(any),
                        e if e.kind() == io::ErrorKind::Interrupted => continue,
                        e => return Err(e),
                    },
                };
                any = true;
                let mut at = 0;
                while at + HEADER <= read {
                    // SAFETY: a whole header lies at `at`; it may be unaligned in the buffer.
                    let event: libc::inotify_event =
                        unsafe { std::ptr::read_unaligned(buffer.as_ptr().add(at).cast()) };
                    let end = (at + HEADER + event.len as usize).min(read);
                    let name = buffer[at + HEADER..end].split(|&b| b == 0).next();
                    self.note(event.wd, event.mask, name.unwrap_or_default(), pending);
                    at = end;
                }
            }
        }

        /// Notes one event: the entry it names is to be looked at again (its folder, when it
        /// names none), and a file written to is remembered as written.
        fn note(&mut self, wd: i32, mask: u32, name: &[u8], pending: &mut Pending) {
            if mask & libc::IN_Q_OVERFLOW != 0 {
                pending.overflow = true;
                return;
            }
            let Some(dir) = self.by_wd.get(&wd).cloned() else {
                return;
            };
            if mask & libc::IN_IGNORED != 0 {
                // The kernel dropped the watch (its folder was deleted): forget it.
                self.by_wd.remove(&wd);
                if self.by_path.get(&dir) == Some(&wd) {
                    self.by_path.remove(&dir);
                }
                return;
            }
            if name.is_empty() {
                pending.dirs.insert(dir);
                return;
            }
            // A name that is not UTF-8 is not watched: no path in JSON could name it.
            let Ok(name) = std::str::from_utf8(name) else {
                return;
            };
            if mask & libc::IN_MODIFY != 0 {
                let path = if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                pending.written.insert(path);
            }
            pending
                .entries
                .entry(dir)
                .or_default()
                .insert(name.to_owned());
        }
    }

    /// Errors of a folder that is gone, is no longer a folder, or cannot be read: not the
    /// watcher's trouble.
    fn passed_over(error: &io::Error) -> bool {
        matches!(
            error.raw_os_error(),
            Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::EACCES | libc::EPERM)
        )
    }

    /// Opens the folder `name` names beneath `at`, as a handle to point a watch at (`O_PATH`:
    /// it reads nothing).
    fn open_dir(at: RawFd, name: &[u8], flags: libc::c_int) -> io::Result<OwnedFd> {
        let name = CString::new(name).map_err(io::Error::other)?;
        // SAFETY: `at` is an open descriptor (or AT_FDCWD) and `name` is NUL-terminated.
        let fd = unsafe {
            libc::openat(
                at,
                name.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC | flags,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor this process just opened and nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Follows the tree's inotify events, reporting what changed after each burst, until
    /// inotify fails or cannot watch a folder: the error is returned, and the caller scans
    /// instead.
    pub fn follow(tree: &mut Tree, server: &Server) -> io::Result<Infallible> {
        let mut pending = Pending::default();
        // The first and the last event of the burst being gathered.
        let mut burst: Option<(Instant, Instant)> = None;
        loop {
            let inotify = tree
                .inotify
                .as_mut()
                .ok_or_else(|| io::Error::other("inotify was stopped"))?;
            let due_at = burst.map(|(first, last)| (last + QUIET).min(first + MAX_DELAY));
            let timeout = due_at.map(|at| at.saturating_duration_since(Instant::now()));
            if inotify.wait(timeout)? && inotify.read(&mut pending)? {
                let now = Instant::now();
                burst = Some((burst.map_or(now, |(first, _)| first), now));
            }
            let now = Instant::now();
            let due =
                burst.is_some_and(|(first, last)| now >= last + QUIET || now >= first + MAX_DELAY);
            if !due {
                continue;
            }
            burst = None;
            let Pending {
                dirs,
                entries,
                written,
                overflow,
            } = std::mem::take(&mut pending);
            if overflow {
                tree.sync([String::new()], true, &written);
            } else {
                for (dir, names) in &entries {
                    // A folder listed again below sees these entries too.
                    if !dirs.contains(dir) {
                        tree.sync_entries(dir, names, &written);
                    }
                }
                tree.sync(dirs, false, &written);
            }
            tree.report(server);
            if let Some(lost) = tree.lost.take() {
                return Err(lost);
            }
        }
    }
}
