//! A multi-tenant notes server. Each caller sees only their own notes, kept in a SQLite file
//! that `main` opens and gives the server as state; pins are kept in the session.
//!
//! - `add_note`, `list_notes`, `get_note`, `delete_note`: the caller's notes. Another caller's
//!   note is "not found", exactly as one that never existed.
//! - `pin`, `pinned`: pins kept in the session's store, so two sessions of one user each have
//!   their own, and they end with the session.
//! - `notes://{id}`: one note as Markdown; `summarize_notes`: a prompt over all of them.
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
use rusqlite::{Connection, OptionalExtension, params};

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

impl Notes {
    /// Opens (and creates when missing) the database at `path`.
    fn open(path: &Path) -> rusqlite::Result<Notes> {
        let db = Connection::open(path)?;
        // Replicas may share the file: each waits for the others' writes.
        db.busy_timeout(Duration::from_secs(5))?;
        // Every committed note survives a crash of the process (or the machine).
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS notes (
                 id INTEGER PRIMARY KEY,
                 owner TEXT NOT NULL,
                 title TEXT NOT NULL,
                 body TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS notes_by_owner ON notes (owner, id);",
        )?;
        Ok(Notes { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&self, owner: &str, title: &str, body: &str) -> rusqlite::Result<i64> {
        let db = self.db();
        db.execute(
            "INSERT INTO notes (owner, title, body) VALUES (?1, ?2, ?3)",
            params![owner, title, body],
        )?;
        Ok(db.last_insert_rowid())
    }

    fn list(&self, owner: &str) -> rusqlite::Result<Vec<Note>> {
        let db = self.db();
        let mut statement =
            db.prepare_cached("SELECT id, title, body FROM notes WHERE owner = ?1 ORDER BY id")?;
        let rows = statement.query_map(params![owner], |row| {
            Ok(Note {
                id: row.get(0)?,
                title: row.get(1)?,
                body: row.get(2)?,
            })
        })?;
        rows.collect()
    }

    /// The owner's note `id`; another owner's is as absent as a note that never was.
    fn get(&self, owner: &str, id: i64) -> rusqlite::Result<Option<Note>> {
        self.db()
            .query_row(
                "SELECT id, title, body FROM notes WHERE owner = ?1 AND id = ?2",
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

    fn delete(&self, owner: &str, id: i64) -> rusqlite::Result<bool> {
        let deleted = self.db().execute(
            "DELETE FROM notes WHERE owner = ?1 AND id = ?2",
            params![owner, id],
        )?;
        Ok(deleted > 0)
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

/// Add a note; answers its id.
#[tool(scopes("notes:write"))]
fn add_note(
    ctx: Context,
    notes: State<Notes>,
    /// A short title.
    title: String,
    /// The note's text.
    body: String,
) -> Result<Json<Added>, ToolError> {
    let id = notes.add(&owner(&ctx), &title, &body).map_err(storage)?;
    Ok(Json(Added { id }))
}

/// List your notes: their ids and titles.
#[tool(annotations(read_only), scopes("notes:read"))]
fn list_notes(ctx: Context, notes: State<Notes>) -> Result<Json<Vec<Listed>>, ToolError> {
    let listed = notes.list(&owner(&ctx)).map_err(storage)?;
    Ok(Json(
        listed
            .into_iter()
            .map(|n| Listed {
                id: n.id,
                title: n.title,
            })
            .collect(),
    ))
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
    if notes.get(&owner(&ctx), id).map_err(storage)?.is_none() {
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
        if let Some(note) = notes.get(&owner, id).map_err(storage)? {
            listed.push(Listed {
                id: note.id,
                title: note.title,
            });
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

/// Ask the model to summarise all your notes.
#[prompt(scopes("notes:read"))]
fn summarize_notes(
    ctx: Context,
    notes: State<Notes>,
) -> Result<Vec<PromptMessage>, mcp_runtime::protocol::RpcError> {
    let all = notes
        .list(&owner(&ctx))
        .map_err(|e| mcp_runtime::protocol::RpcError::internal(e.to_string()))?;
    let mut text = String::from("Summarise these notes in a few sentences:\n");
    for note in &all {
        text.push_str(&format!(
            "\n## {} (note {})\n{}\n",
            note.title, note.id, note.body
        ));
    }
    if all.is_empty() {
        text.push_str("\n(there are no notes yet)\n");
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
