//! MCP clients not written here, talking to the example servers over real pipes and over
//! Streamable HTTP, and to the catalogue server over the 2024-11-05 HTTP+SSE transport.
//!
//! The Python SDK is taken from `MCP_TEST_PYTHON` (a Python with the `mcp` package, which
//! `./run-tests` prepares), else `python3`.

use std::ffi::OsStr;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tests::http::HttpServer;
use mcp_tests::{workspace_binary, workspace_root};

/// How long one client script may take: each does a few dozen round trips, which take
/// seconds even on a busy machine.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

fn python() -> String {
    std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs one of the Python client scripts against an example's binary.
fn run_python_client(script: &str, example: &str) {
    run_python_script(script, workspace_binary(example).as_os_str(), &[]);
}

/// Like [`run_python_client`], with more arguments for the script.
fn run_python_client_with(script: &str, example: &str, extra: &[&str]) {
    run_python_script(script, workspace_binary(example).as_os_str(), extra);
}

/// Runs one of the Python client scripts with an argument (a server binary or a URL) and
/// any more it takes.
fn run_python_script(script: &str, argument: &OsStr, extra: &[&str]) {
    let script = workspace_root().join("tests/clients").join(script);
    let mut client = Command::new(python())
        .arg(&script)
        .arg(argument)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the Python SDK client (./run-tests installs it)");
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read_all(Box::new(client.stdout.take().expect("piped")));
    let stderr = read_all(Box::new(client.stderr.take().expect("piped")));
    // A client that hangs fails the test instead of holding the suite; killing it closes
    // the pipes of the server it started, which then ends too.
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let status = loop {
        if let Some(status) = client.try_wait().expect("wait for the client") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = client.kill();
            let _ = client.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    println!("{stdout}");
    let status = status.unwrap_or_else(|| {
        panic!(
            "the Python SDK client did not finish within {CLIENT_TIMEOUT:?}:\n{stdout}\n{stderr}"
        )
    });
    assert!(
        status.success(),
        "the Python SDK client failed (is the `mcp` package installed? ./run-tests installs it):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

#[test]
fn the_python_sdk_lists_and_calls_the_quickstart_tools_in_the_stateless_era() {
    run_python_client("python_sdk_client.py", "quickstart");
}

#[test]
fn the_python_sdk_lists_and_calls_the_quickstart_tools_after_the_handshake() {
    run_python_client_with("python_sdk_client.py", "quickstart", &["legacy"]);
}

#[test]
fn the_python_sdk_reads_templates_and_gets_prompts_from_the_database_example() {
    run_python_client("python_sdk_database.py", "database");
}

#[test]
fn the_python_sdk_answers_roots_sampling_and_elicitation_for_the_files_example() {
    run_python_client("python_sdk_files.py", "files");
}

#[test]
fn the_python_sdk_lists_and_calls_tools_over_the_legacy_http_sse_transport() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    run_python_script("python_sdk_legacy_sse.py", server.url("/sse").as_ref(), &[]);
}

#[test]
fn the_legacy_transport_sits_beside_an_endpoint_moved_elsewhere() {
    let server = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("HTTP_PATH", "/api/v1/mcp")],
    );
    assert_eq!(server.request("GET", "/sse").send().status, 404);
    run_python_script(
        "python_sdk_legacy_sse.py",
        server.url("/api/v1/sse").as_ref(),
        &[],
    );
}

#[test]
fn the_python_sdk_uses_the_notes_example_as_two_users_in_two_sessions_each() {
    let scratch = mcp_tests::Scratch::new("notes-python");
    let db = scratch.path("notes.db");
    let server = HttpServer::spawn_with_args(
        &workspace_binary("notes"),
        &[OsStr::new("--db"), db.as_os_str()],
        &[("NOTES_TOKENS", "alice:token-a,bob:token-b")],
    );
    run_python_script("python_sdk_notes.py", server.url("/mcp").as_ref(), &[]);
}

#[test]
fn the_python_sdk_completes_the_oauth_flow_against_the_notes_example() {
    let issuer = mcp_tests::oauth::AuthorizationServer::start();
    let scratch = mcp_tests::Scratch::new("notes-oauth");
    let db = scratch.path("notes.db");
    // The audience tokens must name is the URL the client uses, so the port is chosen first.
    let addr = format!("127.0.0.1:{}", mcp_tests::cluster::free_port());
    let server = HttpServer::spawn_on(
        &workspace_binary("notes"),
        &addr,
        &[
            OsStr::new("--db"),
            db.as_os_str(),
            OsStr::new("--issuer"),
            OsStr::new(&issuer.issuer),
        ],
        &[],
    );
    run_python_script(
        "python_sdk_oauth.py",
        server.url("/mcp").as_ref(),
        &[&issuer.issuer],
    );
    let stats = issuer.stats();
    assert_eq!(stats["register"], 1, "{stats}");
    assert_eq!(stats["authorize"], 1, "{stats}");
    assert_eq!(
        stats["jwks"], 1,
        "the server fetched the keys once: {stats}"
    );
}

#[test]
fn the_python_sdk_calls_tools_reads_templates_and_elicits_over_http_in_the_stateless_era() {
    let server = HttpServer::spawn(&workspace_binary("everything"), &[]);
    run_python_script("python_sdk_http.py", server.url("/mcp").as_ref(), &[]);
}

#[test]
fn the_python_sdk_calls_tools_reads_templates_and_elicits_over_http_after_the_handshake() {
    let server = HttpServer::spawn(&workspace_binary("everything"), &[]);
    run_python_script(
        "python_sdk_http.py",
        server.url("/mcp").as_ref(),
        &["legacy"],
    );
}

#[test]
fn the_python_sdk_uses_two_servers_through_the_gateway_in_both_eras() {
    let everything = HttpServer::spawn(&workspace_binary("everything"), &[]);
    // The gateway starts the quickstart binary next to its own.
    workspace_binary("quickstart");
    let gateway = workspace_binary("gateway");
    let url = everything.url("/mcp");
    for mode in [&[][..], &["legacy"][..]] {
        let mut extra = vec![url.as_str()];
        extra.extend_from_slice(mode);
        run_python_script("python_sdk_gateway.py", gateway.as_os_str(), &extra);
    }
}
