//! An MCP server over a real SQLite database, created in memory with a few tables and rows.
//!
//! - `query_database`: runs one read-only `SELECT` and returns the rows as structured output;
//!   anything else is refused as a tool error.
//! - `sqlite://schema`: the DDL of every table, as a static resource.
//! - `sqlite://tables/{table}/ddl`: the DDL of one table, a template whose `table` completes
//!   and whose `list` names every table.
//! - `review_query`: a prompt that asks the model to review a query against the schema.
//!
//! Run it with `cargo run -p database`; it speaks MCP on standard input and output.

use std::sync::{Mutex, MutexGuard, OnceLock};

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::{resource_not_found, schemars, serde, serde_json};
use rusqlite::Connection;
use rusqlite::types::ValueRef;

/// The example's data, created once.
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

fn database() -> MutexGuard<'static, Connection> {
    static DATABASE: OnceLock<Mutex<Connection>> = OnceLock::new();
    DATABASE
        .get_or_init(|| {
            let connection = Connection::open_in_memory().expect("an in-memory database opens");
            connection.execute_batch(SEED).expect("the seed data loads");
            // Every statement run from here on may only read.
            connection
                .execute_batch("PRAGMA query_only = ON;")
                .expect("query_only is supported");
            Mutex::new(connection)
        })
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
    let db = database();
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

fn table_names() -> Vec<String> {
    let db = database();
    let mut statement = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .expect("the schema query is valid");
    statement
        .query_map([], |row| row.get(0))
        .and_then(Iterator::collect)
        .unwrap_or_default()
}

/// The DDL of every table.
#[resource("sqlite://schema", mime = "text/x-sql", title = "Database schema")]
fn schema() -> String {
    let db = database();
    let mut statement = db
        .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .expect("the schema query is valid");
    let ddl: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .and_then(Iterator::collect)
        .unwrap_or_default();
    ddl.join(";\n\n") + ";\n"
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
    /// The table's name.
    table: String,
) -> Result<String, RpcError> {
    let db = database();
    db.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [&table],
        |row| row.get::<_, String>(0),
    )
    .map(|ddl| ddl + ";\n")
    .map_err(|_| resource_not_found(&format!("sqlite://tables/{table}/ddl")))
}

fn list_tables() -> Vec<Resource> {
    table_names()
        .into_iter()
        .map(|t| {
            Resource::new(format!("sqlite://tables/{t}/ddl"), format!("{t} DDL"))
                .mime_type("text/x-sql")
        })
        .collect()
}

fn complete_table(prefix: &str) -> Vec<String> {
    table_names()
        .into_iter()
        .filter(|t| t.starts_with(prefix))
        .collect()
}

/// Review a SQL query for correctness and performance against this database's schema.
#[prompt(title = "Review a query", complete(table = complete_table))]
fn review_query(
    /// The query to review.
    query: String,
    /// The table the query is mostly about, if any.
    table: Option<String>,
    /// What to focus on, e.g. "performance" or "correctness".
    focus: Option<String>,
) -> Vec<PromptMessage> {
    let focus = focus.unwrap_or_else(|| "correctness and performance".into());
    let context = match table {
        Some(t) => EmbeddedResource::text(
            format!("sqlite://tables/{t}/ddl"),
            "text/x-sql",
            table_ddl(t.clone()).unwrap_or_else(|_| format!("-- no table named {t}")),
        ),
        None => EmbeddedResource::text("sqlite://schema", "text/x-sql", schema()),
    };
    vec![
        PromptMessage::user(format!(
            "Review this SQLite query, focusing on {focus}. Point out mistakes and suggest a better version.\n\n```sql\n{query}\n```"
        )),
        PromptMessage::new(Role::User, context),
    ]
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!()
        .instructions(
            "A small shop database (customers, products, orders). Read the schema resource first, then query with query_database.",
        )
        .serve()
        .await
}
