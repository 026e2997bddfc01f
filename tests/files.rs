//! The files example over real pipes, as a client drives it: what its delete question names,
//! and how its searches behave on trees built to exhaust them — thousands of folders, more
//! entries than it looks at, fewer descriptors than it would need — and when cancelled.

#[cfg(target_os = "linux")]
use std::collections::BTreeSet;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::time::Duration;

use mcp_tests::Scratch;
use mcp_tests::files::{self, call_tool, call_tool_answering, confirm};
#[cfg(target_os = "linux")]
use mcp_tests::{TIMEOUT, inotify::Opens};
use serde_json::{Value, json};

/// A search's result, which must not be an error.
fn search(server: &mut mcp_tests::StdioServer, id: i64, pattern: &str) -> Value {
    let result = call_tool(server, id, "search_files", json!({"pattern": pattern}));
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
    let mut server = files::start(&[&first, &second]);

    let path = second.join("notes.txt");
    let mut questions = Vec::new();
    let result = call_tool_answering(
        &mut server,
        2,
        "delete_file",
        json!({"path": path.to_str().unwrap()}),
        |question| {
            questions.push(question.clone());
            confirm()
        },
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
    let mut server = files::start_with_descriptors(64, &[&root]);
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
    let mut server = files::start_with_descriptors(48, &[&root]);
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
    let mut server = files::start(&[&root]);
    let found = search(&mut server, 2, "no-such-name");
    assert_eq!(found["entries"], json!([]), "{found}");
    assert_eq!(
        found["truncated"], true,
        "nothing says the search stopped: {found}"
    );
}

/// The walk goes on in a thread of its own, which nothing stops but its own look at the
/// cancellation; inotify shows how far it went: a walk that went on opened every folder.
#[cfg(target_os = "linux")]
#[test]
fn a_cancelled_search_opens_no_more_folders() {
    const FOLDERS: usize = 9_000;
    let scratch = Scratch::new("files-cancel");
    let root = folder(&scratch, "root");
    // Empty: a walk that looks at the cancellation only at each entry finds none in them.
    for n in 0..FOLDERS {
        std::fs::create_dir(root.join(format!("d{n:04}"))).unwrap();
    }
    let mut server = files::start(&[&root]);
    let opens = Opens::watch(&root);
    server.request(
        2,
        "tools/call",
        json!({"name": "search_files", "arguments": {"pattern": "needle"}}),
    );
    // Cancelled once the walk has listed the root and is opening its folders.
    let mut opened = BTreeSet::new();
    while opened.is_empty() {
        assert!(opens.wait(TIMEOUT), "the search opened no folder");
        opened = opens.take();
    }
    server.notify(
        "notifications/cancelled",
        json!({"requestId": 2, "reason": "the user moved on"}),
    );
    // The server reads in order: once it answers this, it has read the cancellation.
    server.request(3, "ping", json!({}));
    server.response(3);
    while opens.wait(Duration::from_millis(500)) {
        opened.extend(opens.take());
    }
    assert!(
        opened.len() < FOLDERS,
        "the cancelled search went on to open all {} folders",
        opened.len()
    );
}

#[test]
fn the_files_example_refuses_to_serve_http_where_any_client_would_choose_its_roots() {
    let (status, stderr) = mcp_tests::refusal_of(
        std::process::Command::new(files::binary()).args(["--http", "127.0.0.1:0"]),
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("standard input and output only"),
        "{stderr}"
    );
}

#[test]
fn a_root_whose_name_holds_a_space_a_hash_and_a_percent_is_served() {
    let scratch = Scratch::new("files-root-name");
    let root = folder(&scratch, "my #1 100%");
    std::fs::write(root.join("notes.txt"), "inside").unwrap();
    let mut server = files::start(&[&root]);
    let read = call_tool(&mut server, 2, "read_file", json!({"path": "notes.txt"}));
    assert_eq!(read["content"][0]["text"], "inside", "{read}");
}

#[cfg(unix)]
#[test]
fn a_binary_file_comes_back_under_a_valid_file_uri_naming_it() {
    let scratch = Scratch::new("files-uri");
    let root = folder(&scratch, "root");
    std::fs::write(root.join("bin #?% é.dat"), [0xff, 0x00, 0xfe]).unwrap();
    let mut server = files::start(&[&root]);
    let result = call_tool(
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
    let mut server = files::start(&[&root]);
    let listed = call_tool(&mut server, 2, "list_directory", json!({}));
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
