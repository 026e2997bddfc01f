//! A workspace server: the `fs/` and `project/` namespaces of the design documents, served as
//! JSON-RPC methods of the server's own beside MCP, over one folder named on the command line.
//!
//! - `fs/readFile`, `fs/writeFile` and `fs/listDirectory` ([`fs`]) read and change files under
//!   the workspace root, contents in base64. Every path goes through the fence
//!   ([`Workspace::locate`]) and every file is opened through the handle it returns, so `../x`,
//!   absolute paths elsewhere and symbolic links that lead out are refused with `-32602`;
//! - `fs/didChange` ([`watch`]) tells every connected client what was created, modified or
//!   deleted under the root, whoever changed it (the server's own `fs/writeFile` included):
//!   inotify on Linux, a scan every 500 ms elsewhere or with `--poll`;
//! - `project/listTools` and `project/executeTool` ([`project`]) run the server's own tools,
//!   behind an allowlist, never a shell; the same tools are MCP tools (`tools/list`,
//!   `tools/call`).
//!
//! The namespaces are declared as the extension `com.example/workspace`. Run it with
//! `cargo run -p workspace -- --root DIR` (`--http 127.0.0.1:8080` serves Streamable HTTP).

mod fs;
mod project;
mod watch;

use std::fmt::Display;
use std::io;
use std::path::{Path, PathBuf};

use mcp_runtime::protocol::RpcError;
use mcp_runtime::serde_json::{Map, json};
use mcp_runtime::{
    Context, ERROR_META_KEY, FenceError, FencedPath, Root, Roots, State, ToolError, file_uri,
};

/// The id of the extension that declares the namespaces.
const EXTENSION: &str = "com.example/workspace";

/// The folder every handler works in, as a fence: given to the server as state, taken as
/// `State<Workspace>` by the tools and through [`workspace`] by the methods.
pub struct Workspace {
    /// The root as it is on disk (symbolic links in its own path resolved).
    root: PathBuf,
    /// The fence made of that one root: every path a client sends is placed beneath it.
    roots: Roots,
}

impl Workspace {
    /// The workspace at `root`, which must be a directory.
    fn open(root: &Path) -> Result<Workspace, String> {
        let shown = root.display();
        let root = root
            .canonicalize()
            .map_err(|e| format!("cannot open the workspace root {shown}: {e}"))?;
        if !root.is_dir() {
            return Err(format!(
                "the workspace root {shown} is not a directory: name a folder with --root"
            ));
        }
        // The fence reads the root's URI back as UTF-8: a root that is not would fence nothing.
        if root.to_str().is_none() {
            return Err(format!(
                "the workspace root {shown} is not valid UTF-8: name another folder"
            ));
        }
        // Escaped, so that a `%` or `#` in a folder's name is read back as itself.
        let uri = file_uri(&root)
            .ok_or_else(|| format!("the workspace root {shown} is not an absolute path"))?;
        let roots = Roots::new(vec![Root {
            uri,
            name: Some("workspace".into()),
        }]);
        Ok(Workspace { root, roots })
    }

    /// The root, as it is on disk.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The fence of the root, for the watcher.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Places a path a client sent (`/` between folders, relative to the root or absolute
    /// inside it) beneath the root, which it holds open. Refused by its text: `..`, absolute
    /// paths elsewhere, backslashes, drive letters and device names, percent-encoded dots and
    /// separators. Refused when opened: symbolic links that lead out.
    pub fn locate(&self, path: &str) -> Result<FencedPath, RpcError> {
        self.roots.locate(path).map_err(fence_error)
    }
}

/// The workspace a method's handler works in (the server's state).
pub fn workspace(ctx: &Context) -> Result<State<Workspace>, RpcError> {
    ctx.state::<Workspace>()
        .ok_or_else(|| RpcError::internal("the server was built without its workspace"))
}

/// A refusal or failure of the fence as a JSON-RPC error.
///
/// What the request asked for wrongly is `-32602` (invalid params): a path outside the root, a
/// file of the wrong kind, one with other hard links, one that does not exist. Its `data` is
/// the fence's machine-readable detail (`{"code": "path_outside_roots", "path": …, …}`), or
/// `{"code": "not_found", "path": …}`. The file system's own trouble (permission denied, a
/// full disk) is `-32603`, with `{"code": "io_error", …}`.
pub fn fence_error(error: FenceError) -> RpcError {
    let message = error.to_string();
    if let Some(detail) = error
        .meta()
        .and_then(|mut meta| meta.remove(ERROR_META_KEY))
    {
        return RpcError::invalid_params(message).with_data(detail);
    }
    match error {
        FenceError::Io { path, error } => io_error(&path.display(), &error),
        _ => RpcError::internal(message),
    }
}

