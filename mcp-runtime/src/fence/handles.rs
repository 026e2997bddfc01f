//! Handles beneath a root: the only way the fence lets a tool touch a file.
//!
//! A root is opened once per [`FencedPath`]; every name beneath it is then resolved by the
//! kernel beneath that handle at the moment of each open (`cap-std`; see the module above),
//! so a folder swapped for a symbolic link between a check and a use cannot lead out: the
//! open itself is the check. What a handle opened stays opened — a [`FencedDir`] held across
//! an `.await` is the same directory afterwards, whatever was renamed meanwhile.
//!
//! Writes and deletes also refuse a regular file with more than one hard link: a hard link
//! is the same file under a second name, and the fence cannot see where that other name is —
//! it may lie outside every root. Reads of such files are allowed (see the book's security
//! chapter for why).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, DirEntry, Metadata, OpenOptions};
use serde_json::{Map, Value, json};

use super::{PathRefused, Placement};
use crate::protocol::ERROR_META_KEY;

/// The root a handle lies beneath, as refusals name it.
#[derive(Debug)]
struct Fence {
    /// The root on disk.
    root: PathBuf,
    /// Every allowed root as written.
    roots: Arc<[String]>,
}

impl Fence {
    /// What an I/O error at `place` means: the handle's refusal of a way out, or the file
    /// system's own error.
    fn error(&self, place: PathBuf, error: io::Error) -> FenceError {
        // `cap-std` reports a name that would leave the directory (a symbolic link out, an
        // absolute link, `..` above it; `EXDEV` from `openat2`) as `PermissionDenied` of its
        // own making; a real `EACCES` carries the operating system's code.
        if error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none() {
            FenceError::Refused(PathRefused {
                path: shown(&place),
                reason: "a symbolic link or `..` in it leads outside the roots".into(),
                roots: self.roots.to_vec(),
            })
        } else {
            FenceError::Io { path: place, error }
        }
    }
}

/// A relative path as shown to a model: `.` for the root itself.
fn shown(relative: &Path) -> String {
    if relative.as_os_str().is_empty() {
        ".".into()
    } else {
        relative.display().to_string()
    }
}

/// The path `cap-std` is given: the directory itself for an empty path.
fn beneath(path: &Path) -> &Path {
    if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    }
}

/// Opening a FIFO or a device blocks until a peer shows up; non-blocking, the open returns
/// at once and the file's kind is checked on the handle. Nor may a terminal in a root become
/// the server's controlling terminal by being opened.
fn nonblocking(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options
}

/// A path inside one of the client's roots: the root, held open, and the path beneath it.
///
/// Made by [`Roots::locate`](crate::Roots::locate). Every method opens the path beneath the
/// held root, in one step the kernel checks, and refuses a symbolic link or `..` that would
/// lead out; what it returns (a [`File`], a [`FencedDir`]) is the object that was checked.
///
/// ```
/// use std::io::{Read, Write};
/// use mcp_runtime::{Root, Roots};
///
/// let dir = std::env::temp_dir().join(format!("fenced-path-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// let notes = roots.locate("notes/today.txt").unwrap();
/// notes.create_parent_dirs().unwrap();
/// notes.create().unwrap().write_all(b"hello").unwrap();
/// let mut text = String::new();
/// notes.open_read().unwrap().read_to_string(&mut text).unwrap();
/// assert_eq!(text, "hello");
/// assert_eq!(notes.to_string(), "notes/today.txt");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct FencedPath {
    root: FencedDir,
    relative: PathBuf,
}

impl FencedPath {
    /// Opens the root a placement names.
    pub(crate) fn open(placement: Placement) -> Result<FencedPath, FenceError> {
        let fence = Arc::new(Fence {
            root: placement.root,
            roots: placement.roots,
        });
        let dir = Dir::open_ambient_dir(&fence.root, ambient_authority()).map_err(|error| {
            FenceError::Io {
                path: fence.root.clone(),
                error,
            }
        })?;
        Ok(FencedPath {
            root: FencedDir {
                dir,
                fence,
                relative: PathBuf::new(),
            },
            relative: placement.relative,
        })
    }

    /// The path relative to its root (empty for the root itself).
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The root it lies in, as on disk.
    pub fn root(&self) -> &Path {
        &self.root.fence.root
    }

    /// The root, held open.
    pub fn root_dir(&self) -> &FencedDir {
        &self.root
    }

