//! The files example over real pipes, as a client drives it: what its delete question names,
//! and how its searches behave on trees built to exhaust them — thousands of folders, more
//! entries than it looks at, fewer descriptors than it would need.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mcp_tests::{Scratch, StdioServer, TIMEOUT, workspace_binary};
use serde_json::{Value, json};

/// The files example, built once.
fn files_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| workspace_binary("files"))
}

/// Past the handshake, with `roots` as the client's roots (answered on the first call).
fn connect(mut server: StdioServer, roots: &[&Path]) -> StdioServer {
    server.initialize_with(
        "2025-11-25",
        json!({"roots": {}, "elicitation": {"form": {}}}),
    );
    server.request(
        1,
        "tools/call",
        json!({"name": "list_directory", "arguments": {}}),
    );
    let asked = server.server_request("roots/list");
    let roots: Vec<Value> = roots
        .iter()
        .map(|root| json!({"uri": format!("file://{}", root.display())}))
        .collect();
    server.respond(&asked["id"], json!({ "roots": roots }));
    let listing = server.response(1);
    assert_ne!(listing["result"]["isError"], true, "{listing}");
    server
}

/// The files example, its roots `roots`.
fn files_server(roots: &[&Path]) -> StdioServer {
    connect(StdioServer::spawn(files_binary()), roots)
}

/// The files example allowed only `descriptors` open files (`ulimit -n`), its root `root`.
#[cfg(unix)]
fn files_server_with_descriptors(descriptors: usize, root: &Path) -> StdioServer {
    let script = format!("ulimit -n {descriptors} && exec \"$0\"");
    // `exec`: the process the test starts, and kills, is the server itself.
    let server = StdioServer::spawn_with_args(
        Path::new("/bin/sh"),
        &["-c".as_ref(), script.as_ref(), files_binary().as_os_str()],
    );
    connect(server, &[root])
}

/// Calls a tool, and returns its result with every question it asked the user (each
/// answered "confirm").
fn call_tool(
    server: &mut StdioServer,
    id: i64,
    name: &str,
    arguments: Value,
) -> (Value, Vec<Value>) {
    server.request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    let mut questions = Vec::new();
    loop {
        let message = server
            .recv_line_within(TIMEOUT)
            .unwrap_or_else(|| panic!("no answer to {name}"));
        if message["method"] == "elicitation/create" {
            server.respond(
                &message["id"],
                json!({"action": "accept", "content": {"confirm": true}}),
            );
            questions.push(message);
        } else if message["id"] == id && message.get("method").is_none() {
            return (message["result"].clone(), questions);
        }
    }
}

/// A search's result, which must not be an error.
fn search(server: &mut StdioServer, id: i64, pattern: &str) -> Value {
    let (result, _) = call_tool(server, id, "search_files", json!({"pattern": pattern}));
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"].clone()
}

/// The canonical path of a scratch folder, created.
fn folder(scratch: &Scratch, name: &str) -> PathBuf {
    let path = scratch.path(name);
    std::fs::create_dir_all(&path).unwrap();
    path.canonicalize().unwrap()
}

#[test]
fn the_delete_question_names_the_root_the_file_is_in() {
    let scratch = Scratch::new("files-two-roots");
    let first = folder(&scratch, "first");
    let second = folder(&scratch, "second");
    std::fs::write(first.join("notes.txt"), "first").unwrap();
    std::fs::write(second.join("notes.txt"), "second").unwrap();
    let mut server = files_server(&[&first, &second]);

    let path = second.join("notes.txt");
    let (result, questions) = call_tool(
        &mut server,
        2,
        "delete_file",
        json!({"path": path.to_str().unwrap()}),
    );
    assert_ne!(result["isError"], true, "{result}");
    let [question] = questions.as_slice() else {
        panic!("one question, not {questions:?}");
    };
    let text = question["params"]["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("notes.txt") && text.contains(&second.display().to_string()),
        "the question does not say which notes.txt: {text}"
    );
    assert!(first.join("notes.txt").exists());
    assert!(!second.join("notes.txt").exists());
}

