//! A client's configuration file changed without losing what the user keeps in it.
//!
//! The file often holds much more than MCP servers (Claude Code keeps its whole state in
//! `~/.claude.json`), sometimes secrets, and it may be a link into a dotfiles repository or
//! belong to another user when the command runs under `sudo`. So:
//!
//! - a link is written through to the file it points to, and stays a link;
//! - a read-only file is refused: its mode says it is not to be changed;
//! - the new file gets the old one's owner and permissions from its first byte (a new file is
//!   readable by its owner only), and reaches the disk before it is renamed into place;
//! - its temporary name is random and created exclusively, so nothing planted at that name
//!   (a link to another file) can redirect the write;
//! - one `cargo mcp` at a time reads, merges and writes a file, under a lock; a second one
//!   waits, then merges with what the first wrote;
//! - the backup is made only once the new content is safely on disk, under a name no other
//!   file holds; when anything fails, every file made so far is removed, so "nothing was
//!   changed" is true.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::Failure;

/// The file as it was when it was read, under the lock.
pub(crate) struct Original {
    pub(crate) text: String,
    metadata: Metadata,
}

/// The file `path` names, found and locked for a read–merge–write.
pub(crate) struct ConfigFile {
    /// The file that is read and replaced: `path`, or what it links to.
    pub(crate) target: PathBuf,
    /// Held until the new file is in place; closing it releases the lock.
    _lock: Option<File>,
}

impl ConfigFile {
    /// The file behind `path` (through a symbolic link), not locked: for `--dry-run`.
    pub(crate) fn find(path: &Path) -> Result<ConfigFile, Failure> {
        Ok(ConfigFile {
            target: resolve(path)?,
            _lock: None,
        })
    }

    /// The file behind `path`, its folder created, locked against other `cargo mcp install`
    /// runs until this value is dropped.
    ///
    /// The lock is taken on a file beside the configuration (`FILE.cargo-mcp.lock`), never on
    /// the configuration itself: the configuration is replaced by a rename, so a lock on it
    /// would be held on a file no longer at its path, and a second run that opened the path
    /// before the rename would merge into the old content and lose the first run's entry.
    pub(crate) fn lock(path: &Path) -> Result<ConfigFile, Failure> {
        let target = resolve(path)?;
        if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Failure::Failed(format!(
                    "cannot create {}: {e}; nothing was changed",
                    dir.display()
                ))
            })?;
        }
        let lock_path = with_suffix(&target, ".cargo-mcp.lock");
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true);
        let lock = options
            .open(&lock_path)
            // A lock file made by another user (a run under sudo) can still be locked
            // read-only.
            .or_else(|_| File::open(&lock_path))
            .map_err(|e| {
                Failure::Failed(format!(
                    "cannot open the lock file {}: {e}; nothing was changed",
                    lock_path.display()
                ))
            })?;
        if lock.try_lock().is_err() {
            eprintln!(
                "cargo mcp: waiting for another cargo mcp to finish with {}…",
                target.display()
            );
            lock.lock().map_err(|e| {
                Failure::Failed(format!(
                    "cannot lock {}: {e}; nothing was changed",
                    lock_path.display()
                ))
            })?;
        }
        Ok(ConfigFile {
            target,
            _lock: Some(lock),
        })
    }

    /// The file's text and metadata, or `None` when there is no file yet.
    pub(crate) fn read(&self) -> Result<Option<Original>, Failure> {
        let text = match std::fs::read_to_string(&self.target) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Failure::Failed(format!(
                    "cannot read {}: {e}",
                    self.target.display()
                )));
            }
        };
        let metadata = std::fs::metadata(&self.target)
            .map_err(|e| Failure::Failed(format!("cannot read {}: {e}", self.target.display())))?;
        Ok(Some(Original { text, metadata }))
    }

    /// Refuses a file the user has made read-only, or cannot write.
    ///
    /// The rename that replaces the file needs only the folder to be writable, so without
    /// this check a file marked read-only would be replaced all the same.
    pub(crate) fn check_writable(&self, original: &Original) -> Result<(), Failure> {
        let refuse = |why: String| {
            Failure::Failed(format!(
                "{} is {why}; nothing was changed: make it writable (chmod u+w) if it is \
                 meant to change, or pass --config to write another file",
                self.target.display()
            ))
        };
        if original.metadata.permissions().readonly() {
            return Err(refuse("read-only".into()));
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            if let Ok(c_path) = std::ffi::CString::new(self.target.as_os_str().as_bytes()) {
                // SAFETY: `c_path` is a NUL-terminated string that outlives the call.
                if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } != 0 {
                    let e = std::io::Error::last_os_error();
                    return Err(refuse(format!("not writable by you ({e})")));
                }
            }
        }
        Ok(())
    }

    /// Replaces the file with `content`: written to a new temporary file with the old
    /// file's owner and permissions, flushed to disk, the old file copied to a backup, then
    /// renamed into place. Returns the backup's name.
    pub(crate) fn replace(
        &self,
        original: Option<&Original>,
        content: &str,
    ) -> Result<Option<PathBuf>, Failure> {
        let target = &self.target;
        let fail = |what: &str, p: &Path, e: std::io::Error| {
            Failure::Failed(format!(
                "cannot {what} {}: {e}; nothing was changed",
                p.display()
            ))
        };
        let metadata = original.map(|o| &o.metadata);
        let (temporary, mut file) = create_exclusive(target, ".cargo-mcp-", ".tmp", metadata)
            .map_err(|e| fail("create a temporary file beside", target, e))?;
        // From here on, every failure removes what was made.
        let written = file
            .write_all(content.as_bytes())
            .and_then(|()| file.sync_all());
        drop(file);
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(fail("write", &temporary, e));
        }
        let backup = match original {
            Some(original) => match write_backup(target, original) {
                Ok(backup) => Some(backup),
                Err(e) => {
                    let _ = std::fs::remove_file(&temporary);
                    return Err(fail("back up", target, e));
                }
            },
            None => None,
        };
        if let Err(e) = std::fs::rename(&temporary, target) {
            let _ = std::fs::remove_file(&temporary);
            if let Some(backup) = &backup {
                let _ = std::fs::remove_file(backup);
            }
            return Err(fail("replace", target, e));
        }
        sync_folder(target);
        Ok(backup)
    }
}

