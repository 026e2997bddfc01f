//! `examples/workspace`, the `fs/` and `project/` namespaces as methods of the server's own,
//! over real pipes with raw JSON-RPC: files in base64 read, written and listed; every way out
//! of the workspace root refused; `fs/didChange` for what changes under it, seen by inotify
//! and by scanning; and the allowlisted tools, through `project/` and through `tools/call`.
#![cfg(unix)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

#[cfg(target_os = "linux")]
use mcp_tests::inotify::Opens;
use mcp_tests::{Scratch, StdioServer, TIMEOUT, workspace_binary};
use serde_json::{Value, json};

/// The example's binary, built once for every test of this file.
fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| workspace_binary("workspace"))
}

/// A client of the server over its standard input and output.
struct Client {
    server: StdioServer,
    next_id: i64,
    /// Notifications received and not yet matched, in order.
    notifications: Vec<Value>,
    /// The `initialize` result.
    init: Value,
}

impl Client {
    /// Starts the server on `root` with more arguments, and performs the handshake.
    fn start(root: &Path, args: &[&str]) -> Client {
        let mut argv = vec![OsStr::new("--root"), root.as_os_str()];
        argv.extend(args.iter().map(OsStr::new));
        let mut server = StdioServer::spawn_with_args(binary(), &argv);
        let init = server.initialize("2025-06-18");
        assert!(init.get("result").is_some(), "{init}");
        Client {
            server,
            next_id: 0,
            notifications: Vec::new(),
            init: init["result"].clone(),
        }
    }

    /// A request's result, or its error object.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.server.request(id, method, params);
        let response = self.server.response(id);
        self.notifications.extend(self.server.take_backlog());
        match response.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(response["result"].clone()),
        }
    }

    /// A request's result, which must be one.
    fn ok(&mut self, method: &str, params: Value) -> Value {
        let described = format!("{method} {params}");
        self.call(method, params)
            .unwrap_or_else(|error| panic!("{described} failed: {error}"))
    }

    /// A request's error, which must be `-32602`.
    fn refused(&mut self, method: &str, params: Value) -> Value {
        let described = format!("{method} {params}");
        let error = match self.call(method, params) {
            Ok(result) => panic!("{described} was not refused: {result}"),
            Err(error) => error,
        };
        assert_eq!(error["code"], -32602, "{described}: {error}");
        error
    }

    /// Waits until every change of `expected` has been notified, in any order, and forgets
    /// every notification received up to the last of them. Fails past the deadline, listing
    /// what came instead.
    fn expect_changes(&mut self, expected: &[(&str, &str)]) {
        let deadline = Instant::now() + TIMEOUT;
        let mut missing: Vec<Value> = expected
            .iter()
            .map(|(path, reason)| json!({"path": path, "reason": reason}))
            .collect();
        let mut last = 0;
        let mut seen = 0;
        loop {
            while seen < self.notifications.len() {
                let message = &self.notifications[seen];
                if message["method"] == "fs/didChange"
                    && let Some(i) = missing.iter().position(|m| *m == message["params"])
                {
                    missing.remove(i);
                    last = seen + 1;
                }
                seen += 1;
            }
            if missing.is_empty() {
                self.notifications.drain(..last);
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.server.recv_line_within(left) {
                Some(message) => self.notifications.push(message),
                None => panic!(
                    "no fs/didChange {missing:?} within {TIMEOUT:?}; the server sent:\n{:#?}",
                    self.notifications
                ),
            }
        }
    }
}

