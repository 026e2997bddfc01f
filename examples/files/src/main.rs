//! Workspace file tools, fenced by the client's roots: every path the model sends is resolved
//! inside a root the client exposes, or refused with a tool error naming the roots.
//!
//! - `read_file` (text, or base64 for binary), `list_directory` (optionally recursive) and
//!   `search_files` only read;
//! - `write_file` and `delete_file` change the disk, and `delete_file` asks the user to
//!   confirm through elicitation first;
//! - `summarise_file` asks the client's model for a summary through sampling.
//!
//! Run it with `cargo run -p files`; the client must offer roots.

use std::path::Path;

use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde};

/// The largest file `read_file` and `summarise_file` read.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// The most entries a listing or a search returns.
const MAX_ENTRIES: usize = 500;

async fn resolve(ctx: &Context, path: &str) -> Result<RootedPath, ToolError> {
    Ok(ctx.roots().await?.resolve(path)?)
}

fn read_limited(path: &Path) -> Result<Vec<u8>, ToolError> {
    let size = std::fs::metadata(path)?.len();
    if size > MAX_READ_BYTES {
        return Err(ToolError::new(format!(
            "the file has {size} bytes; at most {MAX_READ_BYTES} are read"
        )));
    }
    Ok(std::fs::read(path)?)
}

/// Read a file inside the workspace: text as it is, anything else base64-encoded.
#[tool(annotations(read_only))]
async fn read_file(
    ctx: Context,
    /// The file, relative to the workspace root or absolute inside it.
    path: String,
) -> Result<Content, ToolError> {
    let file = resolve(&ctx, &path).await?;
    let bytes = read_limited(&file)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Content::text(text),
        Err(binary) => EmbeddedResource::blob(
            format!("file://{}", file.display()),
            "application/octet-stream",
            binary.into_bytes(),
        )
        .into(),
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
    let file = resolve(&ctx, &path).await?;
    if create_dirs.unwrap_or(false)
        && let Some(parent) = file.parent()
    {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&file, &content)?;
    Ok(format!(
        "wrote {} bytes to {}",
        content.len(),
        file.relative().display()
    ))
}

/// One entry of a directory.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Entry {
    /// The path, relative to the root.
    path: String,
    /// `file`, `directory` or `symlink`.
    kind: &'static str,
    /// The size in bytes, for files.
    size: Option<u64>,
}

/// A directory's entries.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Listing {
    entries: Vec<Entry>,
    /// Whether entries were left out past the limit.
    truncated: bool,
}

/// Walks a directory without following symbolic links, so a walk never leaves the root.
fn walk(
    dir: &RootedPath,
    recursive: bool,
    keep: &mut dyn FnMut(Entry) -> bool,
) -> Result<(), ToolError> {
    let mut pending = vec![dir.as_path().to_path_buf()];
    while let Some(current) = pending.pop() {
        let mut children: Vec<_> = std::fs::read_dir(&current)?
            .filter_map(Result::ok)
            .collect();
        children.sort_by_key(std::fs::DirEntry::file_name);
        for child in children {
            let meta = child.path().symlink_metadata()?;
            let kind = if meta.file_type().is_symlink() {
                "symlink"
            } else if meta.is_dir() {
                "directory"
            } else {
                "file"
            };
            let relative = child
                .path()
                .strip_prefix(dir.root())
                .unwrap_or(&child.path())
                .display()
                .to_string();
            if kind == "directory" && recursive {
                pending.push(child.path());
            }
            let entry = Entry {
                path: relative,
                kind,
                size: (kind == "file").then_some(meta.len()),
            };
            if !keep(entry) {
                return Ok(());
            }
        }
    }
    Ok(())
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
    let dir = resolve(&ctx, path.as_deref().unwrap_or(".")).await?;
    let mut listing = Listing {
        entries: Vec::new(),
        truncated: false,
    };
    walk(&dir, recursive.unwrap_or(false), &mut |entry| {
        if listing.entries.len() == MAX_ENTRIES {
            listing.truncated = true;
            return false;
        }
        listing.entries.push(entry);
        true
    })?;
    Ok(Json(listing))
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
    let dir = resolve(&ctx, path.as_deref().unwrap_or(".")).await?;
    let needle = pattern.to_lowercase();
    let mut listing = Listing {
        entries: Vec::new(),
        truncated: false,
    };
    walk(&dir, true, &mut |entry| {
        let name = entry
            .path
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_lowercase();
        if entry.kind == "file" && name.contains(&needle) {
            if listing.entries.len() == MAX_ENTRIES {
                listing.truncated = true;
                return false;
            }
            listing.entries.push(entry);
        }
        true
    })?;
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
    let file = resolve(&ctx, &path).await?;
    let text = String::from_utf8(read_limited(&file)?)
        .map_err(|_| ToolError::new("the file is not text, so it cannot be summarised"))?;
    let words = max_words.unwrap_or(100);
    ctx.progress(0.5, Some(1.0), "asking the model".to_owned())
        .await;
    let reply = ctx
        .sample(format!(
            "Summarise this file ({}) in at most {words} words:\n\n{text}",
            file.relative().display()
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
    let file = resolve(&ctx, &path).await?;
    if !file.is_file() {
        return Err(ToolError::new(format!(
            "{} is not a file",
            file.relative().display()
        )));
    }
    let question = format!("Delete {} for good?", file.relative().display());
    match ctx.elicit::<Confirmation>(question).await? {
        Elicitation::Accept(Confirmation { confirm: true }) => {
            std::fs::remove_file(&file)?;
            Ok(format!("deleted {}", file.relative().display()))
        }
        Elicitation::Accept(_) | Elicitation::Decline => {
            Ok("kept the file: the user said no".into())
        }
        Elicitation::Cancel => Ok("kept the file: the user dismissed the question".into()),
    }
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!()
        .instructions("File tools for the workspace folders the client shares as roots. Paths are relative to the first root.")
        .serve()
        .await
}