/// `path`, or the file it links to. A link to nothing is refused: creating its target
/// (perhaps in a folder that does not exist) is rarely what the user meant.
fn resolve(path: &Path) -> Result<PathBuf, Failure> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(path.to_owned());
    }
    std::fs::canonicalize(path).map_err(|e| {
        let points_to = std::fs::read_link(path)
            .map(|to| to.display().to_string())
            .unwrap_or_else(|_| "?".into());
        Failure::Failed(format!(
            "{} is a symbolic link to {points_to}, which cannot be reached ({e}); nothing \
             was changed: create the file it points to, or pass --config to write another file",
            path.display()
        ))
    })
}

/// `FILE.bak`, or `FILE.bak.2`, `FILE.bak.3`… when that name is taken, holding the old text.
/// Created exclusively, so that a backup made at the same moment by another run, or a link
/// planted at that name, is never written over.
fn write_backup(target: &Path, original: &Original) -> std::io::Result<PathBuf> {
    for n in 1..10_000u32 {
        let name = if n == 1 {
            with_suffix(target, ".bak")
        } else {
            with_suffix(target, &format!(".bak.{n}"))
        };
        let mut file = match open_new(&name, Some(&original.metadata)) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let written = file
            .write_all(original.text.as_bytes())
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = std::fs::remove_file(&name);
            return Err(e);
        }
        return Ok(name);
    }
    Err(std::io::Error::new(
        ErrorKind::AlreadyExists,
        "every backup name up to .bak.9999 is taken",
    ))
}

/// A new file beside `target` named `target`+`infix`+random+`suffix`, created exclusively
/// (retrying on a name that is taken).
fn create_exclusive(
    target: &Path,
    infix: &str,
    suffix: &str,
    like: Option<&Metadata>,
) -> std::io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..16 {
        let name = with_suffix(target, &format!("{infix}{}{suffix}", random_hex()));
        match open_new(&name, like) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| ErrorKind::AlreadyExists.into()))
}

/// Creates `name`, which must not exist (not even as a link: `O_EXCL` does not follow one),
/// with the permissions and owner of `like`, or readable by its owner only when there is no
/// old file. Nothing is written before the mode and owner are set, so a secret never sits in
/// a file others can read. When the owner cannot be kept, the file is removed and the error
/// returned.
fn open_new(name: &Path, like: Option<&Metadata>) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
        // The umask may only narrow this; the exact mode is set below.
        let mode = like.map_or(0o600, |m| m.mode() & 0o7777);
        options.mode(mode & 0o777);
        let file = options.open(name)?;
        let keep = || -> std::io::Result<()> {
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
            if let Some(like) = like {
                let mine = file.metadata()?;
                if (mine.uid(), mine.gid()) != (like.uid(), like.gid()) {
                    std::os::unix::fs::fchown(&file, Some(like.uid()), Some(like.gid())).map_err(
                        |e| {
                            std::io::Error::new(
                                e.kind(),
                                format!(
                                    "the file belongs to user {} and group {}, and this \
                                     process cannot give the new file that owner ({e})",
                                    like.uid(),
                                    like.gid()
                                ),
                            )
                        },
                    )?;
                }
            }
            Ok(())
        };
        if let Err(e) = keep() {
            drop(file);
            let _ = std::fs::remove_file(name);
            return Err(e);
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        let file = options.open(name)?;
        if let Some(like) = like {
            let _ = file.set_permissions(like.permissions());
        }
        Ok(file)
    }
}

/// Makes the rename itself durable: without this, a crash soon after may bring back the old
/// name's content, or neither. Some file systems cannot sync a folder; the new file is in
/// place all the same, so a failure here is not reported.
fn sync_folder(target: &Path) {
    #[cfg(unix)]
    if let Some(dir) = target.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = target;
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// 64 random bits, from the randomly keyed hasher of the standard library: a temporary name
/// nobody can guess in advance. (It need not be secret: the file is created exclusively.)
fn random_hex() -> String {
    use std::hash::{BuildHasher, RandomState};
    let seed = (
        std::process::id(),
        std::time::SystemTime::now(),
        std::thread::current().id(),
    );
    format!("{:016x}", RandomState::new().hash_one(seed))
}