/// A scratch folder with the workspace root in it, and a folder beside the root, outside.
fn sandbox(name: &str) -> (Scratch, PathBuf, PathBuf) {
    let scratch = Scratch::new(name);
    let root = scratch.path("root");
    let outside = scratch.path("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let root = root.canonicalize().unwrap();
    let outside = outside.canonicalize().unwrap();
    (scratch, root, outside)
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn files_travel_in_base64_and_listings_name_every_kind() {
    let (_scratch, root, _) = sandbox("workspace-files");
    std::fs::create_dir_all(root.join("dir/deeper")).unwrap();
    std::fs::write(root.join("dir/deeper/x"), "x").unwrap();
    std::fs::write(root.join("dir/inner.bin"), [0, 1, 2]).unwrap();
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
    let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut client = Client::start(&root, &[]);

    // Every byte value, there and back.
    let every_byte: Vec<u8> = (0..=255).collect();
    let written = client.ok(
        "fs/writeFile",
        json!({"path": "made/on/the/way.bin", "content": base64(&every_byte), "encoding": "base64"}),
    );
    assert_eq!(written, Value::Null);
    assert_eq!(
        std::fs::read(root.join("made/on/the/way.bin")).unwrap(),
        every_byte
    );
    let read = client.ok("fs/readFile", json!({"path": "made/on/the/way.bin"}));
    assert_eq!(
        read,
        json!({"content": base64(&every_byte), "encoding": "base64"})
    );
    // Overwritten with something shorter: the rest is gone.
    client.ok(
        "fs/writeFile",
        json!({"path": "made/on/the/way.bin", "content": base64(b"short"), "encoding": "base64"}),
    );
    assert_eq!(
        std::fs::read(root.join("made/on/the/way.bin")).unwrap(),
        b"short"
    );
    let read = client.ok("fs/readFile", json!({"path": "a.txt"}));
    assert_eq!(read["content"], base64(b"hello\n"));
    // An absolute path inside the root is the same file.
    let absolute = root.join("a.txt").to_str().unwrap().to_owned();
    assert_eq!(client.ok("fs/readFile", json!({"path": absolute})), read);
    // An empty file.
    client.ok(
        "fs/writeFile",
        json!({"path": "empty", "content": "", "encoding": "base64"}),
    );
    assert_eq!(
        client.ok("fs/readFile", json!({"path": "empty"}))["content"],
        ""
    );

    let listed = client.ok("fs/listDirectory", json!({"path": "."}));
    assert_eq!(
        listed,
        json!([
            {"name": "a.txt", "type": "file"},
            {"name": "dir", "type": "directory"},
            {"name": "empty", "type": "file"},
            {"name": "link", "type": "symlink"},
            {"name": "made", "type": "directory"},
            {"name": "pipe", "type": "other"},
        ])
    );
    let recursive = client.ok(
        "fs/listDirectory",
        json!({"path": "dir", "recursive": true}),
    );
    assert_eq!(
        recursive,
        json!([
            {"name": "deeper", "type": "directory"},
            {"name": "deeper/x", "type": "file"},
            {"name": "inner.bin", "type": "file"},
        ])
    );
    let names: Vec<_> = client
        .ok("fs/listDirectory", json!({"path": ".", "recursive": true}))
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "a.txt",
            "dir",
            "dir/deeper",
            "dir/deeper/x",
            "dir/inner.bin",
            "empty",
            "link",
            "made",
            "made/on",
            "made/on/the",
            "made/on/the/way.bin",
            "pipe",
        ]
    );
    assert_eq!(
        client.ok(
            "fs/listDirectory",
            json!({"path": "dir", "recursive": false})
        ),
        json!([
            {"name": "deeper", "type": "directory"},
            {"name": "inner.bin", "type": "file"},
        ])
    );

    // What cannot be done says why.
    let folder = client.refused("fs/readFile", json!({"path": "dir"}));
    assert_eq!(folder["data"]["code"], "wrong_file_kind", "{folder}");
    let fifo = client.refused("fs/readFile", json!({"path": "pipe"}));
    assert_eq!(fifo["data"]["code"], "wrong_file_kind", "{fifo}");
    let missing = client.refused("fs/readFile", json!({"path": "nope.txt"}));
    assert_eq!(missing["data"]["code"], "not_found", "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("fs/listDirectory"),
        "{missing}"
    );
    let not_a_folder = client.refused("fs/listDirectory", json!({"path": "a.txt"}));
    assert_eq!(not_a_folder["data"]["code"], "wrong_file_kind");
    let encoding = client.refused(
        "fs/writeFile",
        json!({"path": "x", "content": "eA==", "encoding": "utf8"}),
    );
    assert!(
        encoding["message"].as_str().unwrap().contains("base64"),
        "{encoding}"
    );
    let garbled = client.refused(
        "fs/writeFile",
        json!({"path": "x", "content": "not base64!", "encoding": "base64"}),
    );
    assert!(
        garbled["message"]
            .as_str()
            .unwrap()
            .contains("not valid base64"),
        "{garbled}"
    );
    assert!(!root.join("x").exists());
    let typo = client.refused("fs/listDirectory", json!({"path": ".", "recursiv": true}));
    assert!(
        typo["message"].as_str().unwrap().contains("recursiv"),
        "{typo}"
    );
    let no_path = client.refused("fs/readFile", json!({}));
    assert!(
        no_path["message"].as_str().unwrap().contains("path"),
        "{no_path}"
    );
    // `_meta` is welcome in any request.
    client.ok(
        "fs/readFile",
        json!({"path": "a.txt", "_meta": {"progressToken": 1}}),
    );
}

