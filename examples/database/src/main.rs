//! An MCP server over a real SQLite database: a small shop (customers, products, orders)
//! created in memory, or a database file named on the command line.
//!
//! - `query_database`: runs one read-only `SELECT` and returns the rows as structured output;
//!   anything else is refused as a tool error, and so is a query that runs too long or
//!   returns too much.
//! - `sqlite://schema`: the DDL of every table, as a static resource.
//! - `sqlite://tables/{table}/ddl`: the DDL of one table, a template whose `table` completes
//!   and whose `list` names every table.
//! - `review_query`: a prompt that asks the model to review a query against the schema.
//!
//! ```text
//! cargo run -p database                          # the shop, in memory, over stdio
//! cargo run -p database -- --db shop.db          # a file; created and seeded if it has no table
//! cargo run -p database -- --time-limit 30       # let a query run 30 s (10 s by default)
//! cargo run -p database -- --http 127.0.0.1:8080 # Streamable HTTP at /mcp instead of stdio
//! ```
//!
//! `main` opens the database and gives it to the server as state: every tool, resource and
//! prompt takes it as `State<Database>`. Once the shop's tables are in, every connection the
//! server opens is read-only, and each query of the model's runs on a connection of its own
//! whose authorizer lets SQLite compile nothing but reads: no request can change the
//! database, nor the connection the next request uses.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::{State, resource_not_found, schemars, serde, serde_json};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{
    Batch, Connection, ErrorCode, OpenFlags, OptionalExtension, Statement, TransactionBehavior,
};

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

/// The in-memory database, by a name that SQLite's `memdb` file system shares among the
/// connections of this process (a name starting with `/`): the read-only connections then
/// see what the seeding one wrote, which a private `:memory:` database would not let them.
const IN_MEMORY: &str = "file:/shop?vfs=memdb";

/// How long a query may run unless `--time-limit` says otherwise.
const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(10);

/// The database the server answers from, which `main` opens and gives the server as state.
struct Database {
    /// The file, or [`IN_MEMORY`]: what each query's connection opens.
    path: PathBuf,
    /// The server's own connection, for the schema and the DDL. The model's SQL never runs
    /// on it, so a long query never holds it up; in memory, it also keeps the database alive.
    connection: Mutex<Connection>,
    /// How long one query may run.
    time_limit: Duration,
}

/// The condition on `sqlite_schema` that picks the database's tables, leaving out those
/// SQLite keeps for itself (`sqlite_sequence`, `sqlite_stat1`, …).
const USER_TABLES: &str = "type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