    /// Opens the file for reading. Refuses anything but a regular file.
    pub fn open_read(&self) -> Result<File, FenceError> {
        self.root.open_read(&self.relative)
    }

    /// Opens the file for writing, created if missing and emptied if not. Refuses anything
    /// but a regular file, and a file with other hard links (checked before it is emptied).
    pub fn create(&self) -> Result<File, FenceError> {
        self.root.create(&self.relative)
    }

    /// Creates the folders the path lies in, beneath the root.
    pub fn create_parent_dirs(&self) -> Result<(), FenceError> {
        match self.relative.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => self.root.create_dir_all(parent),
            _ => Ok(()),
        }
    }

    /// Opens the directory.
    pub fn open_dir(&self) -> Result<FencedDir, FenceError> {
        self.root.open_dir(&self.relative)
    }

    /// Opens the directory the path lies in, and returns it with the path's last name: what
    /// to hold while waiting (for a confirmation, say) so that the folder cannot be swapped.
    pub fn open_parent(&self) -> Result<(FencedDir, OsString), FenceError> {
        let Some(name) = self.relative.file_name() else {
            return Err(FenceError::WrongKind {
                path: self.relative.clone(),
                expected: FileKind::File,
                found: FileKind::Directory,
            });
        };
        let parent = self.relative.parent().unwrap_or(Path::new(""));
        Ok((self.root.open_dir(parent)?, name.to_owned()))
    }

    /// What the path names, symbolic links (inside the root) followed.
    pub fn metadata(&self) -> Result<FileInfo, FenceError> {
        self.root.metadata(&self.relative)
    }

    /// What the path names, a last symbolic link not followed.
    pub fn symlink_metadata(&self) -> Result<FileInfo, FenceError> {
        self.root.symlink_metadata(&self.relative)
    }

    /// Removes the file (a symbolic link itself, not what it points to). Refuses a directory
    /// and a file with other hard links.
    pub fn remove_file(&self) -> Result<(), FenceError> {
        self.root.remove_file(&self.relative)
    }
}

impl fmt::Display for FencedPath {
    /// The path relative to its root, `.` for the root itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shown(&self.relative))
    }
}

/// A directory inside the client's roots, held open. Paths given to its methods are relative
/// to it and resolved beneath it: a symbolic link is followed only while it stays beneath, and
/// an absolute one or `..` above it is refused.
///
/// Holding one keeps *this* directory: if it is renamed (even out of the root, by someone who
/// can write both there and outside), the handle follows it. That is what lets a tool ask a
/// question and then act on the folder it asked about.
///
/// ```
/// use mcp_runtime::{FileKind, Root, Roots};
///
/// let dir = std::env::temp_dir().join(format!("fenced-dir-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("docs")).unwrap();
/// std::fs::write(dir.join("docs/guide.md"), "# Guide").unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// let docs = roots.open_dir("docs").unwrap();
/// let entries: Vec<_> = docs.entries().unwrap().collect::<Result<_, _>>().unwrap();
/// assert_eq!(entries[0].name(), "guide.md");
/// assert_eq!(entries[0].relative(), std::path::Path::new("docs/guide.md"));
/// assert_eq!(entries[0].info().kind(), FileKind::File);
/// assert_eq!(docs.metadata("guide.md").unwrap().size(), 7);
/// // A way out is refused by the handle itself.
/// assert!(docs.open_read("../../etc/passwd").is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct FencedDir {
    dir: Dir,
    fence: Arc<Fence>,
    relative: PathBuf,
}

impl FencedDir {
    /// The directory's path relative to its root (empty for the root itself).
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The root it lies in, as on disk.
    pub fn root(&self) -> &Path {
        &self.fence.root
    }

    fn error(&self, path: &Path, error: io::Error) -> FenceError {
        self.fence.error(self.relative.join(path), error)
    }

    /// Opens a file for reading. Refuses anything but a regular file (a FIFO or a device
    /// would block or never end).
    pub fn open_read(&self, path: impl AsRef<Path>) -> Result<File, FenceError> {
        let path = path.as_ref();
        let file = self
            .dir
            .open_with(beneath(path), nonblocking(OpenOptions::new().read(true)))
            .map_err(|e| self.error(path, e))?;
        let info = file
            .metadata()
            .map(|m| FileInfo::from_metadata(&m))
            .map_err(|e| self.error(path, e))?;
        if info.kind != FileKind::File {
            return Err(FenceError::WrongKind {
                path: self.relative.join(path),
                expected: FileKind::File,
                found: info.kind,
            });
        }
        Ok(file.into_std())
    }

