//! An MCP server over a real SQLite database: a small shop (customers, products, orders)
//! created in memory, or a database file named on the command line.
//!
//! - `query_database`: runs one read-only `SELECT` and returns the rows as structured output;
//!   anything else is refused as a tool error.
//! - `sqlite://schema`: the DDL of every table, as a static resource.
//! - `sqlite://tables/{table}/ddl`: the DDL of one table, a template whose `table` completes
//!   and whose `list` names every table.
//! - `review_query`: a prompt that asks the model to review a query against the schema.
//!
//! ```text
//! cargo run -p database                          # the shop, in memory, over stdio
//! cargo run -p database -- --db shop.db          # a file; created and seeded if it has no table
//! cargo run -p database -- --http 127.0.0.1:8080 # Streamable HTTP at /mcp instead of stdio
//! ```
//!
//! `main` opens the database and gives the connection to the server as state: every tool,
//! resource and prompt takes it as `State<Database>`. Once the shop's tables are in, the
//! connection only reads (`PRAGMA query_only`): no request can change the database.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::{State, resource_not_found, schemars, serde, serde_json};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// The example's data, loaded into a database that has no table yet.
const SEED: &str = "
    CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL UNIQUE,
        city TEXT
    );
    CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        price_cents INTEGER NOT NULL CHECK (price_cents >= 0)
    );
    CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        customer_id INTEGER NOT NULL REFERENCES customers(id),
        product_id INTEGER NOT NULL REFERENCES products(id),
        quantity INTEGER NOT NULL DEFAULT 1,
        placed_at TEXT NOT NULL
    );
    INSERT INTO customers (name, email, city) VALUES
        ('Ada Lovelace', 'ada@example.com', 'London'),
        ('Grace Hopper', 'grace@example.com', 'New York'),
        ('Alan Turing', 'alan@example.com', 'Manchester');
    INSERT INTO products (name, price_cents) VALUES
        ('Notebook', 450), ('Fountain pen', 3200), ('Ink', 900);
    INSERT INTO orders (customer_id, product_id, quantity, placed_at) VALUES
        (1, 2, 1, '2025-01-05'), (1, 3, 2, '2025-01-05'),
        (2, 1, 5, '2025-02-11'), (3, 1, 1, '2025-03-01');
";

/// The database the server answers from: one SQLite connection, which `main` opens and gives
/// the server as state.
struct Database {
    connection: Mutex<Connection>,
}

/// The condition on `sqlite_schema` that picks the database's tables, leaving out those
/// SQLite keeps for itself (`sqlite_sequence`, `sqlite_stat1`, …).
const USER_TABLES: &str = "type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