#[cfg(unix)]
#[test]
fn a_search_of_a_folder_of_many_folders_finds_them_all_with_few_descriptors() {
    let scratch = Scratch::new("files-wide");
    let root = folder(&scratch, "root");
    for n in 0..300 {
        let sub = root.join(format!("d{n:03}"));
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join(format!("needle-{n}.txt")), "").unwrap();
    }
    // Holding each folder open until its turn would take 300 descriptors.
    let mut server = files_server_with_descriptors(64, &root);
    let found = search(&mut server, 2, "needle");
    assert_eq!(
        found["entries"].as_array().map(Vec::len),
        Some(300),
        "{found}"
    );
    assert_eq!(found["truncated"], false, "{found}");
    assert_eq!(found["skipped_count"], 0, "{found}");
}

#[cfg(unix)]
#[test]
fn a_search_names_the_folders_it_could_not_read() {
    let scratch = Scratch::new("files-deep");
    let root = folder(&scratch, "root");
    // Each level holds an empty `a` and the next level, `b`: a walk down the `b`s keeps every
    // level's `a` waiting, and so one descriptor per level — more than the server may have.
    let mut level = root.clone();
    for _ in 0..100 {
        std::fs::create_dir(level.join("a")).unwrap();
        level = level.join("b");
        std::fs::create_dir(&level).unwrap();
    }
    std::fs::write(level.join("needle.txt"), "").unwrap();
    let mut server = files_server_with_descriptors(48, &root);
    let found = search(&mut server, 2, "needle");
    assert_eq!(found["entries"], json!([]), "{found}");
    assert!(
        found["skipped_count"].as_u64().unwrap_or_default() >= 1,
        "{found}"
    );
    let skipped = found["skipped"][0].as_str().unwrap_or_default();
    assert!(
        skipped.starts_with("b/b/") && skipped.contains("Too many open files"),
        "{found}"
    );
}

#[test]
fn a_search_stops_after_ten_thousand_entries_and_says_truncated() {
    let scratch = Scratch::new("files-huge");
    let root = folder(&scratch, "root");
    for d in 0..101 {
        let sub = root.join(format!("d{d:03}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f:03}.txt")), "").unwrap();
        }
    }
    let mut server = files_server(&[&root]);
    let found = search(&mut server, 2, "no-such-name");
    assert_eq!(found["entries"], json!([]), "{found}");
    assert_eq!(
        found["truncated"], true,
        "nothing says the search stopped: {found}"
    );
}

#[test]
fn the_files_example_refuses_to_serve_http_where_any_client_would_choose_its_roots() {
    let (status, stderr) = mcp_tests::refusal_of(
        std::process::Command::new(files_binary()).args(["--http", "127.0.0.1:0"]),
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("standard input and output only"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn a_binary_file_comes_back_under_a_valid_file_uri_naming_it() {
    let scratch = Scratch::new("files-uri");
    let root = folder(&scratch, "root");
    std::fs::write(root.join("bin #?% é.dat"), [0xff, 0x00, 0xfe]).unwrap();
    let mut server = files_server(&[&root]);
    let (result, _) = call_tool(
        &mut server,
        2,
        "read_file",
        json!({"path": "bin #?% é.dat"}),
    );
    let resource = &result["content"][0]["resource"];
    assert_eq!(resource["blob"], "/wD+", "{result}");
    let uri = resource["uri"].as_str().unwrap();
    // A space, `#`, `?` and `%` would end or change the URI: each is escaped.
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(uri.ends_with("/bin%20%23%3F%25%20%C3%A9.dat"), "{uri}");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_listed_as_other_and_not_found_by_a_search_for_files() {
    let scratch = Scratch::new("files-fifo");
    let root = folder(&scratch, "root");
    let fifo = std::ffi::CString::new(
        root.join("queue.pipe")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: a plain system call on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::write(root.join("notes.pipe.txt"), "text").unwrap();
    let mut server = files_server(&[&root]);
    let (listed, _) = call_tool(&mut server, 2, "list_directory", json!({}));
    // In the order the file system gives them.
    let mut entries = listed["structuredContent"]["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    entries.sort_by_key(|entry| entry["path"].to_string());
    assert_eq!(
        Value::from(entries),
        json!([
            {"path": "notes.pipe.txt", "kind": "file", "size": 4},
            {"path": "queue.pipe", "kind": "other", "size": null},
        ]),
        "{listed}"
    );
    let found = search(&mut server, 3, "pipe");
    assert_eq!(
        found["entries"],
        json!([{"path": "notes.pipe.txt", "kind": "file", "size": 4}])
    );
}