    /// Opens a file for writing, created if missing and emptied if not. Refuses anything but
    /// a regular file, and a file with other hard links — checked on the opened file, before
    /// anything is emptied, so the file written is the file checked.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<File, FenceError> {
        let path = path.as_ref();
        let file = self
            .dir
            .open_with(
                beneath(path),
                nonblocking(OpenOptions::new().write(true).create(true)),
            )
            .map_err(|e| self.error(path, e))?;
        let info = file
            .metadata()
            .map(|m| FileInfo::from_metadata(&m))
            .map_err(|e| self.error(path, e))?;
        self.check_changeable(path, &info)?;
        file.set_len(0).map_err(|e| self.error(path, e))?;
        Ok(file.into_std())
    }

    /// Creates a directory and its missing parents, beneath this one.
    pub fn create_dir_all(&self, path: impl AsRef<Path>) -> Result<(), FenceError> {
        let path = path.as_ref();
        self.dir
            .create_dir_all(beneath(path))
            .map_err(|e| self.error(path, e))
    }

    /// Opens a directory beneath this one (`""` or `"."` for this one again).
    pub fn open_dir(&self, path: impl AsRef<Path>) -> Result<FencedDir, FenceError> {
        let path = path.as_ref();
        let dir = self
            .dir
            .open_dir(beneath(path))
            .map_err(|e| self.error(path, e))?;
        Ok(FencedDir {
            dir,
            fence: Arc::clone(&self.fence),
            relative: self.relative.join(path),
        })
    }

    /// The directory's entries, in the order the file system gives them. Entries removed
    /// while being listed are left out.
    pub fn entries(
        &self,
    ) -> Result<impl Iterator<Item = Result<FencedEntry, FenceError>> + use<>, FenceError> {
        let fence = Arc::clone(&self.fence);
        let relative = self.relative.clone();
        let entries = self
            .dir
            .entries()
            .map_err(|e| self.error(Path::new(""), e))?;
        Ok(entries.filter_map(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => return Some(Err(fence.error(relative.clone(), e))),
            };
            let name = entry.file_name();
            let place = relative.join(&name);
            match entry.metadata() {
                Ok(metadata) => Some(Ok(FencedEntry {
                    info: FileInfo::from_metadata(&metadata),
                    entry,
                    name,
                    relative: place,
                    fence: Arc::clone(&fence),
                })),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => Some(Err(fence.error(place, e))),
            }
        }))
    }

    /// What a path beneath this directory names, symbolic links (beneath it) followed.
    pub fn metadata(&self, path: impl AsRef<Path>) -> Result<FileInfo, FenceError> {
        let path = path.as_ref();
        self.dir
            .metadata(beneath(path))
            .map(|m| FileInfo::from_metadata(&m))
            .map_err(|e| self.error(path, e))
    }

    /// What a path beneath this directory names, a last symbolic link not followed.
    pub fn symlink_metadata(&self, path: impl AsRef<Path>) -> Result<FileInfo, FenceError> {
        let path = path.as_ref();
        self.dir
            .symlink_metadata(beneath(path))
            .map(|m| FileInfo::from_metadata(&m))
            .map_err(|e| self.error(path, e))
    }

    /// What this directory is.
    pub fn info(&self) -> Result<FileInfo, FenceError> {
        self.dir
            .dir_metadata()
            .map(|m| FileInfo::from_metadata(&m))
            .map_err(|e| self.error(Path::new(""), e))
    }

    /// Removes a file (a symbolic link itself, never what it points to). Refuses a directory
    /// and a regular file with other hard links.
    pub fn remove_file(&self, path: impl AsRef<Path>) -> Result<(), FenceError> {
        let path = path.as_ref();
        self.removable(path)?;
        self.dir.remove_file(path).map_err(|e| self.error(path, e))
    }

    /// What [`FencedDir::remove_file`] would remove now, or why it would refuse: the check
    /// to make before asking the user, whose answer then goes to
    /// [`FencedDir::remove_file_if_same`] with the identity returned.
    pub fn removable(&self, path: impl AsRef<Path>) -> Result<FileInfo, FenceError> {
        let path = path.as_ref();
        let info = self.symlink_metadata(path)?;
        self.check_removable(path, &info)?;
        Ok(info)
    }

    /// Removes a file only if the name still names the file identified earlier (by
    /// [`FileInfo::identity`]: device, inode and birth time): what a tool calls after asking
    /// the user, holding this directory, so that neither a swapped folder nor a file put in
    /// the old one's place — even one that was given the old one's inode number — is removed
    /// instead. Refuses a directory and a regular file with other hard links.
    ///
    /// The name is checked and then removed, in two steps: a process that can write in this
    /// very directory can still swap the name in between, and then *that* entry of this
    /// directory is removed — never a file outside it, since removing a name never follows a
    /// link.
    pub fn remove_file_if_same(
        &self,
        path: impl AsRef<Path>,
        identity: FileIdentity,
    ) -> Result<(), FenceError> {
        let path = path.as_ref();
        let info = self.symlink_metadata(path)?;
        if info.identity != identity {
            return Err(FenceError::Changed {
                path: self.relative.join(path),
            });
        }
        self.check_removable(path, &info)?;
        self.dir.remove_file(path).map_err(|e| self.error(path, e))
    }

    fn check_changeable(&self, path: &Path, info: &FileInfo) -> Result<(), FenceError> {
        if info.kind != FileKind::File {
            return Err(FenceError::WrongKind {
                path: self.relative.join(path),
                expected: FileKind::File,
                found: info.kind,
            });
        }
        if info.links > 1 {
            return Err(FenceError::OtherLinks {
                path: self.relative.join(path),
                links: info.links,
            });
        }
        Ok(())
    }

    fn check_removable(&self, path: &Path, info: &FileInfo) -> Result<(), FenceError> {
        match info.kind {
            // Removing a link removes the link; what it points to is not touched.
            FileKind::Symlink => Ok(()),
            _ => self.check_changeable(path, info),
        }
    }
}

