//! The roots fence: a path a client sent, placed inside one of the client's roots or refused.
//!
//! Two layers, each answering its own way of escaping a directory:
//!
//! - the *text* of the path ([`locate`], [`resolve`]): `..` segments, absolute paths
//!   elsewhere, Windows separators, drive letters and device names, percent-encoded dots and
//!   separators, control characters. This decides which root a path belongs to and what is
//!   left of it beneath that root;
//! - the *file system* ([`handles`]): the root is opened once, and everything beneath it is
//!   opened through that handle by `cap-std`, which resolves each name beneath the handle —
//!   on Linux in one `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` call, elsewhere (or
//!   where a sandbox forbids `openat2`) one component at a time with `O_NOFOLLOW` — and
//!   refuses a symbolic link that leads out *at the moment of the open*. So the file a tool
//!   touches is the file the fence checked: there is no path to swap between a check and a
//!   use.
//!
//! `cap-std` rather than `openat2` by hand: it is the Bytecode Alliance's capability library
//! (Wasmtime's file sandbox), it has the fallback for kernels and sandboxes without
//! `openat2` (older Linux, seccomp filters that answer `ENOSYS` or `EPERM`), and it covers
//! the other systems too, none of which we would otherwise write or test.
//!
//! [`resolve`] survives for callers that only need a name (to show, or to compare); a name
//! checked and used later is exactly the race the handles close.

mod handles;
mod roots;

use std::fmt;
use std::ops::Deref;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::protocol::{ERROR_META_KEY, Root};
use crate::uri_template::percent_decode;

pub use handles::{
    FenceError, FencedDir, FencedEntry, FencedPath, FileIdentity, FileInfo, FileKind,
};
pub use roots::Roots;

/// The *name* of a path inside one of the client's roots, as it was when
/// [`Roots::resolve`](crate::Roots::resolve) looked.
///
/// Only a name: opening it later walks the path again, and whoever can write inside the root
/// can swap a folder on it for a symbolic link that leads out between the check and the use.
/// To touch files, use the handles of [`Roots::locate`](crate::Roots::locate) instead.
///
/// ```
/// use mcp_runtime::{Root, Roots};
///
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
/// let name = roots.resolve("notes/today.txt").unwrap();
/// assert_eq!(name.relative(), std::path::Path::new("notes/today.txt"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootedPath {
    path: PathBuf,
    root: PathBuf,
}

impl RootedPath {
    /// The path (symbolic links in its existing part resolved).
    pub fn as_path(&self) -> &Path {
        &self.path
    }

    /// The root it lies in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path relative to its root.
    pub fn relative(&self) -> &Path {
        self.path.strip_prefix(&self.root).unwrap_or(&self.path)
    }
}

impl Deref for RootedPath {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for RootedPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A path refused by the roots fence. As a tool error it names the allowed roots and carries
/// `_meta` `{"mcp-runtime/error": {"code": "path_outside_roots", …}}`.
///
/// ```
/// use mcp_runtime::{PathRefused, Root, Roots, ToolError};
///
/// let roots = Roots::new(vec![Root { uri: "file:///srv/notes".into(), name: None }]);
/// let refused: PathRefused = roots.resolve("../etc/passwd").unwrap_err();
/// assert_eq!(refused.roots, ["/srv/notes"]);
/// let result = ToolError::from(refused).into_result();
/// assert_eq!(result.meta.unwrap()["mcp-runtime/error"]["code"], "path_outside_roots");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRefused {
    /// The path as the client sent it.
    pub path: String,
    /// Why it was refused.
    pub reason: String,
    /// The allowed roots, as local paths.
    pub roots: Vec<String>,
}

impl PathRefused {
    /// The machine-readable code of every refusal.
    pub const CODE: &'static str = "path_outside_roots";

    /// The `_meta` of the tool error this refusal becomes.
    pub fn meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(
            ERROR_META_KEY.into(),
            json!({ "code": Self::CODE, "path": self.path, "reason": self.reason, "roots": self.roots }),
        );
        meta
    }
}

impl fmt::Display for PathRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the path {:?} is refused: {}; ", self.path, self.reason)?;
        if self.roots.is_empty() {
            f.write_str("the client exposes no file roots")
        } else {
            write!(f, "paths must lie inside {}", self.roots.join(", "))
        }
    }
}

impl std::error::Error for PathRefused {}

/// Windows device names, which name a device in any directory and with any extension.
const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Where the text of a path places it: a root (as written and as on disk), and what is left
/// of the path beneath that root. Nothing on disk is looked at but the roots themselves.
pub(crate) struct Placement {
    /// The root as it is on disk (links in its own path resolved).
    pub root: PathBuf,
    /// The path beneath the root: relative, normalised, without `..`.
    pub relative: PathBuf,
    /// Every allowed root as written, for refusals.
    pub roots: Arc<[String]>,
}