impl Database {
    /// Opens the file at `path` (creating it when missing), or a new database in memory when
    /// there is no path. A database without a table is given the shop's; from then on the
    /// server opens it read-only.
    fn open(path: Option<&Path>, time_limit: Duration) -> rusqlite::Result<Database> {
        let path = path.unwrap_or(Path::new(IN_MEMORY)).to_path_buf();
        let mut seeder = Connection::open(&path)?;
        // Another program may be writing the file: wait for it rather than fail at once.
        seeder.busy_timeout(Duration::from_secs(5))?;
        if table_count(&seeder)? == 0 {
            // Seeding writes, so it takes the write lock first and looks again: a server
            // started beside this one on the same new file may have seeded it meanwhile. The
            // transaction also keeps a seed cut short from leaving half the tables.
            let seed = seeder.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if table_count(&seed)? == 0 {
                seed.execute_batch(SEED)?;
            }
            seed.commit()?;
        }
        // Opened before the seeding connection closes: a database in memory lasts only as
        // long as some connection to it.
        let connection = open_read_only(&path)?;
        drop(seeder);
        Ok(Database {
            path,
            connection: Mutex::new(connection),
            time_limit,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection for one query of the model's, closed once the query is done, so that
    /// nothing a query could set outlives it. It is read-only (SQLite refuses every write to
    /// the file, whatever was compiled); its authorizer lets SQLite compile only reads
    /// ([`only_reads`]); no value may grow past [`MAX_RESULT_BYTES`]; and SQLite stops the
    /// query at `deadline`, or as soon as the client cancels the call.
    fn query_connection(&self, deadline: Instant, ctx: Context) -> rusqlite::Result<Connection> {
        let mut connection = open_read_only(&self.path)?;
        connection.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_RESULT_BYTES as i32)?;
        connection.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        connection.authorizer(Some(only_reads))?;
        // Called every thousand steps of SQLite's machine; `true` interrupts the query.
        connection.progress_handler(
            1_000,
            Some(move || Instant::now() >= deadline || ctx.is_cancelled()),
        )?;
        Ok(connection)
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

/// Opens the database so that SQLite itself refuses to write to it.
fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // Another program may be writing the file: wait for it rather than fail at once.
    connection.busy_timeout(Duration::from_secs(5))?;
    Ok(connection)
}

/// How many tables the database has, SQLite's own included.
fn table_count(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
        [],
        |row| row.get(0),
    )
}

/// Functions that reach beyond the query: loading code, or replacing a full-text tokenizer.
const FORBIDDEN_FUNCTIONS: [&str; 2] = ["load_extension", "fts3_tokenizer"];

/// What SQLite may compile for a query of the model's: reading tables, computing with
/// functions, recursive common table expressions. Everything else is denied as the statement
/// is compiled, before any of it takes effect: every write, ATTACH, and PRAGMA — which SQLite
/// applies while compiling it, and which table-valued functions such as `pragma_optimize()`
/// run too.
fn only_reads(context: AuthContext<'_>) -> Authorization {
    match context.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name }
            if !FORBIDDEN_FUNCTIONS
                .iter()
                .any(|forbidden| function_name.eq_ignore_ascii_case(forbidden)) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// The table names, as `main` read them when the server started, for the template's `list`
/// and the completions of `table`. Those two are plain functions called without a `Context`
/// or `State` (`fn() -> …` and `fn(&str) -> …`), so they cannot be handed the connection;
/// they read this list instead of the database. The server never changes the schema, so the
/// list stays right unless another program adds or drops a table in the file while the
/// server runs: the new table is then readable (`sqlite://tables/{table}/ddl` and
/// `query_database` use the database) but neither listed nor completed until a restart.
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

/// The most bytes of names and values one query returns; no single value SQLite computes
/// may be longer either, so a query cannot fill the memory with one enormous string.
const MAX_RESULT_BYTES: usize = 1024 * 1024;

/// Run one read-only SQL query (a single SELECT) and return its rows.
#[tool(title = "Query the database", annotations(read_only, idempotent))]
async fn query_database(
    ctx: Context,
    db: State<Database>,
    /// One SELECT statement, e.g. `SELECT name, city FROM customers`.
    sql: String,
) -> Result<Json<QueryResult>, ToolError> {
    // SQLite computes on the calling thread: off the runtime's, the server answers other
    // requests meanwhile (a stdio server has only one).
    mcp_runtime::tokio::task::spawn_blocking(move || run_query(&db, &sql, ctx).map(Json)).await?
}

/// Runs the model's query on a connection of its own, within the time limit.
fn run_query(db: &Database, sql: &str, ctx: Context) -> Result<QueryResult, ToolError> {
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
    let deadline = Instant::now() + db.time_limit;
    let connection = db
        .query_connection(deadline, ctx)
        .map_err(|e| ToolError::new(format!("the database failed: {e}")))?;
    let mut statement = prepare_one(&connection, sql)?;
    if !statement.readonly() {
        return Err(ToolError::new("only read-only statements are allowed"));
    }
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut bytes = columns.iter().map(String::len).sum::<usize>();
    let mut rows = Vec::new();
    let failed = |e| query_failed(e, db.time_limit);
    let mut cursor = statement.query([]).map_err(failed)?;
    while let Some(row) = cursor.next().map_err(failed)? {
        if rows.len() == MAX_ROWS {
            return Err(ToolError::new(format!(
                "the query returns more than {MAX_ROWS} rows; add a LIMIT or a WHERE clause"
            )));
        }
        let mut values = Vec::with_capacity(columns.len());
        for i in 0..columns.len() {
            let value: serde_json::Value = match row.get_ref(i) {
                Ok(ValueRef::Integer(n)) => n.into(),
                Ok(ValueRef::Real(x)) => x.into(),
                Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned().into(),
                Ok(ValueRef::Blob(b)) => format!("<{} bytes>", b.len()).into(),
                Ok(ValueRef::Null) | Err(_) => serde_json::Value::Null,
            };
            // A number or a null counts as the longest it could be written.
            bytes += value.as_str().map_or(24, str::len);
            if bytes > MAX_RESULT_BYTES {
                return Err(ToolError::new(format!(
                    "the result is larger than {MAX_RESULT_BYTES} bytes, the most this tool \
                     returns; select fewer rows or columns, or shorten long values with substr()"
                )));
            }
            values.push(value);
        }
        rows.push(values);
    }
    Ok(QueryResult { columns, rows })
}

/// Compiles the first statement of `sql`, and nothing after it: compiling a PRAGMA applies
/// it, so a statement after the first must not reach SQLite even to be refused. SQLite finds
/// where the first statement ends; `sql` is refused if anything but spaces, comments and `;`
/// follows.
fn prepare_one<'c>(connection: &'c Connection, sql: &str) -> Result<Statement<'c>, ToolError> {
    let first = Batch::new(connection, sql)
        .next()
        .map_err(|e| match e.sqlite_error_code() {
            Some(ErrorCode::AuthorizationForStatementDenied) => refused_by_authorizer(),
            _ => ToolError::new(format!("the query is not valid SQL: {e}")),
        })?
        .ok_or_else(|| ToolError::new("the query is empty; send one SELECT statement"))?;
    if first.parameter_count() > 0 {
        return Err(ToolError::new(
            "the query has parameters (`?`, `:name`); write the values into the query instead",
        ));
    }
    // With no parameters, the statement's text is `sql` up to where SQLite stopped reading.
    let rest = first
        .expanded_sql()
        .and_then(|own| sql.strip_prefix(own.as_str()).map(str::to_owned));
    match rest {
        Some(rest) if is_blank_sql(&rest) => Ok(first),
        _ => Err(ToolError::new(
            "only a single SELECT statement is allowed; remove everything after the first `;`",
        )),
    }
}

