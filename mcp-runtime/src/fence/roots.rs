//! [`Roots`]: the client's roots as a fence, the entry to every fenced path and handle.

use super::{FenceError, FencedDir, FencedPath, PathRefused, RootedPath, locate, resolve};
use crate::protocol::Root;

/// The client's roots, and the fence they make for paths the client sends.
///
/// [`Roots::locate`] places a path inside a root and holds the root open; its handles
/// ([`FencedPath`], [`FencedDir`]) open, create, list and remove files beneath it, refusing
/// whatever would lead out at the moment of each open. That is the safe way to touch files.
/// [`Roots::resolve`] only names a path, checked against the disk as it was.
///
/// ```
/// use mcp_runtime::{FenceError, Root, Roots};
///
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
/// assert!(roots.locate("notes.txt").is_ok());
/// assert!(matches!(roots.locate("../etc/passwd"), Err(FenceError::Refused(_))));
/// assert!(matches!(roots.locate("/etc/passwd"), Err(FenceError::Refused(_))));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<Root>,
}

impl Roots {
    /// A fence made of these roots.
    pub fn new(roots: Vec<Root>) -> Self {
        Roots { roots }
    }

    /// The roots.
    pub fn as_slice(&self) -> &[Root] {
        &self.roots
    }

    /// Places a path the client sent (relative to the first root, or absolute, or a
    /// `file://` URI) inside one of the roots and opens that root: the handle every later
    /// operation goes through. Refused here: `..` segments, absolute paths elsewhere,
    /// Windows-style separators, drive letters and device names, percent-encoded separators
    /// and dots, and control characters. Refused when the file is opened: symbolic links and
    /// `..` that lead out, checked by the kernel as it opens, so nothing can be swapped
    /// between the check and the use.
    ///
    /// ```
    /// use mcp_runtime::{Root, Roots};
    ///
    /// let dir = std::env::temp_dir().join(format!("roots-locate-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// # #[cfg(unix)]
    /// std::os::unix::fs::symlink("/etc", dir.join("escape")).unwrap();
    /// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
    ///
    /// let file = roots.locate("escape/passwd").unwrap(); // a name, inside the root…
    /// # #[cfg(unix)]
    /// assert!(file.open_read().is_err()); // …whose link out is refused as it opens
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn locate(&self, path: &str) -> Result<FencedPath, FenceError> {
        FencedPath::open(locate(&self.roots, path)?)
    }

    /// Opens the directory a path the client sent names, beneath its root: shorthand for
    /// `roots.locate(path)?.open_dir()`.
    ///
    /// ```
    /// use mcp_runtime::{Root, Roots};
    ///
    /// let dir = std::env::temp_dir().canonicalize().unwrap();
    /// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
    /// assert_eq!(roots.open_dir(".").unwrap().root(), dir);
    /// ```
    pub fn open_dir(&self, path: &str) -> Result<FencedDir, FenceError> {
        self.locate(path)?.open_dir()
    }

    /// The *name* of a path the client sent inside one of the roots, by the rules of
    /// [`Roots::locate`], with the symbolic links of its existing part resolved — as the disk
    /// is now.
    ///
    /// Only a name, to show or to compare: a path checked now and opened later can be raced
    /// (a folder on it swapped for a link out in between), so never open what this returns;
    /// open through [`Roots::locate`].
    pub fn resolve(&self, path: &str) -> Result<RootedPath, PathRefused> {
        resolve(&self.roots, path)
    }
}