impl Database {
    /// Opens the file at `path` (creating it when missing), or a new database in memory when
    /// there is no path. A database without a table is given the shop's; then the connection
    /// is made read-only.
    fn open(path: Option<&Path>) -> rusqlite::Result<Database> {
        let mut connection = match path {
            Some(path) => Connection::open(path)?,
            None => Connection::open_in_memory()?,
        };
        // Another program may be writing the file: wait for it rather than fail at once.
        connection.busy_timeout(Duration::from_secs(5))?;
        if table_count(&connection)? == 0 {
            // Seeding writes, so it takes the write lock first and looks again: a server
            // started beside this one on the same new file may have seeded it meanwhile. The
            // transaction also keeps a seed cut short from leaving half the tables.
            let seed = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if table_count(&seed)? == 0 {
                seed.execute_batch(SEED)?;
            }
            seed.commit()?;
        }
        // Every statement run from here on may only read.
        connection.execute_batch("PRAGMA query_only = ON;")?;
        Ok(Database {
            connection: Mutex::new(connection),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The names of the tables, in order.
    fn table_names(&self) -> rusqlite::Result<Vec<String>> {
        let db = self.lock();
        let mut statement = db.prepare_cached(&format!(
            "SELECT name FROM sqlite_schema WHERE {USER_TABLES} ORDER BY name"
        ))?;
        statement.query_map([], |row| row.get(0))?.collect()
    }

    /// The DDL of every table.
    fn schema(&self) -> rusqlite::Result<String> {
        let db = self.lock();
        let mut statement = db.prepare_cached(&format!(
            "SELECT sql FROM sqlite_schema WHERE {USER_TABLES} ORDER BY name"
        ))?;
        let ddl: Vec<String> = statement
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(ddl.join(";\n\n") + ";\n")
    }

    /// The DDL of one table, or `None` when there is no such table.
    fn table_ddl(&self, table: &str) -> rusqlite::Result<Option<String>> {
        self.lock()
            .query_row(
                &format!("SELECT sql FROM sqlite_schema WHERE {USER_TABLES} AND name = ?1"),
                [table],
                |row| row.get::<_, String>(0),
            )
            .optional()
            .map(|ddl| ddl.map(|ddl| ddl + ";\n"))
    }
}

/// How many tables the database has, SQLite's own included.
fn table_count(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
        [],
        |row| row.get(0),
    )
}

/// The table names, as `main` read them when the server started, for the template's `list`
/// and the completions of `table`. Those two are plain functions called without a `Context`
/// or `State` (`fn() -> …` and `fn(&str) -> …`), so they cannot be handed the connection;
/// they read this list instead of the database. The server never changes the schema, so the
/// list stays right unless another program adds or drops a table in the file while the
/// server runs: the new table is then readable (`sqlite://tables/{table}/ddl` and
/// `query_database` use the connection) but neither listed nor completed until a restart.
static TABLES: OnceLock<Vec<String>> = OnceLock::new();

fn tables() -> &'static [String] {
    TABLES.get().map_or(&[], Vec::as_slice)
}

/// The rows a query returned.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct QueryResult {
    /// The column names, in order.
    columns: Vec<String>,
    /// One array of values per row.
    rows: Vec<Vec<serde_json::Value>>,
}

/// The most rows one query returns.
const MAX_ROWS: usize = 500;

/// Run one read-only SQL query (a single SELECT) and return its rows.
#[tool(title = "Query the database", annotations(read_only, idempotent))]
fn query_database(
    db: State<Database>,
    /// One SELECT statement, e.g. `SELECT name, city FROM customers`.
    sql: String,
) -> Result<Json<QueryResult>, ToolError> {
    let first_word = sql
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    if first_word != "SELECT" && first_word != "WITH" {
        return Err(ToolError::new(
            "only a single SELECT statement is allowed; this tool never changes the database",
        ));
    }
    let db = db.lock();
    let mut statement = db.prepare(&sql).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => ToolError::new(
            "only a single SELECT statement is allowed; remove everything after the first `;`",
        ),
        other => ToolError::new(format!("the query is not valid SQL: {other}")),
    })?;
    if !statement.readonly() {
        return Err(ToolError::new("only read-only statements are allowed"));
    }
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = Vec::new();
    let mut cursor = statement
        .query([])
        .map_err(|e| ToolError::new(format!("the query failed: {e}")))?;
    while let Some(row) = cursor
        .next()
        .map_err(|e| ToolError::new(format!("the query failed: {e}")))?
    {
        if rows.len() == MAX_ROWS {
            return Err(ToolError::new(format!(
                "the query returns more than {MAX_ROWS} rows; add a LIMIT or a WHERE clause"
            )));
        }
        let values = (0..columns.len())
            .map(|i| match row.get_ref(i) {
                Ok(ValueRef::Integer(n)) => n.into(),
                Ok(ValueRef::Real(x)) => x.into(),
                Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned().into(),
                Ok(ValueRef::Blob(b)) => format!("<{} bytes>", b.len()).into(),
                Ok(ValueRef::Null) | Err(_) => serde_json::Value::Null,
            })
            .collect();
        rows.push(values);
    }
    Ok(Json(QueryResult { columns, rows }))
}

/// A failure of the database, as a JSON-RPC error.
fn internal(error: rusqlite::Error) -> RpcError {
    RpcError::internal(format!("the database failed: {error}"))
}

