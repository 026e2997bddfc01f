//! `ctx.roots()`: the client's roots (`roots/list`), cached per session and refreshed when the
//! client says they changed.

use serde::{Deserialize, Serialize};

use super::Context;
use super::client::{ClientError, read_answer};
use crate::fence::{PathRefused, RootedPath, resolve};

/// One root the client exposes: a `file://` URI and an optional name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI, e.g. `file:///home/ada/project`.
    pub uri: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Deserialize)]
struct ListRootsResult {
    roots: Vec<Root>,
}

/// The client's roots, and the fence they make for paths the client sends.
///
/// ```
/// use mcp_runtime::{Root, Roots};
///
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// let roots = Roots::new(vec![Root { uri: format!("file://{}", dir.display()), name: None }]);
/// assert!(roots.resolve("notes.txt").is_ok());
/// assert!(roots.resolve("../etc/passwd").is_err());
/// assert!(roots.resolve("/etc/passwd").is_err());
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

    /// Resolves a path the client sent (relative to the first root, or absolute, or a
    /// `file://` URI) to a path inside one of the roots, refusing anything that could reach
    /// outside them: `..` segments, absolute paths elsewhere, symbolic links that lead out,
    /// Windows-style separators, drive letters and device names, percent-encoded separators
    /// and dots, and control characters.
    ///
    /// The check is made against the file system as it is now; a path that is resolved and
    /// then used later can race with a change on disk, so resolve right before use.
    pub fn resolve(&self, path: &str) -> Result<RootedPath, PathRefused> {
        resolve(&self.roots, path)
    }
}

impl Context {
    /// The client's roots (`roots/list`), asked once per session and asked again after the
    /// client announces a change. Needs the client's `roots` capability.
    pub async fn roots(&self) -> Result<Roots, ClientError> {
        self.require(&["roots"], "roots")?;
        if let Some(cached) = self.inner.session.cached_roots() {
            return Ok(Roots::new(cached));
        }
        let answer = self
            .request_client("roots/list", &serde_json::json!({}), None)
            .await?;
        let result: ListRootsResult = read_answer("roots/list", answer)?;
        self.inner.session.cache_roots(result.roots.clone());
        Ok(Roots::new(result.roots))
    }
}