#[test]
fn every_way_out_of_the_root_is_refused() {
    let (_scratch, root, outside) = sandbox("workspace-fence");
    std::fs::create_dir_all(root.join("dir")).unwrap();
    std::fs::write(root.join("inside.txt"), "inside\n").unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", root.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("absolute-escape")).unwrap();
    std::os::unix::fs::symlink("../outside", root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dir/up")).unwrap();
    std::fs::hard_link(outside.join("secret.txt"), root.join("hard.txt")).unwrap();
    let mut client = Client::start(&root, &[]);

    let secret = outside.join("secret.txt").to_str().unwrap().to_owned();
    let ways_out = [
        "../x",
        "../outside/secret.txt",
        "../../etc/passwd",
        "dir/../../outside/secret.txt",
        "/etc/passwd",
        secret.as_str(),
        "file:///etc/passwd",
        "..\\outside\\secret.txt",
        "escape",
        "absolute-escape",
        "linkdir",
        "linkdir/secret.txt",
        "dir/up/secret.txt",
    ];
    for path in ways_out {
        for (method, params) in [
            ("fs/readFile", json!({"path": path})),
            (
                "fs/writeFile",
                json!({"path": path, "content": base64(b"pwned"), "encoding": "base64"}),
            ),
            ("fs/listDirectory", json!({"path": path, "recursive": true})),
            (
                "project/executeTool",
                json!({"name": "project/countLines", "parameters": {"path": path}}),
            ),
        ] {
            let refused = client.refused(method, params);
            assert_eq!(
                refused["data"]["code"], "path_outside_roots",
                "{method} {path}: {refused}"
            );
            let message = refused["message"].as_str().unwrap();
            assert!(
                message.contains("is refused") && message.contains(root.to_str().unwrap()),
                "{method} {path}: {message}"
            );
        }
    }
    for path in ["linkdir", "dir/up", ".."] {
        let refused = client.refused(
            "project/executeTool",
            json!({"name": "project/search", "parameters": {"word": "secret", "path": path}}),
        );
        assert_eq!(refused["data"]["code"], "path_outside_roots", "{refused}");
    }
    // A hard link to a file outside is not written through.
    let shared = client.refused(
        "fs/writeFile",
        json!({"path": "hard.txt", "content": base64(b"pwned"), "encoding": "base64"}),
    );
    assert_eq!(shared["data"]["code"], "file_has_other_links", "{shared}");
    // Through tools/call, the same refusal is a tool error carrying the same detail.
    let via_tool = client.ok(
        "tools/call",
        json!({"name": "countLines", "arguments": {"path": "escape"}}),
    );
    assert_eq!(via_tool["isError"], true, "{via_tool}");
    assert_eq!(
        via_tool["_meta"]["mcp-runtime/error"]["code"],
        "path_outside_roots"
    );
    // A recursive listing of the root lists the links as links, and does not enter them.
    let listed = client.ok("fs/listDirectory", json!({"path": ".", "recursive": true}));
    let names: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["name"].as_str().unwrap(),
                entry["type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("absolute-escape", "symlink"),
            ("dir", "directory"),
            ("dir/up", "symlink"),
            ("escape", "symlink"),
            ("hard.txt", "file"),
            ("inside.txt", "file"),
            ("linkdir", "symlink"),
        ]
    );
    // The search does not follow them either.
    let found = client.ok(
        "project/executeTool",
        json!({"name": "project/search", "parameters": {"word": "secret"}}),
    );
    let paths: Vec<_> = found["result"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    // Only the hard link, a file of the root's own, whose reading the fence allows.
    assert_eq!(paths, ["hard.txt"]);

    // Nothing outside changed, and nothing was made there.
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    let mut outside_names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    outside_names.sort();
    assert_eq!(outside_names, [OsStr::new("secret.txt")]);
    assert!(!root.parent().unwrap().join("x").exists());
    // And the paths inside still work.
    let inside = client.ok("fs/readFile", json!({"path": "./inside.txt"}));
    assert_eq!(inside["content"], base64(b"inside\n"));
}

/// Changes made beside the server and by it, as they are notified.
fn changes_are_notified(args: &[&str], watcher: &str) {
    let (_scratch, root, _) = sandbox("workspace-watch");
    std::fs::write(root.join("before.txt"), "there before").unwrap();
    let mut client = Client::start(&root, args);
    assert_eq!(
        client.init["capabilities"]["experimental"]["com.example/workspace"],
        json!({"namespaces": ["fs", "project"], "watcher": watcher})
    );

    // Beside the server: a file created, changed and deleted.
    std::fs::write(root.join("a.txt"), "one").unwrap();
    client.expect_changes(&[("a.txt", "created")]);
    std::fs::write(root.join("a.txt"), "two, longer").unwrap();
    client.expect_changes(&[("a.txt", "modified")]);
    std::fs::remove_file(root.join("a.txt")).unwrap();
    client.expect_changes(&[("a.txt", "deleted")]);
    std::fs::remove_file(root.join("before.txt")).unwrap();
    client.expect_changes(&[("before.txt", "deleted")]);

    // A folder made with a file in it at once: the folder is watched as it appears.
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("sub/deeper/inner.txt"), "inner").unwrap();
    client.expect_changes(&[
        ("sub", "created"),
        ("sub/deeper", "created"),
        ("sub/deeper/inner.txt", "created"),
    ]);
    std::fs::write(root.join("sub/deeper/inner.txt"), "inner, changed").unwrap();
    client.expect_changes(&[("sub/deeper/inner.txt", "modified")]);

    // By the server itself.
    client.ok(
        "fs/writeFile",
        json!({"path": "sub/mine.txt", "content": base64(b"mine"), "encoding": "base64"}),
    );
    client.expect_changes(&[("sub/mine.txt", "created")]);
    client.ok(
        "fs/writeFile",
        json!({"path": "sub/mine.txt", "content": base64(b"mine, again"), "encoding": "base64"}),
    );
    client.expect_changes(&[("sub/mine.txt", "modified")]);

    // A folder renamed, then deleted with everything in it.
    std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
    client.expect_changes(&[
        ("sub/deeper/inner.txt", "deleted"),
        ("sub/deeper", "deleted"),
        ("sub/mine.txt", "deleted"),
        ("sub", "deleted"),
        ("moved", "created"),
        ("moved/deeper", "created"),
        ("moved/deeper/inner.txt", "created"),
        ("moved/mine.txt", "created"),
    ]);
    // Under its new name it is watched too.
    std::fs::write(root.join("moved/deeper/new.txt"), "new").unwrap();
    client.expect_changes(&[("moved/deeper/new.txt", "created")]);
    std::fs::remove_dir_all(root.join("moved")).unwrap();
    client.expect_changes(&[
        ("moved/deeper/new.txt", "deleted"),
        ("moved/deeper/inner.txt", "deleted"),
        ("moved/deeper", "deleted"),
        ("moved/mine.txt", "deleted"),
        ("moved", "deleted"),
    ]);
}