/// The DDL of every table.
#[resource("sqlite://schema", mime = "text/x-sql", title = "Database schema")]
fn schema(db: State<Database>) -> Result<String, RpcError> {
    db.schema().map_err(internal)
}

/// The DDL of one table.
#[resource(
    "sqlite://tables/{table}/ddl",
    mime = "text/x-sql",
    title = "Table DDL",
    list = list_tables,
    complete(table = complete_table)
)]
fn table_ddl(
    db: State<Database>,
    /// The table's name.
    table: String,
) -> Result<String, RpcError> {
    db.table_ddl(&table)
        .map_err(internal)?
        .ok_or_else(|| resource_not_found(&format!("sqlite://tables/{table}/ddl")))
}

fn list_tables() -> Vec<Resource> {
    tables()
        .iter()
        .map(|t| {
            Resource::new(format!("sqlite://tables/{t}/ddl"), format!("{t} DDL"))
                .mime_type("text/x-sql")
        })
        .collect()
}

fn complete_table(prefix: &str) -> Vec<String> {
    tables()
        .iter()
        .filter(|t| t.starts_with(prefix))
        .cloned()
        .collect()
}

/// Review a SQL query for correctness and performance against this database's schema.
#[prompt(title = "Review a query", complete(table = complete_table))]
fn review_query(
    db: State<Database>,
    /// The query to review.
    query: String,
    /// The table the query is mostly about, if any.
    table: Option<String>,
    /// What to focus on, e.g. "performance" or "correctness".
    focus: Option<String>,
) -> Result<Vec<PromptMessage>, RpcError> {
    let focus = focus.unwrap_or_else(|| "correctness and performance".into());
    let context = match table {
        Some(t) => {
            let ddl = db
                .table_ddl(&t)
                .map_err(internal)?
                .unwrap_or_else(|| format!("-- no table named {t}"));
            EmbeddedResource::text(format!("sqlite://tables/{t}/ddl"), "text/x-sql", ddl)
        }
        None => EmbeddedResource::text(
            "sqlite://schema",
            "text/x-sql",
            db.schema().map_err(internal)?,
        ),
    };
    Ok(vec![
        PromptMessage::user(format!(
            "Review this SQLite query, focusing on {focus}. Point out mistakes and suggest a better version.\n\n```sql\n{query}\n```"
        )),
        PromptMessage::new(Role::User, context),
    ])
}

/// The database file of `--db PATH` (or `--db=PATH`), if given. `--http ADDR` is read by
/// `serve`, which leaves the other arguments to the program; here it is only stepped over.
fn db_path() -> mcp_runtime::Result<Option<PathBuf>> {
    let usage = |problem: String| {
        mcp_runtime::Error::Usage(format!(
            "{problem}\nusage: database [--db PATH] [--http ADDR]"
        ))
    };
    let mut path = None;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        let value = inline.or_else(|| args.next_if(|next| !next.starts_with("--")));
        match (name, value) {
            ("--db", Some(file)) if !file.is_empty() => path = Some(PathBuf::from(file)),
            ("--db", _) => return Err(usage("--db needs a path, e.g. --db shop.db".into())),
            ("--http", Some(addr)) if !addr.is_empty() => {}
            ("--http", _) => {
                return Err(usage(
                    "--http needs an address, e.g. --http 127.0.0.1:8080".into(),
                ));
            }
            _ => return Err(usage(format!("unknown argument `{arg}`"))),
        }
    }
    Ok(path)
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let path = db_path()?;
    let opened = Database::open(path.as_deref()).and_then(|db| {
        let tables = db.table_names()?;
        Ok((db, tables))
    });
    let (db, tables) = opened.map_err(|e| {
        let name = path
            .as_deref()
            .map_or("in memory".into(), |p| p.display().to_string());
        mcp_runtime::Error::Usage(format!("cannot open the database {name}: {e}"))
    })?;
    let instructions = format!(
        "A SQLite database (tables: {}). Read the schema resource first, then query with query_database.",
        tables.join(", ")
    );
    TABLES.get_or_init(|| tables);
    mcp_runtime::server!()
        .instructions(instructions)
        .state(db)
        .serve()
        .await
}
