//! Workspace file tools, fenced by the client's roots: every path the model sends is placed
//! inside a root the client exposes, or refused with a tool error naming the roots; and every
//! file is then touched through a handle opened beneath that root, never by a path again.
//!
//! - `read_file` (text, or base64 for binary), `list_directory` (optionally recursive) and
//!   `search_files` only read;
//! - `write_file` and `delete_file` change the disk, and `delete_file` asks the user to
//!   confirm through elicitation first — then deletes the very file it asked about;
//! - `summarise_file` asks the client's model for a summary through sampling.
//!
//! Run it with `cargo run -p files`; the client must offer roots. It serves standard input
//! and output only: the roots are the client's to declare, which over stdio is the user's
//! own client and over HTTP anyone who can connect.

use std::io::{Read, Write};

use mcp_runtime::prelude::*;
use mcp_runtime::{FenceError, FencedEntry, FileKind, file_uri, schemars, serde};

/// The largest file `read_file` and `summarise_file` read.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// The most entries a listing or a search returns.
const MAX_ENTRIES: usize = 500;

/// The most entries a listing or a search looks at: past it, the walk stops and says
/// `truncated`, however few matched, so that a huge tree costs no more than a large one.
const MAX_VISITED: usize = 10_000;

/// The most unreadable folders a listing names (it counts them all).
const MAX_SKIPPED: usize = 20;

/// The client's roots, and the path placed inside one of them with that root held open.
async fn locate(ctx: &Context, path: &str) -> Result<FencedPath, ToolError> {
    Ok(ctx.roots().await?.locate(path)?)
}

/// Reads a file through the handle the fence opened, refusing one over the limit: the size
/// is the opened file's, so the file measured is the file read.
fn read_limited(file: &FencedPath) -> Result<Vec<u8>, ToolError> {
    let opened = file.open_read()?;
    let size = opened.metadata()?.len();
    if size > MAX_READ_BYTES {
        return Err(ToolError::new(format!(
            "the file has {size} bytes; at most {MAX_READ_BYTES} are read"
        )));
    }
    let mut bytes = Vec::new();
    // A file that grows meanwhile is cut at the limit rather than read without end.
    opened.take(MAX_READ_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Read a file inside the workspace: text as it is, anything else base64-encoded.
#[tool(annotations(read_only))]
async fn read_file(
    ctx: Context,
    /// The file, relative to the workspace root or absolute inside it.
    path: String,
) -> Result<Content, ToolError> {
    let file = locate(&ctx, &path).await?;
    let bytes = read_limited(&file)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Content::text(text),
        Err(binary) => {
            // Escaped, so that a name with a space, `#`, `?` or `%` is still one URI naming
            // that file, and a client reading it back gets the name it had.
            let uri = file_uri(file.root().join(file.relative()))
                .ok_or_else(|| ToolError::new("the file's root is not an absolute path"))?;
            EmbeddedResource::blob(uri, "application/octet-stream", binary.into_bytes()).into()
        }
    })
}

/// Write a text file inside the workspace, replacing what it held.
#[tool(annotations(destructive, idempotent))]
async fn write_file(
    ctx: Context,
    /// The file, relative to the workspace root or absolute inside it.
    path: String,
    /// The new contents.
    content: String,
    /// Whether to create missing parent directories.
    create_dirs: Option<bool>,
) -> Result<String, ToolError> {
    let file = locate(&ctx, &path).await?;
    if create_dirs.unwrap_or(false) {
        file.create_parent_dirs()?;
    }
    // Refuses a file with other hard links before emptying it: another name, perhaps outside
    // the roots, would see the new contents.
    file.create()?.write_all(content.as_bytes())?;
    Ok(format!("wrote {} bytes to {file}", content.len()))
}

/// One entry of a directory.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Entry {
    /// The path, relative to the root.
    path: String,
    /// `file`, `directory`, `symlink`, or `other` (a FIFO, a socket or a device, which
    /// `read_file` refuses).
    kind: &'static str,
    /// The size in bytes, for files.
    size: Option<u64>,
}

