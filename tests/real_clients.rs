//! MCP clients not written here, talking to the example servers over real pipes.
//!
//! The Python SDK is taken from `MCP_TEST_PYTHON` (a Python with the `mcp` package, which
//! `./run-tests` prepares), else `python3`.

use std::process::Command;

use mcp_tests::{workspace_binary, workspace_root};

fn python() -> String {
    std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs one of the Python client scripts against an example's binary.
fn run_python_client(script: &str, example: &str) {
    let binary = workspace_binary(example);
    let script = workspace_root().join("tests/clients").join(script);
    let output = Command::new(python())
        .arg(&script)
        .arg(&binary)
        .output()
        .expect("run the Python SDK client (./run-tests installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the Python SDK client failed (is the `mcp` package installed? ./run-tests installs it):\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

#[test]
fn the_python_sdk_lists_and_calls_the_quickstart_tools() {
    run_python_client("python_sdk_client.py", "quickstart");
}

#[test]
fn the_python_sdk_reads_templates_and_gets_prompts_from_the_database_example() {
    run_python_client("python_sdk_database.py", "database");
}

#[test]
fn the_python_sdk_answers_roots_sampling_and_elicitation_for_the_files_example() {
    run_python_client("python_sdk_files.py", "files");
}
