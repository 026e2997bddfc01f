//! The database example over real pipes, as a client drives it: its read-only guarantee
//! against SQL that tries to change the database or the connection, and its bounds on a
//! query's time and on the size of what it returns.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use mcp_tests::{Scratch, StdioServer, TIMEOUT, workspace_binary};
use serde_json::{Value, json};

/// The database example, built once.
fn database_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| workspace_binary("database"))
}

/// The database example started with `args`, past the handshake.
fn database_server(args: &[&str]) -> StdioServer {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut server = StdioServer::spawn_with_args(database_binary(), &args);
    let initialized = server.initialize("2025-11-25");
    assert!(initialized.get("result").is_some(), "{initialized}");
    server
}

/// Sends `sql` to `query_database` as request `id`, without waiting.
fn send_query(server: &mut StdioServer, id: i64, sql: &str) {
    server.request(
        id,
        "tools/call",
        json!({"name": "query_database", "arguments": {"sql": sql}}),
    );
}

/// Runs `sql` through `query_database` and returns the call's result.
fn query(server: &mut StdioServer, id: i64, sql: &str) -> Value {
    send_query(server, id, sql);
    let response = server.response(id);
    response
        .get("result")
        .unwrap_or_else(|| panic!("no result for {sql:?}: {response}"))
        .clone()
}

/// The rows of a successful query.
fn rows(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"]["rows"].clone()
}

/// The text of a tool error.
fn tool_error(result: &Value) -> String {
    let shown: String = result.to_string().chars().take(500).collect();
    assert_eq!(result["isError"], true, "expected a tool error: {shown}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_statement_after_the_first_never_reaches_sqlite() {
    let mut server = database_server(&[]);
    // Compiling a flag PRAGMA applies it: were the second statement compiled, even to be
    // refused, LIKE would be case-sensitive from then on, and the next query would find none.
    let refused = query(&mut server, 1, "SELECT 1; PRAGMA case_sensitive_like = 1");
    assert!(tool_error(&refused).contains("single SELECT"), "{refused}");
    let ada = query(
        &mut server,
        2,
        "SELECT count(*) FROM customers WHERE name LIKE 'ada%'",
    );
    assert_eq!(rows(&ada), json!([[1]]));

    let refused = query(&mut server, 3, "SELECT 1; PRAGMA hard_heap_limit = 100000");
    assert!(tool_error(&refused).contains("single SELECT"), "{refused}");
    let big = query(&mut server, 4, "SELECT length(printf('%.*c', 500000, 'x'))");
    assert_eq!(rows(&big), json!([[500000]]));

    // What may follow the one statement: `;`, spaces and comments; a `;` in a string is text.
    let one = query(
        &mut server,
        5,
        "SELECT 'a;b' AS s; -- done\n ; /* really */",
    );
    assert_eq!(rows(&one), json!([["a;b"]]));
}

#[test]
fn no_query_can_change_the_database_file() {
    let scratch = Scratch::new("database-read-only");
    let file = scratch.path("shop.db");
    let mut server = database_server(&["--db", file.to_str().expect("a UTF-8 path")]);
    let before = std::fs::read(&file).expect("the seeded database");

    let attempts = [
        // The probe's way in: query_only turned off while the refused tail was compiled,
        // then ANALYZE run by pragma_optimize, which writes sqlite_stat1.
        "SELECT 1; PRAGMA query_only = 0",
        "SELECT * FROM pragma_optimize(0x10002)",
        "SELECT * FROM pragma_query_only",
        "WITH doomed AS (SELECT 1) DELETE FROM customers",
        "WITH fresh AS (SELECT 1) INSERT INTO customers (name, email) SELECT 'Eve', 'eve@example.com' FROM fresh",
        "SELECT load_extension('/no/such/library')",
    ];
    for (id, sql) in (1..).zip(attempts) {
        let result = query(&mut server, id, sql);
        tool_error(&result);
    }
    let customers = query(&mut server, 10, "SELECT count(*) FROM customers");
    assert_eq!(rows(&customers), json!([[3]]));
    let stats = query(
        &mut server,
        11,
        "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'",
    );
    assert_eq!(rows(&stats), json!([[0]]));

    server.close_stdin();
    assert!(server.wait().success());
    assert!(
        std::fs::read(&file).expect("the database") == before,
        "the database file changed"
    );
}

/// How many of the process's threads are running or ready to run.
#[cfg(target_os = "linux")]
fn running_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        // The state follows the command's name, which is in parentheses.
        .filter(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('R'))
        })
        .count()
}