/// A directory's entries.
#[derive(serde::Serialize, schemars::JsonSchema, Default)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Listing {
    entries: Vec<Entry>,
    /// Whether the walk stopped early, at 500 entries returned or 10,000 looked at: more may
    /// match than `entries` holds. Narrow `path` to see the rest.
    truncated: bool,
    /// Folders (or entries) that could not be read, each with why (the first 20): what they
    /// hold is missing from `entries`.
    skipped: Vec<String>,
    /// How many could not be read, those in `skipped` included.
    skipped_count: usize,
}

impl Listing {
    /// Notes a folder or an entry that could not be read.
    fn skip(&mut self, error: FenceError) {
        self.skipped_count += 1;
        if self.skipped.len() < MAX_SKIPPED {
            self.skipped.push(error.to_string());
        }
    }
}

/// Walks a directory through handles, keeping the entries `wanted` picks, on a thread of its
/// own: a stdio server has only one, which answers every other request meanwhile. The walk
/// stops when the call is cancelled, and at the limits of [`Listing::truncated`].
async fn walk(
    ctx: &Context,
    dir: FencedDir,
    recursive: bool,
    wanted: impl Fn(&Entry) -> bool + Send + 'static,
) -> Result<Listing, ToolError> {
    let ctx = ctx.clone();
    mcp_runtime::tokio::task::spawn_blocking(move || walk_blocking(&ctx, dir, recursive, wanted))
        .await?
}

/// Each folder is opened beneath the one it was listed in, and only if it is still the folder
/// listed, so a walk never follows a symbolic link, and a folder swapped for one mid-walk is
/// skipped rather than entered. A folder waits for its turn unopened, as an entry of its
/// parent: the walk holds one descriptor per level it is down, not one per folder waiting —
/// a folder of thousands of folders would use up the process's descriptors, and those past
/// the limit could not be read.
fn walk_blocking(
    ctx: &Context,
    dir: FencedDir,
    recursive: bool,
    wanted: impl Fn(&Entry) -> bool,
) -> Result<Listing, ToolError> {
    let mut listing = Listing::default();
    let mut visited = 0;
    let mut children = Vec::new();
    // The folder the walk starts in must be readable; the others are skipped and named.
    collect_entries(dir.entries()?, &mut children, &mut listing);
    drop(dir);
    let mut pending: Vec<FencedEntry> = Vec::new();
    loop {
        children.sort_by(|a, b| a.name().cmp(b.name()));
        for child in children {
            if ctx.is_cancelled() {
                return Err(ToolError::new("the call was cancelled"));
            }
            visited += 1;
            if visited > MAX_VISITED {
                listing.truncated = true;
                return Ok(listing);
            }
            let kind = match child.info().kind() {
                FileKind::Symlink => "symlink",
                FileKind::Directory => "directory",
                FileKind::File => "file",
                _ => "other",
            };
            let entry = Entry {
                path: child.relative().display().to_string(),
                kind,
                size: (kind == "file").then_some(child.info().size()),
            };
            if kind == "directory" && recursive {
                pending.push(child);
            }
            if wanted(&entry) {
                if listing.entries.len() == MAX_ENTRIES {
                    listing.truncated = true;
                    return Ok(listing);
                }
                listing.entries.push(entry);
            }
        }
        children = Vec::new();
        let Some(next) = pending.pop() else {
            return Ok(listing);
        };
        // Checked before each folder too: a folder of empty folders has no entries to check
        // at, and each costs an open and a listing.
        if ctx.is_cancelled() {
            return Err(ToolError::new("the call was cancelled"));
        }
        match next.open_dir().and_then(|folder| folder.entries()) {
            Ok(entries) => collect_entries(entries, &mut children, &mut listing),
            Err(error) => listing.skip(error),
        }
    }
}

/// The entries of a folder into `children`; those that cannot be read into `listing.skipped`.
fn collect_entries(
    entries: impl Iterator<Item = Result<FencedEntry, FenceError>>,
    children: &mut Vec<FencedEntry>,
    listing: &mut Listing,
) {
    for entry in entries {
        match entry {
            Ok(entry) => children.push(entry),
            Err(error) => listing.skip(error),
        }
    }
}