/// An I/O error about a file (`place`, relative to the root) as a JSON-RPC error: the request's
/// fault (`-32602`) when it names what is not there or not that kind of file, the server's
/// (`-32603`) otherwise.
pub fn io_error(place: &dyn Display, error: &io::Error) -> RpcError {
    let place = match place.to_string() {
        shown if shown.is_empty() => ".".to_owned(),
        shown => shown,
    };
    let (code, hint) = match error.kind() {
        io::ErrorKind::NotFound => (
            "not_found",
            "; list its folder with fs/listDirectory to see what is there",
        ),
        io::ErrorKind::IsADirectory => ("wrong_file_kind", "; name a file, not a folder"),
        io::ErrorKind::NotADirectory => ("wrong_file_kind", "; a folder on the way is a file"),
        io::ErrorKind::AlreadyExists => (
            "wrong_file_kind",
            "; a folder on the way is taken by something else (a file, or a link to nothing)",
        ),
        _ => {
            return RpcError::internal(format!("{place}: {error}"))
                .with_data(json!({"code": "io_error", "path": place}));
        }
    };
    RpcError::invalid_params(format!("{place}: {error}{hint}"))
        .with_data(json!({"code": code, "path": place}))
}

/// A JSON-RPC error as a tool error: the same message, and its `data` as the result's
/// `_meta` under `mcp-runtime/error`, as the fence's own tool errors carry it.
pub fn tool_error(error: RpcError) -> ToolError {
    let tool_error = ToolError::new(error.message);
    match error.data {
        Some(detail) => {
            let mut meta = Map::new();
            meta.insert(ERROR_META_KEY.into(), detail);
            tool_error.with_meta(meta)
        }
        None => tool_error,
    }
}

/// Runs file-system work on Tokio's blocking threads, so that a big file or a deep folder
/// holds up no other request. A panic in it is an internal error whose message stays on
/// standard error.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    mcp_runtime::tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| {
            Err(RpcError::internal(
                "the operation failed with an internal error",
            ))
        })
}

/// The command line: `--root DIR` (required), `--poll`, and `--http ADDR`, which `serve`
/// reads and which is only stepped over here.
struct Options {
    root: PathBuf,
    poll: bool,
}

fn options() -> mcp_runtime::Result<Options> {
    let usage = |problem: String| {
        mcp_runtime::Error::Usage(format!(
            "{problem}\nusage: workspace --root DIR [--poll] [--http ADDR]"
        ))
    };
    let mut root = None;
    let mut poll = false;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        if name == "--poll" {
            poll = true;
            continue;
        }
        let value = inline.or_else(|| args.next_if(|next| !next.starts_with("--")));
        match (name, value) {
            ("--root", Some(dir)) if !dir.is_empty() => root = Some(PathBuf::from(dir)),
            ("--root", _) => {
                return Err(usage("--root needs a folder, e.g. --root ~/project".into()));
            }
            ("--http", Some(addr)) if !addr.is_empty() => {}
            ("--http", _) => {
                return Err(usage(
                    "--http needs an address, e.g. --http 127.0.0.1:8080".into(),
                ));
            }
            _ => return Err(usage(format!("unknown argument `{arg}`"))),
        }
    }
    let root = root.ok_or_else(|| {
        usage("name the workspace root with --root DIR: the server serves that folder only".into())
    })?;
    Ok(Options { root, poll })
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let options = options()?;
    let workspace = Workspace::open(&options.root).map_err(mcp_runtime::Error::Usage)?;
    // The first look at the tree happens now, before any client is served: every change
    // after `initialize` is a change from it.
    let watcher = watch::Watcher::start(&workspace, options.poll).map_err(|e| {
        mcp_runtime::Error::Usage(format!(
            "cannot watch the workspace root {}: {e}",
            workspace.root().display()
        ))
    })?;
    let builder = mcp_runtime::server!()
        .instructions(
            "A workspace folder. Besides the tools, the server speaks the fs/ namespace \
             (fs/readFile, fs/writeFile, fs/listDirectory; contents in base64; paths relative \
             to the workspace root with `/`), notifies fs/didChange, and runs its tools through \
             project/listTools and project/executeTool.",
        )
        .extension(
            EXTENSION,
            json!({"namespaces": ["fs", "project"], "watcher": watcher.backend()}),
        );
    let server = project::methods(fs::methods(builder))
        .state(workspace)
        .build()?;
    watcher.spawn(server.clone());
    server.serve().await
}