/// One entry of a [`FencedDir`], as listed: its name, and what it was when listed (a
/// symbolic link is described, not followed).
///
/// ```
/// use mcp_runtime::{FileKind, Root, Roots};
///
/// let dir = std::env::temp_dir().join(format!("fenced-entry-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("src/bin")).unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// // A walk: each folder opened beneath the one it was listed in.
/// let root = roots.open_dir(".").unwrap();
/// let src = root.entries().unwrap().next().unwrap().unwrap();
/// assert_eq!((src.name().to_str(), src.info().kind()), (Some("src"), FileKind::Directory));
/// let bin = src.open_dir().unwrap().entries().unwrap().next().unwrap().unwrap();
/// assert_eq!(bin.relative(), std::path::Path::new("src/bin"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct FencedEntry {
    entry: DirEntry,
    name: OsString,
    info: FileInfo,
    relative: PathBuf,
    fence: Arc<Fence>,
}

impl FencedEntry {
    /// The entry's name in its directory.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// The entry's path relative to the root.
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// What the entry was when listed.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// Opens the entry as a directory, beneath the directory it was listed in — if it is
    /// still the directory listed. One swapped for a symbolic link since is refused
    /// ([`FenceError::Changed`]), so that a walk never strays into another folder.
    pub fn open_dir(&self) -> Result<FencedDir, FenceError> {
        if self.info.kind != FileKind::Directory {
            return Err(FenceError::WrongKind {
                path: self.relative.clone(),
                expected: FileKind::Directory,
                found: self.info.kind,
            });
        }
        let dir = self
            .entry
            .open_dir()
            .map_err(|e| self.fence.error(self.relative.clone(), e))?;
        let opened = dir
            .dir_metadata()
            .map_err(|e| self.fence.error(self.relative.clone(), e))?;
        if FileInfo::from_metadata(&opened).identity != self.info.identity {
            return Err(FenceError::Changed {
                path: self.relative.clone(),
            });
        }
        Ok(FencedDir {
            dir,
            fence: Arc::clone(&self.fence),
            relative: self.relative.clone(),
        })
    }
}

/// What a file is, by its kind.
///
/// ```
/// use mcp_runtime::{FileKind, Root, Roots};
///
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
/// assert_eq!(roots.locate(".").unwrap().metadata().unwrap().kind(), FileKind::Directory);
/// assert_eq!(FileKind::Symlink.to_string(), "symbolic link");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only when it was not followed).
    Symlink,
    /// A FIFO, a socket or a device.
    Other,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::File => "regular file",
            FileKind::Directory => "directory",
            FileKind::Symlink => "symbolic link",
            FileKind::Other => "special file",
        })
    }
}