#[cfg(target_os = "linux")]
#[test]
fn changes_are_notified_as_inotify_sees_them() {
    changes_are_notified(&[], "inotify");
}

#[test]
fn changes_are_notified_by_scanning_with_poll() {
    changes_are_notified(&["--poll"], "polling");
}

#[test]
fn read_file_reads_at_most_1_mib_so_a_client_that_does_not_read_holds_little() {
    let (_scratch, root, _) = sandbox("workspace-read-cap");
    let at_cap = vec![7u8; 1024 * 1024];
    std::fs::write(root.join("at-cap.bin"), &at_cap).unwrap();
    std::fs::write(root.join("over.bin"), vec![7u8; 1024 * 1024 + 1]).unwrap();
    let mut client = Client::start(&root, &[]);
    let read = client.ok("fs/readFile", json!({"path": "at-cap.bin"}));
    assert_eq!(read["content"], base64(&at_cap));
    // 64 requests in flight of a bigger answer each, never read, would be held all at once.
    let refused = client.refused("fs/readFile", json!({"path": "over.bin"}));
    assert_eq!(
        refused["message"],
        "over.bin has 1048577 bytes; fs/readFile reads files of at most 1048576"
    );
}

/// A folder of `count` empty files, `f00000` on.
#[cfg(target_os = "linux")]
fn many_files(dir: &Path, count: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..count {
        std::fs::write(dir.join(format!("f{i:05}")), "").unwrap();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn with_inotify_a_change_costs_what_changed_and_not_what_its_folder_holds() {
    let (_scratch, root, _) = sandbox("workspace-watch-cost");
    many_files(&root.join("many"), 2000);
    let mut client = Client::start(&root, &[]);
    let opens = Opens::watch(&root.join("many"));
    for round in 0..3 {
        std::fs::write(root.join("many/f00007"), format!("round {round}")).unwrap();
        client.expect_changes(&[("many/f00007", "modified")]);
        // Reported after the watcher looked: whatever it opened is queued by now.
        let mut opened = opens.take();
        opened.remove("f00007");
        assert!(
            opened.is_empty(),
            "one write made the watcher open {} other files",
            opened.len()
        );
    }
    std::fs::remove_file(root.join("many/f00008")).unwrap();
    std::fs::write(root.join("many/new"), "").unwrap();
    client.expect_changes(&[("many/f00008", "deleted"), ("many/new", "created")]);
    let mut opened = opens.take();
    opened.remove("new");
    assert!(opened.is_empty(), "{opened:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_scan_of_a_folder_of_many_files_opens_none_of_them() {
    let (_scratch, root, _) = sandbox("workspace-scan-cost");
    many_files(&root.join("many"), 1100);
    std::fs::write(root.join("few.txt"), "few").unwrap();
    let opens = Opens::watch(&root.join("many"));
    let mut client = Client::start(&root, &["--poll"]);
    std::fs::write(root.join("many/f00003"), "longer now").unwrap();
    client.expect_changes(&[("many/f00003", "modified")]);
    // Scanned at start and at least once since, by `stat` alone.
    let mut opened = opens.take();
    opened.remove("f00003");
    assert!(opened.is_empty(), "the scans opened {} files", opened.len());
    // A folder of few files is still timed: a rewrite of the same size is seen.
    std::fs::write(root.join("few.txt"), "wef").unwrap();
    client.expect_changes(&[("few.txt", "modified")]);
}

#[test]
fn project_tools_run_from_the_allowlist_only() {
    let (_scratch, root, _) = sandbox("workspace-project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "let needle = 1;\nlet needles = 2;\nend",
    )
    .unwrap();
    std::fs::write(root.join("notes.md"), "a needle_case\nfind the needle.\n").unwrap();
    std::fs::write(root.join("blob.bin"), b"needle\0binary").unwrap();
    let mut client = Client::start(&root, &[]);

    let listed = client.ok("project/listTools", Value::Null);
    let names: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["project/countLines", "project/search"]);
    assert_eq!(client.ok("project/listTools", json!({})), listed);
    let mcp_tools = client.ok("tools/list", json!({}))["tools"].clone();
    for (tool, mcp_name) in listed
        .as_array()
        .unwrap()
        .iter()
        .zip(["countLines", "search"])
    {
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{tool}");
        assert_eq!(tool["parameters"]["type"], "object", "{tool}");
        let mcp = mcp_tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == mcp_name)
            .unwrap_or_else(|| panic!("tools/list has no {mcp_name}: {mcp_tools}"));
        assert_eq!(mcp["inputSchema"], tool["parameters"], "{mcp_name}");
        assert_eq!(mcp["description"], tool["description"], "{mcp_name}");
    }
    assert_eq!(mcp_tools.as_array().unwrap().len(), 2, "{mcp_tools}");

    // The same answer both ways in.
    let counted = client.ok(
        "project/executeTool",
        json!({"name": "project/countLines", "parameters": {"path": "src/lib.rs"}}),
    );
    assert_eq!(
        counted,
        json!({"result": {"path": "src/lib.rs", "lines": 3}})
    );
    let called = client.ok(
        "tools/call",
        json!({"name": "countLines", "arguments": {"path": "src/lib.rs"}}),
    );
    assert_eq!(called["structuredContent"], counted["result"], "{called}");
    // The MCP name is understood too.
    assert_eq!(
        client.ok(
            "project/executeTool",
            json!({"name": "countLines", "parameters": {"path": "notes.md"}})
        ),
        json!({"result": {"path": "notes.md", "lines": 2}})
    );

    let found = client.ok(
        "project/executeTool",
        json!({"name": "project/search", "parameters": {"word": "needle"}}),
    );
    assert_eq!(
        found,
        json!({"result": {
            "matches": [
                {"path": "notes.md", "line": 2, "text": "find the needle."},
                {"path": "src/lib.rs", "line": 1, "text": "let needle = 1;"},
            ],
            "truncated": false,
            "skipped": 1,
        }})
    );
    let called = client.ok(
        "tools/call",
        json!({"name": "search", "arguments": {"word": "needle"}}),
    );
    assert_eq!(called["structuredContent"], found["result"], "{called}");
    let in_src = client.ok(
        "project/executeTool",
        json!({"name": "project/search", "parameters": {"word": "needles", "path": "src"}}),
    );
    assert_eq!(
        in_src["result"]["matches"],
        json!([{"path": "src/lib.rs", "line": 2, "text": "let needles = 2;"}])
    );

    // Nothing off the allowlist runs, whatever it is called.
    for name in ["project/shell", "sh", "rm -rf /", "project/countLines2", ""] {
        let refused = client.refused(
            "project/executeTool",
            json!({"name": name, "parameters": {"path": "src/lib.rs"}}),
        );
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("unknown tool `{name}`"))
                && message.contains("project/countLines, project/search"),
            "{message}"
        );
    }
    // Parameters that do not match the schema are refused, naming the problem.
    for (parameters, problem) in [
        (json!({}), "missing field `path`"),
        (Value::Null, "missing field `path`"),
        (json!({"path": 7}), "invalid type: integer `7`"),
        (
            json!({"path": "src/lib.rs", "extra": 1}),
            "unknown field `extra`",
        ),
        (json!(["src/lib.rs"]), "must be an object"),
    ] {
        let refused = client.refused(
            "project/executeTool",
            json!({"name": "project/countLines", "parameters": parameters}),
        );
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.starts_with("project/countLines: invalid parameters")
                && message.contains(problem),
            "{parameters}: {message}"
        );
    }
    let words = client.refused(
        "project/executeTool",
        json!({"name": "project/search", "parameters": {"word": "two words"}}),
    );
    assert!(
        words["message"].as_str().unwrap().contains("one word"),
        "{words}"
    );
    let missing = client.refused(
        "project/executeTool",
        json!({"name": "project/countLines", "parameters": {"path": "gone.rs"}}),
    );
    assert_eq!(missing["data"]["code"], "not_found", "{missing}");
    let nameless = client.refused("project/executeTool", json!({"parameters": {}}));
    assert!(
        nameless["message"].as_str().unwrap().contains("`name`"),
        "{nameless}"
    );
}

#[test]
fn the_workspace_root_is_required() {
    let mut server = StdioServer::spawn_reading_stderr(binary(), &[]);
    let said = server.wait_for_stderr("--root DIR");
    assert!(said.contains("name the workspace root"), "{said}");
    assert!(!server.wait().success());
}
