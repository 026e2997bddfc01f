//! The `fs/` namespace: files under the workspace root, their contents in base64 so that any
//! file, text or binary, travels safely.
//!
//! | method | params | result |
//! |---|---|---|
//! | `fs/readFile` | `{path}` | `{content, encoding: "base64"}` |
//! | `fs/writeFile` | `{path, content, encoding: "base64"}` | `null` (creates or overwrites) |
//! | `fs/listDirectory` | `{path, recursive?}` | `[{name, type}]` |
//!
//! Paths use `/` between folders, relative to the workspace root (`.` is the root itself) or
//! absolute inside it. Each is placed beneath the root by the fence, and the file is then
//! opened through the handle the fence holds, never by its path again: a symbolic link that
//! leads out is refused as the file is opened, whenever it was made. Operations are not
//! atomic: a file being written can be read half-written.

use std::io::{self, Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::serde::de::IgnoredAny;
use mcp_runtime::serde::{Deserialize, Serialize};
use mcp_runtime::tokio::sync::{Semaphore, SemaphorePermit};
use mcp_runtime::{Context, FenceError, FencedDir, FencedEntry, FileKind, ServerBuilder};

use crate::{blocking, fence_error, io_error, workspace};

/// The largest file `fs/readFile` reads (1 MiB, about 1.4 MiB once in base64).
///
/// The namespace's `fs/readFile` answers a whole file, and a client may have 64 requests in
/// flight whose answers the server holds until the client reads them: one that never reads
/// makes the server hold 64 answers of this size (a cap of 8 MiB let one client hold over a
/// gigabyte). Bigger files are refused, naming the cap.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// The most bytes `fs/readFile` reads and encodes at once, for every client together: a read
/// waits for its file's share, so that many clients (or HTTP sessions) reading at once cannot
/// add up to more than this in files being read and encoded.
const MAX_READING_BYTES: usize = 16 * 1024 * 1024;

/// The share of [`MAX_READING_BYTES`] left.
static READING: Semaphore = Semaphore::const_new(MAX_READING_BYTES);

/// The most entries `fs/listDirectory` returns: a bigger listing is refused rather than cut,
/// since its result has no room to say it was cut.
const MAX_ENTRIES: usize = 10_000;

/// Adds the `fs/` methods.
pub fn methods(builder: ServerBuilder) -> ServerBuilder {
    builder
        .method("fs/readFile", read_file)
        .method("fs/writeFile", write_file)
        .method("fs/listDirectory", list_directory)
}

/// How contents travel. Only base64 is spoken: anything else is refused, naming it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
pub enum Encoding {
    /// Standard base64 (RFC 4648, `+/`, with padding).
    Base64,
}

/// The parameters of `fs/readFile`. As for every method here, a name the method does not know
/// is refused (but `_meta`, which any request may carry).
#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
pub struct ReadFile {
    /// The file.
    path: String,
    #[serde(rename = "_meta", default)]
    _meta: Option<IgnoredAny>,
}

/// A file's contents: the result of `fs/readFile`.
#[derive(Serialize)]
#[serde(crate = "mcp_runtime::serde")]
pub struct FileContents {
    /// Every byte of the file, in base64.
    content: String,
    /// Always `base64`.
    encoding: Encoding,
    /// The file's share of [`MAX_READING_BYTES`], given back once the answer is serialised.
    #[serde(skip)]
    _reading: Option<SemaphorePermit<'static>>,
}

/// `fs/readFile`: a regular file's contents, at most [`MAX_READ_BYTES`]. Refuses a folder, a
/// FIFO or a device (reading one would block or never end). Waits for the file's share of
/// [`MAX_READING_BYTES`] before reading it.
async fn read_file(ctx: Context, params: ReadFile) -> Result<FileContents, RpcError> {
    let workspace = workspace(&ctx)?;
    let (file, opened, size) = blocking(move || {
        let file = workspace.locate(&params.path)?;
        let opened = file.open_read().map_err(fence_error)?;
        // The size is the opened file's: the file measured is the file read.
        let size = opened.metadata().map_err(|e| io_error(&file, &e))?.len();
        if size > MAX_READ_BYTES {
            return Err(RpcError::invalid_params(format!(
                "{file} has {size} bytes; fs/readFile reads files of at most {MAX_READ_BYTES}"
            )));
        }
        Ok((file, opened, size))
    })
    .await?;
    // At most MAX_READ_BYTES, far below u32::MAX; an empty file takes a share of one byte.
    let share = u32::try_from(size.max(1)).unwrap_or(u32::MAX);
    let reading = READING
        .acquire_many(share)
        .await
        .map_err(|_| RpcError::internal("the read budget was closed"))?;
    blocking(move || {
        let mut bytes = Vec::new();
        // A file that grows meanwhile is cut at the limit rather than read without end, and
        // then refused as too big.
        opened
            .take(MAX_READ_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(&file, &e))?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(RpcError::invalid_params(format!(
                "{file} grew past {MAX_READ_BYTES} bytes while it was read: fs/readFile reads \
                 files of at most that"
            )));
        }
        Ok(FileContents {
            content: BASE64.encode(bytes),
            encoding: Encoding::Base64,
            _reading: Some(reading),
        })
    })
    .await
}

/// The parameters of `fs/writeFile`.
#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
pub struct WriteFile {
    /// The file.
    path: String,
    /// Its new contents, in base64.
    content: String,
    /// Must be `base64`.
    encoding: Encoding,
    #[serde(rename = "_meta", default)]
    _meta: Option<IgnoredAny>,
}