/// Which file a file is, whatever its name: its device, its inode number, and when it was
/// born. Two names with the same identity are the same file.
///
/// The inode number alone does not tell a file from one created after it was deleted: the
/// new file may get the freed number, and on ext4 the next file created in that folder
/// usually does. The birth time does tell them apart: it is the file system's own
/// (`statx`'s `btime`, on Linux 4.11 and later, on file systems that keep it), or else the
/// time of the file's last status change (`ctime`), which is new for a new file too — but
/// also for the same file once it was written, renamed or given a link, which then counts as
/// another file: a check by identity refuses rather than acts on it.
///
/// Compared on Unix; on other systems every identity is the same, so a check by identity
/// always passes there.
///
/// ```
/// use mcp_runtime::{Root, Roots};
///
/// let dir = std::env::temp_dir().join(format!("file-identity-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("a.txt"), "a").unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// let before = roots.locate("a.txt").unwrap().metadata().unwrap().identity();
/// std::fs::rename(dir.join("a.txt"), dir.join("b.txt")).unwrap();
/// let renamed = roots.locate("b.txt").unwrap().metadata().unwrap().identity();
/// // The same file under another name (a rename changes the `ctime` that stands in for a
/// // birth time where the file system keeps none).
/// if std::fs::metadata(dir.join("b.txt")).unwrap().created().is_ok() {
///     assert_eq!(before, renamed);
/// }
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    /// The birth time (or, where the file system keeps none, the last status change), in
    /// seconds and nanoseconds since 1970.
    born: (i64, u32),
}

impl fmt::Display for FileIdentity {
    /// `device:inode:seconds.nanoseconds`, e.g. to key a question about this very file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (seconds, nanoseconds) = self.born;
        write!(
            f,
            "{}:{}:{seconds}.{nanoseconds:09}",
            self.device, self.inode
        )
    }
}

/// When a file was born, as [`FileIdentity`] keeps it. Where the file system keeps no birth
/// time, a file's last status change stands in (a change of the file makes the identity
/// refuse, never misdirect); a folder's does not, since every entry made or removed in it
/// changes it, and a folder being edited would stop being itself.
#[cfg(unix)]
fn born(metadata: &Metadata) -> (i64, u32) {
    use cap_std::fs::MetadataExt;
    match metadata.created() {
        Ok(created) => match created.into_std().duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => (
                i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
                after.subsec_nanos(),
            ),
            Err(before) => (
                i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
                before.duration().subsec_nanos(),
            ),
        },
        Err(_) if metadata.is_dir() => (0, 0),
        Err(_) => (
            metadata.ctime(),
            u32::try_from(metadata.ctime_nsec()).unwrap_or_default(),
        ),
    }
}

/// What the fence learnt about a file: kind, size, hard links, identity.
///
/// ```
/// use mcp_runtime::{FileKind, Root, Roots};
///
/// let dir = std::env::temp_dir().join(format!("file-info-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("notes.txt"), "twelve bytes").unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// let info = roots.locate("notes.txt").unwrap().metadata().unwrap();
/// assert_eq!((info.kind(), info.size(), info.links()), (FileKind::File, 12, 1));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileInfo {
    kind: FileKind,
    size: u64,
    links: u64,
    identity: FileIdentity,
}

impl FileInfo {
    fn from_metadata(metadata: &Metadata) -> FileInfo {
        let file_type = metadata.file_type();
        let kind = if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        };
        #[cfg(unix)]
        let (identity, links) = {
            use cap_std::fs::MetadataExt;
            let identity = FileIdentity {
                device: metadata.dev(),
                inode: metadata.ino(),
                born: born(metadata),
            };
            (identity, metadata.nlink())
        };
        #[cfg(not(unix))]
        let (identity, links) = (
            FileIdentity {
                device: 0,
                inode: 0,
                born: (0, 0),
            },
            1,
        );
        FileInfo {
            kind,
            size: metadata.len(),
            links,
            identity,
        }
    }

    /// The kind of file.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// How many names (hard links) the file has; 1 on systems that do not say.
    pub fn links(&self) -> u64 {
        self.links
    }

    /// Which file it is, whatever its name.
    pub fn identity(&self) -> FileIdentity {
        self.identity
    }
}

