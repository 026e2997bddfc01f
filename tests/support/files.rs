//! The files example (`examples/files`) over real pipes, as a client that offers roots and
//! elicitation drives it: started with its roots answered, and its questions to the user
//! answered as each test chooses.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::{StdioServer, TIMEOUT, workspace_binary};

/// The files example, built once.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| workspace_binary("files"))
}

/// The files example past the handshake, `roots` the client's roots.
pub fn start(roots: &[&Path]) -> StdioServer {
    connect(StdioServer::spawn(binary()), roots)
}

/// The files example allowed only `descriptors` open files (`ulimit -n`), `roots` the
/// client's roots.
#[cfg(unix)]
pub fn start_with_descriptors(descriptors: usize, roots: &[&Path]) -> StdioServer {
    let script = format!("ulimit -n {descriptors} && exec \"$0\"");
    // `exec`: the process the test starts, and kills, is the server itself.
    let server = StdioServer::spawn_with_args(
        Path::new("/bin/sh"),
        &["-c".as_ref(), script.as_ref(), binary().as_os_str()],
    );
    connect(server, roots)
}

/// Past the handshake, with `roots` as the client's roots: the server asks for them on the
/// first call that needs them (request id 1, a listing of the first root), and caches them.
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
        .map(|root| {
            let uri = mcp_runtime::file_uri(root)
                .unwrap_or_else(|| panic!("a root is an absolute path: {}", root.display()));
            json!({ "uri": uri })
        })
        .collect();
    server.respond(&asked["id"], json!({ "roots": roots }));
    let listing = server.response(1);
    assert_ne!(listing["result"]["isError"], true, "{listing}");
    server
}

/// The user's answer that confirms: `delete_file`'s box ticked.
pub fn confirm() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

/// Calls a tool and returns its result, confirming whatever it asks the user.
pub fn call_tool(server: &mut StdioServer, id: i64, name: &str, arguments: Value) -> Value {
    call_tool_answering(server, id, name, arguments, |_| confirm())
}

/// Calls a tool and returns its result; each question it asks the user (the whole
/// `elicitation/create` request) is answered by `answer`.
pub fn call_tool_answering(
    server: &mut StdioServer,
    id: i64,
    name: &str,
    arguments: Value,
    mut answer: impl FnMut(&Value) -> Value,
) -> Value {
    server.request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    loop {
        let message = server
            .recv_line_within(TIMEOUT)
            .unwrap_or_else(|| panic!("no answer to {name}"));
        if message["method"] == "elicitation/create" {
            let reply = answer(&message);
            server.respond(&message["id"], reply);
        } else if message["id"] == id && message.get("method").is_none() {
            return message["result"].clone();
        }
    }
}
