//! A multi-tenant notes server. Each caller sees only their own notes, kept in a SQLite file
//! that `main` opens and gives the server as state; pins are kept in the session.
//!
//! - `add_note`, `list_notes`, `get_note`, `delete_note`: the caller's notes. Another caller's
//!   note is "not found", exactly as one that never existed.
//! - `pin`, `pinned`: pins kept in the session's store, so two sessions of one user each have
//!   their own, and they end with the session.
//! - `notes://{id}`: one note as Markdown; `summarize_notes`: a prompt over them, cut at
//!   [`MAX_PROMPT_BYTES`] of notes, saying how much was left out.
//!
//! Each user may keep [`MAX_NOTES`] notes of at most [`MAX_BODY_BYTES`] each (titles of at most
//! [`MAX_TITLE_CHARS`]), so that no user can fill the disk the others share. A note's id is
//! drawn at random: a sequence shared by all users would tell each how many notes the others
//! made.
//!
//! ```text
//! cargo run -p notes -- --db notes.db                      # stdio, as the user `local`
//! NOTES_TOKENS=alice:token-a,bob:token-b \
//!   cargo run -p notes -- --http 127.0.0.1:8080 --db notes.db
//! cargo run -p notes -- --http 127.0.0.1:8080 --db notes.db \
//!   --issuer https://login.example.com --public-url https://notes.example.com/mcp
//! ```
//!
//! Over HTTP every request needs a bearer token, and the token's user owns the notes: one of
//! `NOTES_TOKENS` (`user:token,…`, each granting both scopes), or with `--issuer` a JWT from
//! that OAuth authorization server, for this server (`--public-url`, the URL clients use; by
//! default `http://ADDR/mcp`). Reading needs the scope `notes:read`, writing `notes:write`.
//!
//! For the operator: `--metrics` serves the metrics at `/metrics` (Prometheus text, behind
//! the same tokens), and with `OTEL_EXPORTER_OTLP_ENDPOINT` set every request is a span and
//! the metrics are exported over OTLP. With `MCP_REDIS_URL` set, the server
//! is one replica of several sharing sessions (and so pins) through that Redis, and the same
//! database file.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mcp_runtime::http::{BearerTokens, HttpOptions};
use mcp_runtime::oauth::JwtVerifier;
use mcp_runtime::otel::Otlp;
use mcp_runtime::prelude::*;
use mcp_runtime::serde::{Deserialize, Serialize};
use mcp_runtime::{AuthInfo, State, resource_not_found, schemars};
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

/// The longest body a note may have, in bytes.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The longest title a note may have, in characters: `list_notes` answers every title.
const MAX_TITLE_CHARS: usize = 200;

/// The most notes one user may keep.
const MAX_NOTES: i64 = 256;

/// The most bytes of notes `summarize_notes` puts in its prompt: a user's notes may hold
/// 16 MiB, far more than a model's context.
const MAX_PROMPT_BYTES: usize = 128 * 1024;

/// The notes of every user, in one SQLite file.
struct Notes {
    db: Mutex<Connection>,
}

/// One note.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Note {
    id: i64,
    title: String,
    body: String,
}

/// A note's id and title.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Listed {
    id: i64,
    title: String,
}

/// What `add_note` answers.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Added {
    id: i64,
}

/// Why a note was not added.
enum AddError {
    /// The user keeps [`MAX_NOTES`] notes already.
    TooMany,
    Storage(rusqlite::Error),
}

impl From<rusqlite::Error> for AddError {
    fn from(error: rusqlite::Error) -> Self {
        AddError::Storage(error)
    }
}

/// What `summarize_notes` shows: the notes that fit, and how much was left out.
struct Summary {
    text: String,
    /// Whether the last note shown was cut short.
    cut: bool,
    /// The notes not shown at all.
    left_out: i64,
}