/// Why the fence did not open, write or remove a file. As a tool error (`?` in a tool) it
/// keeps its message, and all but [`FenceError::Io`] carry `_meta`
/// `{"mcp-runtime/error": {"code": …, "path": …}}` with the code of [`FenceError::code`].
///
/// ```
/// use std::io::Write;
/// use mcp_runtime::{FenceError, Root, Roots, ToolError};
///
/// let dir = std::env::temp_dir().join(format!("fence-error-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("notes.txt"), "mine").unwrap();
/// std::fs::hard_link(dir.join("notes.txt"), dir.join("alias.txt")).unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
///
/// let refused = roots.locate("alias.txt").unwrap().create().unwrap_err();
/// assert!(matches!(refused, FenceError::OtherLinks { links: 2, .. }));
/// assert_eq!(refused.code(), Some("file_has_other_links"));
/// let result = ToolError::from(refused).into_result();
/// assert_eq!(result.meta.unwrap()["mcp-runtime/error"]["path"], "alias.txt");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum FenceError {
    /// The path lies outside the roots, or a symbolic link or `..` in it leads out
    /// (`path_outside_roots`).
    Refused(PathRefused),
    /// A write or a removal of a regular file that has other names (`file_has_other_links`):
    /// another name shares its contents, perhaps outside the roots.
    OtherLinks {
        /// The path, relative to its root.
        path: PathBuf,
        /// How many names the file has.
        links: u64,
    },
    /// The path names another kind of file than the operation needs (`wrong_file_kind`).
    WrongKind {
        /// The path, relative to its root.
        path: PathBuf,
        /// The kind needed.
        expected: FileKind,
        /// The kind found.
        found: FileKind,
    },
    /// The name no longer names the file that was checked (`file_changed`).
    Changed {
        /// The path, relative to its root.
        path: PathBuf,
    },
    /// The file system's own error (no such file, permission denied, …).
    Io {
        /// The path, relative to its root (the root itself, absolute, when it cannot be
        /// opened).
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl FenceError {
    /// The code of [`FenceError::OtherLinks`].
    pub const OTHER_LINKS: &'static str = "file_has_other_links";
    /// The code of [`FenceError::WrongKind`].
    pub const WRONG_KIND: &'static str = "wrong_file_kind";
    /// The code of [`FenceError::Changed`].
    pub const CHANGED: &'static str = "file_changed";

    /// The machine-readable code, for all but the file system's own errors.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            FenceError::Refused(_) => Some(PathRefused::CODE),
            FenceError::OtherLinks { .. } => Some(Self::OTHER_LINKS),
            FenceError::WrongKind { .. } => Some(Self::WRONG_KIND),
            FenceError::Changed { .. } => Some(Self::CHANGED),
            FenceError::Io { .. } => None,
        }
    }

    /// The `_meta` of the tool error this becomes, if it has a code.
    pub fn meta(&self) -> Option<Map<String, Value>> {
        let detail = match self {
            FenceError::Refused(refused) => return Some(refused.meta()),
            FenceError::OtherLinks { path, links } => {
                json!({ "code": Self::OTHER_LINKS, "path": shown(path), "links": links })
            }
            FenceError::WrongKind {
                path,
                expected,
                found,
            } => json!({
                "code": Self::WRONG_KIND,
                "path": shown(path),
                "expected": expected.to_string(),
                "found": found.to_string(),
            }),
            FenceError::Changed { path } => json!({ "code": Self::CHANGED, "path": shown(path) }),
            FenceError::Io { .. } => return None,
        };
        let mut meta = Map::new();
        meta.insert(ERROR_META_KEY.into(), detail);
        Some(meta)
    }
}

impl fmt::Display for FenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenceError::Refused(refused) => refused.fmt(f),
            FenceError::OtherLinks { path, links } => write!(
                f,
                "{} has {links} hard links: another name shares its contents, perhaps outside \
                 the roots, so it is neither written nor removed",
                shown(path)
            ),
            FenceError::WrongKind {
                path,
                expected,
                found,
            } => write!(f, "{} is a {found}, not a {expected}", shown(path)),
            FenceError::Changed { path } => write!(
                f,
                "{} is no longer the file that was checked (it was replaced or moved \
                 meanwhile), so it was left alone",
                shown(path)
            ),
            FenceError::Io { path, error } => write!(f, "{}: {error}", shown(path)),
        }
    }
}

impl std::error::Error for FenceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FenceError::Refused(refused) => Some(refused),
            FenceError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<PathRefused> for FenceError {
    fn from(refused: PathRefused) -> Self {
        FenceError::Refused(refused)
    }
}