/// List a directory inside the workspace.
#[tool(annotations(read_only))]
async fn list_directory(
    ctx: Context,
    /// The directory; the workspace root when left out.
    path: Option<String>,
    /// Whether to list subdirectories too.
    recursive: Option<bool>,
) -> Result<Json<Listing>, ToolError> {
    let dir = locate(&ctx, path.as_deref().unwrap_or("."))
        .await?
        .open_dir()?;
    Ok(Json(
        walk(&ctx, dir, recursive.unwrap_or(false), |_| true).await?,
    ))
}

/// Find files whose name contains a pattern (case-insensitive), anywhere under a directory.
#[tool(annotations(read_only))]
async fn search_files(
    ctx: Context,
    /// Part of the file name, e.g. `.rs` or `readme`.
    pattern: String,
    /// Where to search; the workspace root when left out.
    path: Option<String>,
) -> Result<Json<Listing>, ToolError> {
    let dir = locate(&ctx, path.as_deref().unwrap_or("."))
        .await?
        .open_dir()?;
    let needle = pattern.to_lowercase();
    let listing = walk(&ctx, dir, true, move |entry| {
        let name = entry.path.rsplit('/').next().unwrap_or_default();
        entry.kind == "file" && name.to_lowercase().contains(&needle)
    })
    .await?;
    Ok(Json(listing))
}

/// Summarise a text file with the client's model.
#[tool(annotations(read_only, open_world))]
async fn summarise_file(
    ctx: Context,
    /// The file to summarise.
    path: String,
    /// Roughly how many words the summary may have (100 unless given).
    max_words: Option<u32>,
) -> Result<String, ToolError> {
    let file = locate(&ctx, &path).await?;
    let text = String::from_utf8(read_limited(&file)?)
        .map_err(|_| ToolError::new("the file is not text, so it cannot be summarised"))?;
    let words = max_words.unwrap_or(100);
    ctx.progress(0.5, Some(1.0), "asking the model".to_owned())
        .await;
    let reply = ctx
        .sample(format!(
            "Summarise this file ({file}) in at most {words} words:\n\n{text}"
        ))
        .system_prompt("You summarise files for a developer: precise and brief.")
        .max_tokens(words.saturating_mul(2).max(50))
        .await?;
    Ok(reply.text())
}

/// The user's confirmation of a deletion.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Confirmation {
    /// Tick to delete the file for good.
    confirm: bool,
}

/// Delete a file inside the workspace, after the user confirms.
#[tool(annotations(destructive))]
async fn delete_file(
    ctx: Context,
    /// The file to delete.
    path: String,
) -> Result<String, ToolError> {
    let file = locate(&ctx, &path).await?;
    // Held across the question: the folder asked about and the file's identity in it. A
    // folder swapped for a link meanwhile does not redirect the delete (the handle is the old
    // folder), and a file put in the old one's place is not deleted instead.
    let (folder, name) = file.open_parent()?;
    // Refused before asking (a folder, a file with other hard links): the user is never asked
    // about a delete that would not happen.
    let identity = folder.removable(&name)?.identity();
    // In the stateless era the handler runs again once the answer comes, and holds nothing
    // across: keyed by the file's identity, the answer given about one file does not answer
    // the question about another that took its name in between — that one is asked anew.
    ctx.name_inputs([format!("confirm-delete-{identity}")]);
    // The path alone could be in any of the roots: the question says which.
    let question = format!("Delete {file} in {} for good?", file.root().display());
    match ctx.elicit::<Confirmation>(question).await? {
        Elicitation::Accept(Confirmation { confirm: true }) => {
            folder.remove_file_if_same(&name, identity)?;
            Ok(format!("deleted {file}"))
        }
        Elicitation::Accept(_) | Elicitation::Decline => {
            Ok("kept the file: the user said no".into())
        }
        Elicitation::Cancel => Ok("kept the file: the user dismissed the question".into()),
    }
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    // The roots are whatever the client says they are: over stdio that is the user's own
    // client, over HTTP anyone who can connect, who could name `/` a root and read, write
    // and delete every file this process may.
    if std::env::args().any(|arg| arg == "--http" || arg.starts_with("--http=")) {
        return Err(mcp_runtime::Error::Usage(
            "files serves standard input and output only: over HTTP the roots that fence its paths would be whatever a remote client declares".into(),
        ));
    }
    mcp_runtime::server!()
        .instructions("File tools for the workspace folders the client shares as roots. Paths are relative to the first root.")
        .serve()
        .await
}
