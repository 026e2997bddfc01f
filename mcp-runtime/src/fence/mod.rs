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

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};
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

/// The bytes a file URI's path writes as they are: RFC 3986's unreserved characters and the
/// `/` between segments. Every other byte is escaped — `%` itself, and `?` and `#`, which
/// would end the path.
const FILE_URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The `file://` URI of a local path, as the fence reads it back: for a root of the client's
/// ([`Root::uri`](crate::Root::uri)) or a file named to a client (an embedded resource's URI).
///
/// Every byte but RFC 3986's unreserved characters (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`,
/// `_`, `~`) and `/` is percent-encoded, so that a name holding a space, `?`, `#` or `%` is
/// still one URI naming that file (RFC 8089), and the path it decodes to is the path given —
/// where `format!("file://{}", path.display())` would end the path at a `#` and read a `%20`
/// in a folder's name as a space.
///
/// `None` for a path that does not begin with `/`: a relative path has no file URI. The path
/// is written as given (`.` and `..` too: the fence refuses a root or a path with `..`). On
/// Unix a name that is not UTF-8 is encoded byte by byte, as RFC 3986 allows, but the fence
/// reads only UTF-8 names and refuses such a URI.
///
/// ```
/// use std::path::Path;
/// use mcp_runtime::{Root, Roots, file_uri};
///
/// assert_eq!(
///     file_uri("/srv/my notes/why?#50%.txt").as_deref(),
///     Some("file:///srv/my%20notes/why%3F%2350%25.txt"),
/// );
/// assert_eq!(file_uri("notes/today.txt"), None);
///
/// // A root the server chose, and a file a client names by its URI: `?` and `#` are part of
/// // the name, not a query and a fragment.
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// let roots = Roots::new(vec![Root { uri: file_uri(&dir).unwrap(), name: None }]);
/// let uri = file_uri(dir.join("why?#50%.txt")).unwrap();
/// assert_eq!(roots.resolve(&uri).unwrap().relative(), Path::new("why?#50%.txt"));
/// ```
pub fn file_uri(path: impl AsRef<Path>) -> Option<String> {
    // On Unix, the name's own bytes; elsewhere UTF-8 for every name that is Unicode.
    let bytes = path.as_ref().as_os_str().as_encoded_bytes();
    if bytes.first() != Some(&b'/') {
        return None;
    }
    Some(format!("file://{}", percent_encode(bytes, FILE_URI_PATH)))
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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    /// Whether `uri` is `file://` and a path of unreserved characters, `/` and `%XX` escapes
    /// (upper-case hex) alone.
    fn is_escaped(uri: &str) -> bool {
        let Some(path) = uri.strip_prefix("file://") else {
            return false;
        };
        let bytes = path.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'%' => {
                    let hex = bytes.get(at + 1..at + 3).unwrap_or_default();
                    if hex.len() != 2 || !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'F'))
                    {
                        return false;
                    }
                    at += 3;
                }
                b if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) => at += 1,
                _ => return false,
            }
        }
        true
    }

    #[test]
    fn a_name_that_would_end_or_change_the_uri_is_escaped() {
        let uri = file_uri("/srv/a b/why?#50%;=+&@:'[]!.txt").unwrap();
        assert_eq!(
            uri,
            "file:///srv/a%20b/why%3F%2350%25%3B%3D%2B%26%40%3A%27%5B%5D%21.txt"
        );
        assert_eq!(
            root_path(&uri),
            Some(PathBuf::from("/srv/a b/why?#50%;=+&@:'[]!.txt"))
        );
    }

    #[test]
    fn unreserved_characters_and_slashes_are_written_as_they_are() {
        let path = "/AZaz09-._~/x/";
        assert_eq!(file_uri(path).unwrap(), format!("file://{path}"));
    }

    #[test]
    fn every_other_ascii_byte_is_escaped_in_upper_case_hex() {
        for byte in 1..=0x7f_u8 {
            let path = format!("/{}", char::from(byte));
            let uri = file_uri(&path).unwrap();
            let expected = if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
                format!("file://{path}")
            } else {
                format!("file:///%{byte:02X}")
            };
            assert_eq!(uri, expected, "byte {byte:#04x}");
        }
    }

    #[test]
    fn a_name_beyond_ascii_is_escaped_as_its_utf8_bytes() {
        assert_eq!(file_uri("/é/日").unwrap(), "file:///%C3%A9/%E6%97%A5");
        assert_eq!(
            root_path("file:///%C3%A9/%E6%97%A5"),
            Some(PathBuf::from("/é/日"))
        );
    }

    #[test]
    fn a_path_that_does_not_begin_with_a_slash_has_no_file_uri() {
        for path in [
            "",
            "notes.txt",
            "./notes",
            "../etc",
            "~/notes",
            "C:\\notes",
            "C:/notes",
        ] {
            assert_eq!(file_uri(path), None, "{path:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_named_by_its_uri_is_placed_under_its_own_name() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let roots = [Root {
            uri: file_uri(&dir).unwrap(),
            name: None,
        }];
        for name in ["why?#.txt", "50%.txt", "a b", "%2e%2e", "%2F"] {
            let uri = file_uri(dir.join(name)).unwrap();
            let placed = locate(&roots, &uri).unwrap_or_else(|refused| panic!("{uri}: {refused}"));
            assert_eq!(placed.relative, Path::new(name), "{uri}");
        }
    }

    /// A name that is not UTF-8 is escaped byte by byte, and decodes to those bytes; the fence,
    /// which reads UTF-8 names alone, refuses it rather than read another name.
    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_escaped_byte_by_byte_and_refused_by_the_fence() {
        use std::os::unix::ffi::OsStringExt;
        let path = PathBuf::from(OsString::from_vec(b"/srv/caf\xe9/\xff\x80".to_vec()));
        let uri = file_uri(&path).unwrap();
        assert_eq!(uri, "file:///srv/caf%E9/%FF%80");
        let bytes: Vec<u8> =
            percent_encoding::percent_decode_str(&uri["file://".len()..]).collect();
        assert_eq!(bytes, path.as_os_str().as_encoded_bytes());
        assert_eq!(root_path(&uri), None);
    }

    /// xorshift64*: generated paths, the same on every run.
    struct Paths(u64);

    impl Paths {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// An absolute path of 1 to 6 segments, none of them `.` or `..`: each character
        /// drawn from the ones a URI gives a meaning to, controls, the unreserved ones, and
        /// names beyond ASCII.
        fn utf8(&mut self) -> String {
            const CHARS: &[char] = &[
                'a', 'Z', '0', '-', '.', '_', '~', ' ', '%', '?', '#', '&', '=', '+', ';', ':',
                '@', '!', '$', '\'', '(', ')', '*', ',', '[', ']', '\\', '"', '<', '>', '^', '`',
                '{', '|', '}', '\0', '\n', '\t', '\u{7f}', 'é', 'ß', '日', '\u{fffd}', '\u{200b}',
                '😀',
            ];
            let mut path = String::new();
            for _ in 0..=self.below(6) {
                path.push('/');
                loop {
                    let mut segment = String::new();
                    for _ in 0..=self.below(12) {
                        segment.push(CHARS[self.below(CHARS.len())]);
                    }
                    if segment != "." && segment != ".." {
                        path.push_str(&segment);
                        break;
                    }
                }
            }
            path
        }

        /// An absolute path of any bytes but `/` in 1 to 6 segments (Unix names).
        #[cfg(unix)]
        fn bytes(&mut self) -> PathBuf {
            use std::os::unix::ffi::OsStringExt;
            let mut path = Vec::new();
            for _ in 0..=self.below(6) {
                let length = self.below(12) + 1;
                let segment = (0..length).map(|_| match self.next() as u8 {
                    b'/' => b'%',
                    byte => byte,
                });
                path.extend(std::iter::once(b'/').chain(segment));
            }
            PathBuf::from(OsString::from_vec(path))
        }
    }

    #[test]
    fn generated_paths_round_trip_through_the_fence_decoder() {
        let mut paths = Paths(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let path = paths.utf8();
            let uri = file_uri(&path).unwrap();
            assert!(is_escaped(&uri), "{path:?} → {uri}");
            assert_eq!(
                percent_decode(&uri["file://".len()..]).as_deref(),
                Some(path.as_str()),
                "{uri}"
            );
            assert_eq!(root_path(&uri), Some(PathBuf::from(&path)), "{uri}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn generated_unix_names_round_trip_byte_for_byte() {
        let mut paths = Paths(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let path = paths.bytes();
            let uri = file_uri(&path).unwrap();
            assert!(is_escaped(&uri), "{path:?} → {uri}");
            let bytes: Vec<u8> =
                percent_encoding::percent_decode_str(&uri["file://".len()..]).collect();
            assert_eq!(bytes, path.as_os_str().as_encoded_bytes(), "{uri}");
            // The fence reads back the names that are UTF-8, and no other; and refuses `..`.
            let expected = path
                .to_str()
                .filter(|text| !text.split('/').any(|segment| segment == ".."))
                .map(|_| normalise(&path));
            assert_eq!(root_path(&uri), expected, "{uri}");
        }
    }
}