/// Whether `text` holds nothing to run: spaces, comments and `;` alone.
fn is_blank_sql(mut text: &str) -> bool {
    loop {
        text = text.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ';');
        if let Some(comment) = text.strip_prefix("--") {
            text = comment.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(comment) = text.strip_prefix("/*") {
            text = comment.split_once("*/").map_or("", |(_, after)| after);
        } else {
            return text.is_empty();
        }
    }
}

fn refused_by_authorizer() -> ToolError {
    ToolError::new(
        "the query may only read: writes, PRAGMA (also as functions like pragma_table_info), \
         ATTACH and load_extension are refused",
    )
}

/// What a query that SQLite stopped means, as a tool error telling the model what to do.
fn query_failed(error: rusqlite::Error, time_limit: Duration) -> ToolError {
    match error.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => ToolError::new(format!(
            "the query ran longer than {} s and was stopped; narrow it with a WHERE or a LIMIT",
            time_limit.as_secs_f64()
        )),
        Some(ErrorCode::TooBig) => ToolError::new(format!(
            "a value in the query is longer than {MAX_RESULT_BYTES} bytes, the most this tool \
             returns; shorten it with substr()"
        )),
        Some(ErrorCode::AuthorizationForStatementDenied) => refused_by_authorizer(),
        _ => ToolError::new(format!("the query failed: {error}")),
    }
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
        .ok_or_else(|| resource_not_found(&table_uri(&table)))
}

/// The URI of a table's DDL, as the template `sqlite://tables/{table}/ddl` reads it: the name
/// percent-encoded but for unreserved characters (RFC 6570's simple expansion), so that a
/// table named `a/ddl#x` or `a b` is one valid URI that names that table and no other.
fn table_uri(table: &str) -> String {
    let mut uri = String::from("sqlite://tables/");
    for byte in table.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri + "/ddl"
}

fn list_tables() -> Vec<Resource> {
    tables()
        .iter()
        .map(|t| Resource::new(table_uri(t), format!("{t} DDL")).mime_type("text/x-sql"))
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
            EmbeddedResource::text(table_uri(&t), "text/x-sql", ddl)
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

/// What the command line asks for.
struct Options {
    /// The database file of `--db PATH` (or `--db=PATH`), if given.
    path: Option<PathBuf>,
    /// How long a query may run: `--time-limit SECONDS`.
    time_limit: Duration,
}

/// Reads the command line. `--http ADDR` is read by `serve`, which leaves the other arguments
/// to the program; here it is only stepped over.
fn options() -> mcp_runtime::Result<Options> {
    let usage = |problem: String| {
        mcp_runtime::Error::Usage(format!(
            "{problem}\nusage: database [--db PATH] [--time-limit SECONDS] [--http ADDR]"
        ))
    };
    let mut options = Options {
        path: None,
        time_limit: DEFAULT_TIME_LIMIT,
    };
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        let value = inline.or_else(|| args.next_if(|next| !next.starts_with("--")));
        match (name, value) {
            ("--db", Some(file)) if !file.is_empty() => options.path = Some(PathBuf::from(file)),
            ("--db", _) => return Err(usage("--db needs a path, e.g. --db shop.db".into())),
            ("--time-limit", Some(seconds)) => {
                options.time_limit = seconds
                    .parse::<f64>()
                    .ok()
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .filter(|limit| !limit.is_zero())
                    .ok_or_else(|| {
                        usage(format!(
                            "--time-limit needs seconds, e.g. --time-limit 30, not `{seconds}`"
                        ))
                    })?;
            }
            ("--time-limit", None) => {
                return Err(usage(
                    "--time-limit needs seconds, e.g. --time-limit 30".into(),
                ));
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
    Ok(options)
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let Options { path, time_limit } = options()?;
    let opened = Database::open(path.as_deref(), time_limit).and_then(|db| {
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