/// A query that counts for ever, were nothing to stop it.
const ENDLESS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

#[test]
fn an_endless_query_is_stopped_at_the_time_limit_and_others_are_served_meanwhile() {
    let mut server = database_server(&["--time-limit", "1"]);
    send_query(&mut server, 1, ENDLESS);
    // A stdio server has one thread: the ping is answered first only if the query runs
    // elsewhere.
    server.request(2, "ping", json!({}));
    let first = server.recv();
    assert_eq!(first["id"], 2, "the ping waited for the query: {first}");
    let other = query(&mut server, 3, "SELECT count(*) FROM products");
    assert_eq!(rows(&other), json!([[3]]));

    let stopped = server.response(1)["result"].clone();
    assert!(
        tool_error(&stopped).contains("ran longer than 1 s"),
        "{stopped}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_cancelled_query_stops_computing() {
    let mut server = database_server(&["--time-limit", "600"]);
    send_query(&mut server, 1, ENDLESS);
    let deadline = Instant::now() + TIMEOUT;
    while running_threads(server.pid()) == 0 {
        assert!(Instant::now() < deadline, "the query never started");
        std::thread::yield_now();
    }
    server.notify(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "the user gave up"}),
    );
    // A query that went on would keep a thread running for ten minutes; a stopped one leaves
    // every thread of the server asleep.
    while running_threads(server.pid()) > 0 {
        assert!(
            Instant::now() < deadline,
            "the cancelled query is still running"
        );
        std::thread::yield_now();
    }
    let after = query(&mut server, 2, "SELECT count(*) FROM orders");
    assert_eq!(rows(&after), json!([[4]]));
    assert!(
        server.take_backlog().iter().all(|m| m["id"] != 1),
        "a cancelled request is not answered"
    );
}

#[test]
fn a_value_or_a_result_too_large_is_a_tool_error_saying_so() {
    let mut server = database_server(&[]);
    let huge = query(&mut server, 1, "SELECT printf('%.*c', 10000000, 'a')");
    let text = tool_error(&huge);
    assert!(text.contains("1048576 bytes"), "{text}");

    let wide = query(
        &mut server,
        2,
        "SELECT printf('%.*c', 600000, 'a'), printf('%.*c', 600000, 'b')",
    );
    let text = tool_error(&wide);
    assert!(text.contains("larger than 1048576 bytes"), "{text}");

    // Just under the limit comes back whole.
    let fits = query(
        &mut server,
        3,
        "SELECT length(printf('%.*c', 1000000, 'a'))",
    );
    assert_eq!(rows(&fits), json!([[1000000]]));
    let fits = query(&mut server, 4, "SELECT printf('%.*c', 1000000, 'a') AS a");
    assert_eq!(rows(&fits)[0][0].as_str().map(str::len), Some(1_000_000));
}

#[test]
fn the_review_prompt_embeds_the_tables_uri_with_its_name_percent_encoded() {
    let mut server = database_server(&[]);
    let table = "x/ddl#frag ?%";
    server.request(
        1,
        "prompts/get",
        json!({"name": "review_query",
               "arguments": {"query": "SELECT 1", "table": table}}),
    );
    let prompt = server.response(1);
    let uri = prompt["result"]["messages"][1]["content"]["resource"]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("{prompt}"))
        .to_owned();
    // Unescaped, `/` and `#` would make `sqlite://tables/x/ddl#frag/ddl`: another table's
    // URI with a fragment.
    assert_eq!(uri, "sqlite://tables/x%2Fddl%23frag%20%3F%25/ddl");
    // The template reads the name back whole: no such table, under that same URI.
    server.request(2, "resources/read", json!({"uri": uri}));
    let read = server.response(2);
    assert_eq!(read["error"]["code"], -32002, "{read}");
    assert_eq!(read["error"]["data"]["uri"], uri, "{read}");
}