impl Notes {
    /// Opens (and creates when missing) the database at `path`.
    fn open(path: &Path) -> rusqlite::Result<Notes> {
        let mut db = Connection::open(path)?;
        // Replicas may share the file: each waits for the others' writes.
        db.busy_timeout(Duration::from_secs(5))?;
        // Every committed note survives a crash of the process (or the machine).
        db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        // Immediate: two replicas starting at once do not both migrate.
        let schema = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = schema.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if version < 1 {
            // `seq` keeps the order notes were added in; `id`, what the owner calls a note,
            // is random. The body comes last, so that reading a title never reads past it.
            schema.execute_batch(
                "CREATE TABLE note (
                     seq INTEGER PRIMARY KEY,
                     id INTEGER NOT NULL UNIQUE,
                     owner TEXT NOT NULL,
                     title TEXT NOT NULL,
                     body TEXT NOT NULL
                 );
                 CREATE INDEX note_by_owner ON note (owner, seq);",
            )?;
            // A database of the first version, whose ids were one sequence for all users:
            // its notes keep their ids, which their owners may have written down.
            let first_version: bool = schema.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'notes')",
                [],
                |row| row.get(0),
            )?;
            if first_version {
                schema.execute_batch(
                    "INSERT INTO note (seq, id, owner, title, body)
                         SELECT id, id, owner, title, body FROM notes;
                     DROP TABLE notes;",
                )?;
            }
            schema.pragma_update(None, "user_version", 1)?;
        }
        schema.commit()?;
        Ok(Notes { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a note unless its owner keeps [`MAX_NOTES`] already; answers its id.
    fn add(&self, owner: &str, title: &str, body: &str) -> Result<i64, AddError> {
        let mut db = self.db();
        // Immediate: the count and the insert are one step, also for replicas sharing the file.
        let add = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let count: i64 = add.query_row(
            "SELECT COUNT(*) FROM note WHERE owner = ?1",
            params![owner],
            |row| row.get(0),
        )?;
        if count >= MAX_NOTES {
            return Err(AddError::TooMany);
        }
        // SQLite's `random()` is seeded from the system's randomness; ids stay below 2^53 so
        // that a JavaScript client reads them exactly. A clash with another note's id (one
        // chance in billions) draws again.
        let mut attempts = 0;
        let id = loop {
            let inserted = add.query_row(
                "INSERT INTO note (id, owner, title, body)
                 VALUES (abs(random() % 9007199254740991) + 1, ?1, ?2, ?3) RETURNING id",
                params![owner, title, body],
                |row| row.get(0),
            );
            match inserted {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == ErrorCode::ConstraintViolation && attempts < 3 =>
                {
                    attempts += 1;
                }
                inserted => break inserted?,
            }
        };
        add.commit()?;
        Ok(id)
    }

    /// The owner's notes' ids and titles, in the order they were added; no body is read.
    fn list(&self, owner: &str) -> rusqlite::Result<Vec<Listed>> {
        let db = self.db();
        let mut statement =
            db.prepare_cached("SELECT id, title FROM note WHERE owner = ?1 ORDER BY seq")?;
        let rows = statement.query_map(params![owner], |row| {
            Ok(Listed {
                id: row.get(0)?,
                title: row.get(1)?,
            })
        })?;
        rows.collect()
    }

    /// The owner's note `id`; another owner's is as absent as a note that never was.
    fn get(&self, owner: &str, id: i64) -> rusqlite::Result<Option<Note>> {
        self.db()
            .query_row(
                "SELECT id, title, body FROM note WHERE owner = ?1 AND id = ?2",
                params![owner, id],
                |row| {
                    Ok(Note {
                        id: row.get(0)?,
                        title: row.get(1)?,
                        body: row.get(2)?,
                    })
                },
            )
            .optional()
    }

    /// The title of the owner's note `id`, without its body.
    fn title(&self, owner: &str, id: i64) -> rusqlite::Result<Option<String>> {
        self.db()
            .query_row(
                "SELECT title FROM note WHERE owner = ?1 AND id = ?2",
                params![owner, id],
                |row| row.get(0),
            )
            .optional()
    }

    fn delete(&self, owner: &str, id: i64) -> rusqlite::Result<bool> {
        let deleted = self.db().execute(
            "DELETE FROM note WHERE owner = ?1 AND id = ?2",
            params![owner, id],
        )?;
        Ok(deleted > 0)
    }

    /// The owner's notes as the prompt shows them, in the order they were added, until
    /// [`MAX_PROMPT_BYTES`]: the note that does not fit is cut, and the rest are not read.
    fn summary(&self, owner: &str) -> rusqlite::Result<Summary> {
        let db = self.db();
        let total: i64 = db.query_row(
            "SELECT COUNT(*) FROM note WHERE owner = ?1",
            params![owner],
            |row| row.get(0),
        )?;
        let mut statement =
            db.prepare_cached("SELECT id, title, body FROM note WHERE owner = ?1 ORDER BY seq")?;
        let mut rows = statement.query(params![owner])?;
        let mut summary = Summary {
            text: String::new(),
            cut: false,
            left_out: total,
        };
        while let Some(row) = rows.next()? {
            let (id, title, body): (i64, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
            let section = format!("\n## {title} (note {id})\n{body}\n");
            summary.left_out -= 1;
            let room = MAX_PROMPT_BYTES - summary.text.len();
            if section.len() <= room {
                summary.text.push_str(&section);
                continue;
            }
            let mut end = room;
            while !section.is_char_boundary(end) {
                end -= 1;
            }
            if end == 0 {
                summary.left_out += 1;
            } else {
                summary.text.push_str(&section[..end]);
                summary.cut = true;
            }
            break;
        }
        Ok(summary)
    }
}

/// The user a request acts for: the bearer token's over HTTP, `local` over stdio.
fn owner(ctx: &Context) -> String {
    ctx.auth()
        .map_or_else(|| "local".to_owned(), |caller| caller.subject.clone())
}

fn not_found(id: i64) -> ToolError {
    ToolError::new(format!("note {id} not found"))
}

fn storage(error: rusqlite::Error) -> ToolError {
    ToolError::new(format!("the notes database failed: {error}"))
}

/// Add a note; answers its id. A title has at most 200 characters, a body at most 65536
/// bytes, and each user keeps at most 256 notes.
#[tool(scopes("notes:write"))]
fn add_note(
    ctx: Context,
    notes: State<Notes>,
    /// A short title.
    title: String,
    /// The note's text.
    body: String,
) -> Result<Json<Added>, ToolError> {
    let chars = title.chars().count();
    if chars > MAX_TITLE_CHARS {
        return Err(ToolError::new(format!(
            "the title has {chars} characters; a title may have at most {MAX_TITLE_CHARS}: \
             shorten it, and put the rest in the body"
        )));
    }
    if body.len() > MAX_BODY_BYTES {
        return Err(ToolError::new(format!(
            "the body has {} bytes; a note may hold at most {MAX_BODY_BYTES}: split it into \
             several notes",
            body.len()
        )));
    }
    match notes.add(&owner(&ctx), &title, &body) {
        Ok(id) => Ok(Json(Added { id })),
        Err(AddError::TooMany) => Err(ToolError::new(format!(
            "you have {MAX_NOTES} notes, the most one user may keep: delete some with \
             delete_note first"
        ))),
        Err(AddError::Storage(error)) => Err(storage(error)),
    }
}

/// List your notes: their ids and titles.
#[tool(annotations(read_only), scopes("notes:read"))]
fn list_notes(ctx: Context, notes: State<Notes>) -> Result<Json<Vec<Listed>>, ToolError> {
    notes.list(&owner(&ctx)).map(Json).map_err(storage)
}

/// Read one of your notes.
#[tool(annotations(read_only), scopes("notes:read"))]
fn get_note(
    ctx: Context,
    notes: State<Notes>,
    /// The note's id, as `add_note` or `list_notes` gave it.
    id: i64,
) -> Result<Json<Note>, ToolError> {
    match notes.get(&owner(&ctx), id).map_err(storage)? {
        Some(note) => Ok(Json(note)),
        None => Err(not_found(id)),
    }
}

/// Delete one of your notes.
#[tool(annotations(destructive, idempotent), scopes("notes:write"))]
fn delete_note(
    ctx: Context,
    notes: State<Notes>,
    /// The note's id.
    id: i64,
) -> Result<String, ToolError> {
    if notes.delete(&owner(&ctx), id).map_err(storage)? {
        Ok(format!("deleted note {id}"))
    } else {
        Err(not_found(id))
    }
}

/// The ids this session pinned, in the order they were pinned.
#[derive(Default, Serialize, Deserialize)]
#[serde(crate = "mcp_runtime::serde")]
struct Pins(Vec<i64>);

/// Pin one of your notes for this session.
#[tool(scopes("notes:read"))]
fn pin(
    ctx: Context,
    notes: State<Notes>,
    /// The note's id.
    id: i64,
) -> Result<String, ToolError> {
    if notes.title(&owner(&ctx), id).map_err(storage)?.is_none() {
        return Err(not_found(id));
    }
    let count = ctx.session()?.update(|pins: &mut Pins| {
        if !pins.0.contains(&id) {
            pins.0.push(id);
        }
        pins.0.len()
    })?;
    Ok(format!("pinned note {id}; {count} pinned in this session"))
}

/// The notes pinned in this session.
#[tool(annotations(read_only), scopes("notes:read"))]
fn pinned(ctx: Context, notes: State<Notes>) -> Result<Json<Vec<Listed>>, ToolError> {
    let Pins(ids) = ctx.session()?.get()?.unwrap_or_default();
    let owner = owner(&ctx);
    let mut listed = Vec::new();
    for id in ids {
        // A note deleted since it was pinned is left out.
        if let Some(title) = notes.title(&owner, id).map_err(storage)? {
            listed.push(Listed { id, title });
        }
    }
    Ok(Json(listed))
}

/// One of your notes, as Markdown.
#[resource("notes://{id}", mime = "text/markdown", scopes("notes:read"))]
fn note(
    ctx: Context,
    notes: State<Notes>,
    id: i64,
) -> Result<String, mcp_runtime::protocol::RpcError> {
    let found = notes
        .get(&owner(&ctx), id)
        .map_err(|e| mcp_runtime::protocol::RpcError::internal(e.to_string()))?;
    match found {
        Some(note) => Ok(format!("# {}\n\n{}\n", note.title, note.body)),
        None => Err(resource_not_found(&format!("notes://{id}"))),
    }
}

/// Ask the model to summarise your notes (the first 128 KiB of them).
#[prompt(scopes("notes:read"))]
fn summarize_notes(
    ctx: Context,
    notes: State<Notes>,
) -> Result<Vec<PromptMessage>, mcp_runtime::protocol::RpcError> {
    let summary = notes
        .summary(&owner(&ctx))
        .map_err(|e| mcp_runtime::protocol::RpcError::internal(e.to_string()))?;
    let mut text = String::from("Summarise these notes in a few sentences:\n");
    if summary.text.is_empty() && summary.left_out == 0 {
        text.push_str("\n(there are no notes yet)\n");
    }
    text.push_str(&summary.text);
    // The model is told what it does not see, so that it does not summarise a part as the
    // whole.
    if summary.cut || summary.left_out > 0 {
        let cut = if summary.cut {
            "the last note above is cut short"
        } else {
            "the notes above are whole"
        };
        text.push_str(&format!(
            "\n\n(Only the first {MAX_PROMPT_BYTES} bytes of notes are shown: {cut}, and {} more \
             notes are left out.)\n",
            summary.left_out
        ));
    }
    Ok(vec![PromptMessage::user(text)])
}

/// The command line: `[--http ADDR] [--db PATH] [--issuer URL] [--public-url URL] [--metrics]`.
struct Args {
    http: Option<String>,
    metrics: bool,
    db: PathBuf,
    issuer: Option<String>,
    public_url: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut parsed = Args {
        http: None,
        metrics: false,
        db: PathBuf::from("notes.db"),
        issuer: None,
        public_url: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--metrics" {
            parsed.metrics = true;
            continue;
        }
        let value = args.next();
        match (arg.as_str(), value) {
            ("--http", Some(addr)) => parsed.http = Some(addr),
            ("--db", Some(path)) => parsed.db = PathBuf::from(path),
            ("--issuer", Some(url)) => parsed.issuer = Some(url),
            ("--public-url", Some(url)) => parsed.public_url = Some(url),
            _ => {
                return Err(format!(
                    "usage: notes [--http ADDR] [--db PATH] [--issuer URL] [--public-url URL] [--metrics] (not `{arg}`)"
                ));
            }
        }
    }
    Ok(parsed)
}

/// The bearer tokens of `NOTES_TOKENS` (`user:token,…`), each for its user.
fn tokens() -> Result<BearerTokens, String> {
    let list = std::env::var("NOTES_TOKENS").map_err(|_| {
        "serving over HTTP needs NOTES_TOKENS=user:token,… (e.g. `alice:token-a,bob:token-b`): every request must say whose notes it reads".to_owned()
    })?;
    let mut tokens = BearerTokens::new();
    for entry in list.split(',').filter(|e| !e.is_empty()) {
        let (user, token) = entry
            .split_once(':')
            .filter(|(user, token)| !user.is_empty() && !token.is_empty())
            .ok_or_else(|| format!("NOTES_TOKENS: `{entry}` is not `user:token`"))?;
        tokens = tokens.token(
            token,
            AuthInfo::new(user).scopes(["notes:read", "notes:write"]),
        );
    }
    Ok(tokens)
}

#[mcp_runtime::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args()?;
    let notes = Notes::open(&args.db)
        .map_err(|e| format!("cannot open the database {}: {e}", args.db.display()))?;
    let builder = mcp_runtime::server!()
        .instructions("Your notes: add, list, read, delete and pin them.")
        .state(notes);
    let Some(addr) = args.http else {
        builder.serve_stdio().await?;
        return Ok(());
    };
    let options = match &args.issuer {
        // Tokens from an OAuth authorization server, for this server and no other.
        Some(issuer) => {
            let public_url = match &args.public_url {
                Some(url) => url.clone(),
                None if addr.ends_with(":0") => {
                    return Err("with --issuer and a port of the system's choosing, give --public-url: the URL clients use is the audience tokens must name".into());
                }
                None => format!("http://{addr}/mcp"),
            };
            let base = public_url.strip_suffix("/mcp").unwrap_or(&public_url);
            HttpOptions::default()
                .auth(JwtVerifier::new(issuer, &public_url))
                .authorization_servers([issuer])
                .resource_base_url(base)
        }
        None => HttpOptions::default().auth(tokens()?),
    };
    let options = if args.metrics {
        options.metrics_route("/metrics")
    } else {
        options
    };
    #[cfg(feature = "redis")]
    let (server, options) = match std::env::var("MCP_REDIS_URL") {
        Ok(url) => {
            let redis = mcp_runtime::redis::RedisCluster::connect(&url).await?;
            (redis.server(builder).build()?, redis.http(options))
        }
        Err(_) => (builder.build()?, options),
    };
    #[cfg(not(feature = "redis"))]
    let server = builder.build()?;
    // Spans and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT names a collector.
    let telemetry = match Otlp::from_env() {
        Some(otlp) => Some(otlp.install(&server)?),
        None => None,
    };
    server.serve_http_with(addr, options).await?;
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    Ok(())
}