/// `fs/writeFile`: creates the file, or empties it and writes it anew; missing folders on the
/// way are created (beneath the root, through its handle). Answers `null`.
///
/// Refuses a file with other hard links before emptying it: another name, perhaps outside the
/// root, would see the new contents.
async fn write_file(ctx: Context, params: WriteFile) -> Result<(), RpcError> {
    let WriteFile {
        path,
        content,
        encoding: Encoding::Base64,
        ..
    } = params;
    let bytes = BASE64.decode(content.as_bytes()).map_err(|e| {
        RpcError::invalid_params(format!(
            "`content` is not valid base64 ({e}): send the file's bytes in standard base64 \
             (`+` and `/`, with `=` padding)"
        ))
    })?;
    let workspace = workspace(&ctx)?;
    blocking(move || {
        let file = workspace.locate(&path)?;
        let opened = match file.create() {
            // Only a missing folder on the way makes folders: a refusal stays a refusal.
            Err(FenceError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                file.create_parent_dirs().map_err(fence_error)?;
                file.create()
            }
            opened => opened,
        };
        opened
            .map_err(fence_error)?
            .write_all(&bytes)
            .map_err(|e| io_error(&file, &e))
    })
    .await
}

/// The parameters of `fs/listDirectory`.
#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
pub struct ListDirectory {
    /// The folder; `.` for the root.
    path: String,
    /// Whether to list its folders' entries too, all the way down (`false` when left out).
    #[serde(default)]
    recursive: Option<bool>,
    #[serde(rename = "_meta", default)]
    _meta: Option<IgnoredAny>,
}

/// What an entry is, as `fs/listDirectory` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
pub enum EntryType {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link, described and never followed (its target may be anywhere).
    Symlink,
    /// A FIFO, a socket or a device.
    Other,
}

impl From<FileKind> for EntryType {
    fn from(kind: FileKind) -> Self {
        match kind {
            FileKind::File => EntryType::File,
            FileKind::Directory => EntryType::Directory,
            FileKind::Symlink => EntryType::Symlink,
            _ => EntryType::Other,
        }
    }
}

/// One entry of a listing.
#[derive(Serialize)]
#[serde(crate = "mcp_runtime::serde")]
pub struct Entry {
    /// The entry's name; in a recursive listing, its path relative to the folder listed, with
    /// `/` between folders (`src/main.rs`). A name that is not UTF-8 is shown with `�` in
    /// place of the bytes it cannot show, so it cannot be named back.
    name: String,
    /// `file`, `directory`, `symlink` or `other`.
    #[serde(rename = "type")]
    kind: EntryType,
}

/// `fs/listDirectory`: a folder's entries, in name order. Recursive, each folder's entries
/// follow it (depth first: `src`, `src/main.rs`, `tests`); a symbolic link to a folder is
/// listed as a `symlink` and not entered, and a folder that cannot be read, or that was
/// swapped for something else while listed, is listed itself without its entries. More than
/// [`MAX_ENTRIES`] entries is refused, asking for a smaller listing.
async fn list_directory(ctx: Context, params: ListDirectory) -> Result<Vec<Entry>, RpcError> {
    let workspace = workspace(&ctx)?;
    blocking(move || {
        let folder = workspace.locate(&params.path)?;
        let dir = folder.open_dir().map_err(fence_error)?;
        let recursive = params.recursive.unwrap_or(false);
        let mut entries = Vec::new();
        walk(dir, recursive, &mut |_, entry, name| {
            if entries.len() == MAX_ENTRIES {
                let advice = if recursive {
                    "list one of its folders, or list it without `recursive`"
                } else {
                    "it is too big to list here"
                };
                return Err(RpcError::invalid_params(format!(
                    "{folder} holds more than {MAX_ENTRIES} entries: {advice}"
                )));
            }
            entries.push(Entry {
                name: name.to_owned(),
                kind: entry.info().kind().into(),
            });
            Ok(())
        })?;
        Ok(entries)
    })
    .await
}

/// Walks a folder through handles, depth first, each folder's entries in name order: `visit`
/// gets the folder an entry was listed in (held open, to open the entry through), the entry,
/// and its path relative to the folder walked, with `/`. With `recursive`, each folder is
/// opened beneath the one it was listed in, and only if it is still the folder listed, so a
/// walk never follows a symbolic link, not even one swapped in mid-walk. Entries that vanish
/// while listed, and folders that cannot be opened, are passed over.
pub fn walk(
    dir: FencedDir,
    recursive: bool,
    visit: &mut dyn FnMut(&FencedDir, &FencedEntry, &str) -> Result<(), RpcError>,
) -> Result<(), RpcError> {
    let first = sorted_entries(&dir)?;
    // The folders being listed, innermost last: each with the prefix of its entries' names
    // and the entries still to visit.
    let mut stack = vec![(dir, String::new(), first.into_iter())];
    while let Some((folder, prefix, entries)) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            continue;
        };
        let name = format!("{prefix}{}", entry.name().to_string_lossy());
        visit(folder, &entry, &name)?;
        if recursive
            && entry.info().kind() == FileKind::Directory
            && let Ok(subdir) = entry.open_dir()
            && let Ok(children) = sorted_entries(&subdir)
        {
            stack.push((subdir, format!("{name}/"), children.into_iter()));
        }
    }
    Ok(())
}

/// A folder's entries, in name order (by bytes).
fn sorted_entries(dir: &FencedDir) -> Result<Vec<FencedEntry>, RpcError> {
    let mut entries: Vec<_> = dir
        .entries()
        .map_err(fence_error)?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(entries)
}