/// Places a path the client sent beneath one of the roots by its text alone, refusing the
/// shapes that escape a directory. Nothing beneath the root is looked at: that is the
/// handles' work, at the moment they open.
pub(crate) fn locate(roots: &[Root], input: &str) -> Result<Placement, PathRefused> {
    // Each root as written (normalised) and as it is on disk.
    let local_roots: Vec<(PathBuf, PathBuf)> = roots
        .iter()
        .filter_map(|r| root_path(&r.uri))
        .map(|lexical| {
            let real = lexical.canonicalize().unwrap_or_else(|_| lexical.clone());
            (lexical, real)
        })
        .collect();
    let allowed: Arc<[String]> = local_roots
        .iter()
        .map(|(r, _)| r.display().to_string())
        .collect();
    let refuse = |reason: &str| PathRefused {
        path: input.to_owned(),
        reason: reason.to_owned(),
        roots: allowed.to_vec(),
    };
    if local_roots.is_empty() {
        return Err(refuse("there is no file root to resolve it in"));
    }
    let text = match input.strip_prefix("file://") {
        Some(rest) => {
            // A `?` or `#` ends a URI's path: what follows is no part of the file's name (a
            // name holding one writes it `%3F`, `%23`), and a file URI has no use for it.
            if rest.contains(['?', '#']) {
                return Err(refuse(
                    "a file URI names a file by its path alone: it has a query or fragment (`?`, `#`)",
                ));
            }
            let decoded = percent_decode(strip_localhost(rest))
                .ok_or_else(|| refuse("it is not a valid file URI"))?;
            if !decoded.starts_with('/') {
                return Err(refuse("a file URI must name an absolute path"));
            }
            decoded
        }
        None => {
            check_plain(input).map_err(refuse)?;
            input.to_owned()
        }
    };
    check_components(&text).map_err(refuse)?;
    let candidate = if text.starts_with('/') {
        PathBuf::from(&text)
    } else {
        local_roots[0].1.join(&text)
    };
    let candidate = normalise(&candidate);
    let (root, relative) = local_roots
        .iter()
        .find_map(|(lexical, real)| {
            let relative = candidate
                .strip_prefix(lexical)
                .or_else(|_| candidate.strip_prefix(real))
                .ok()?;
            Some((real.clone(), relative.to_path_buf()))
        })
        .ok_or_else(|| refuse("it lies outside the roots"))?;
    Ok(Placement {
        root,
        relative,
        roots: allowed,
    })
}

pub(crate) fn resolve(roots: &[Root], input: &str) -> Result<RootedPath, PathRefused> {
    let Placement {
        root,
        relative,
        roots,
    } = locate(roots, input)?;
    let refuse = |reason: &str| PathRefused {
        path: input.to_owned(),
        reason: reason.to_owned(),
        roots: roots.to_vec(),
    };
    // Symbolic links: the existing part of the path is resolved on disk and must still lie
    // inside the root as it is on disk — as it is now, which is why this is only a name.
    let resolved =
        resolve_existing(&root.join(&relative)).map_err(|_| refuse("it cannot be read"))?;
    if !resolved.starts_with(&root) {
        return Err(refuse("a symbolic link in it leads outside the roots"));
    }
    Ok(RootedPath {
        path: resolved,
        root,
    })
}

/// The local directory of a `file://` root; other schemes are no file roots.
fn root_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    if rest.contains(['?', '#']) {
        return None;
    }
    let decoded = percent_decode(strip_localhost(rest))?;
    if !decoded.starts_with('/') || decoded.split('/').any(|c| c == "..") {
        return None;
    }
    Some(normalise(Path::new(&decoded)))
}

fn strip_localhost(rest: &str) -> &str {
    rest.strip_prefix("localhost").unwrap_or(rest)
}

/// Rules for a plain path (not a URI).
fn check_plain(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("it is empty");
    }
    if path.contains('\\') {
        return Err("it contains a backslash (a Windows separator)");
    }
    if path.contains(':') {
        return Err("it contains `:` (a drive letter, stream name or scheme)");
    }
    // Percent-encoded dots, separators, percent signs and NULs are what an attacker sends to
    // get past a check that a later decoding would undo.
    let lower = path.to_ascii_lowercase();
    for escape in ["%2e", "%2f", "%5c", "%25", "%00", "%3a"] {
        if lower.contains(escape) {
            return Err("it contains a percent-encoded dot, separator or control character");
        }
    }
    Ok(())
}

/// Rules for every path, decoded.
fn check_components(path: &str) -> Result<(), &'static str> {
    if path.chars().any(char::is_control) {
        return Err("it contains a control character");
    }
    for component in path.split('/') {
        if component == ".." {
            return Err("it contains a `..` segment");
        }
        if component.is_empty() || component == "." {
            continue;
        }
        if component.ends_with('.') || component.ends_with(' ') {
            return Err("a segment ends with a dot or a space (Windows drops them)");
        }
        let stem = component
            .split('.')
            .next()
            .unwrap_or(component)
            .to_ascii_lowercase();
        if DEVICE_NAMES.contains(&stem.trim_end()) {
            return Err("a segment is a Windows device name");
        }
    }
    Ok(())
}

/// Removes `.` components and empty segments (no `..` reaches here).
fn normalise(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// Resolves symbolic links in the longest existing prefix; the rest is appended as it is.
fn resolve_existing(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let mut out = real;
                out.extend(rest.iter().rev());
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symbolic link is not "missing": it points somewhere unknown.
                if existing.symlink_metadata().is_ok() {
                    return Err(e);
                }
                match (
                    existing.file_name().map(ToOwned::to_owned),
                    existing.parent(),
                ) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        existing = parent.to_path_buf();
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}
