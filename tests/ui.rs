//! Compile-time behaviour of the macros: the error each mistake in `#[tool]`, `#[prompt]` and
//! `#[resource]` produces, pinned as `.stderr` snapshots. What they accept is in
//! `ui/*/pass/`, each program a test binary of its own (`ui-pass-*` in the manifest).
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p mcp-tests --test ui`, then
//! read every changed `.stderr`: each error must point at the user's own token. The snapshots
//! follow the compiler pinned in `rust-toolchain.toml`.
//!
//! Two messages cannot be trybuild snapshots: a warning (trybuild shows a passing test's
//! output to no one), and the advice of a method that exists only without the `http` feature
//! (this crate enables it, and trybuild builds with this crate's features). Those are checked
//! by building the programs of `ui/default-features/` in a crate of their own, which depends
//! on mcp-runtime with its default features.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every macro error, each program's against its `.stderr` snapshot. trybuild checks them all
/// in one `cargo check`. (The programs that must compile and run are test binaries of this
/// crate, `ui-pass-*` in its manifest: a set holding any of those makes trybuild build each
/// program by a cargo invocation of its own, which took most of this test's time.)
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for item in ["tool", "prompt", "resource", "toolbox", "main"] {
        t.compile_fail(format!("ui/{item}/fail/*.rs"));
    }
}

/// Every program of `ui/*/pass/` is a test target of this crate: one left out of the
/// manifest would never be built.
#[test]
fn every_program_that_must_compile_is_a_test_target() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(tests.join("Cargo.toml")).expect("read the manifest");
    let mut missing = Vec::new();
    for item in std::fs::read_dir(tests.join("ui")).expect("read ui/") {
        let item = item.expect("read ui/").path();
        let Ok(programs) = std::fs::read_dir(item.join("pass")) else {
            continue;
        };
        for program in programs {
            let path = program.expect("read a pass/ folder").path();
            let relative = path.strip_prefix(tests).expect("under the crate");
            let line = format!("path = \"{}\"", relative.display());
            if path.extension().is_some_and(|e| e == "rs")
                && !manifest.lines().any(|l| l.trim() == line)
            {
                missing.push(relative.display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "add a `[[test]]` (harness = false) to tests/Cargo.toml for each of: {missing:?}"
    );
}

#[test]
fn serve_http_without_the_http_feature_says_which_feature_to_enable() {
    let (built, stderr) = build_with_default_features("serve_http");
    assert!(!built, "{stderr}");
    assert!(
        stderr.contains("error[E0277]: `serve_http` needs the `http` feature of mcp-runtime"),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"features = ["http"]"#) && stderr.contains("--features http"),
        "{stderr}"
    );
    assert!(!stderr.contains("no method named"), "{stderr}");
    assert_eq!(
        stderr.matches("error[E0277]").count(),
        1,
        "one error, at the call: {stderr}"
    );
}

#[test]
fn a_tool_without_a_description_is_a_warning_at_its_name() {
    let (built, stderr) = build_with_default_features("undocumented_tool");
    assert!(built, "{stderr}");
    let warning = "warning: use of deprecated associated constant `word_count::HAS_NO_DESCRIPTION`: \
        the tool `word_count` has no description, so a model sees only its name: add a doc \
        comment above `fn word_count` (`/// What it does.`) or `#[tool(description = \"…\")]`";
    assert!(stderr.contains(warning), "{stderr}");
    assert!(
        stderr.contains("src/bin/undocumented_tool.rs:6:4"),
        "the warning points at the function's name: {stderr}"
    );
    assert_eq!(
        stderr.matches("warning: use of deprecated").count(),
        1,
        "only the tool without a description is reported: {stderr}"
    );
}

/// Builds `ui/default-features/{program}.rs` as a binary of a crate that depends on
/// mcp-runtime with its default features: whether it built, and what cargo printed.
fn build_with_default_features(program: &str) -> (bool, String) {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = tests.parent().expect("the tests crate is in the workspace");
    // Under the workspace's `target/`, so its `rust-toolchain.toml` applies; a workspace of
    // its own, with the workspace's lock file, so the build needs no network.
    let dir = workspace
        .join("target/tests/default-features")
        .join(program);
    let bin = dir.join("src/bin");
    std::fs::create_dir_all(&bin).expect("create the crate's directory");
    let runtime = workspace.join("mcp-runtime");
    let manifest = format!(
        "[package]\nname = \"default-features-{program}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nmcp-runtime = {{ path = {runtime:?} }}\n\n[workspace]\n",
        runtime = runtime.display().to_string()
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).expect("read Cargo.lock");
    if !dir.join("Cargo.lock").exists() {
        write_if_changed(&dir.join("Cargo.lock"), &lock);
    }
    let source = std::fs::read_to_string(
        tests
            .join("ui/default-features")
            .join(format!("{program}.rs")),
    )
    .expect("read the program");
    write_if_changed(&bin.join(format!("{program}.rs")), &source);
    let cargo = PathBuf::from(option_env!("CARGO").unwrap_or("cargo"));
    let output = Command::new(cargo)
        .args(["build", "--offline", "--color", "never", "--bin", program])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace.join("target/tests/default-features/target"),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Writes a file unless it holds this text already, so cargo rebuilds only what changed
/// (a warning is printed again by cargo from its cache).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    std::fs::write(path, text).expect("write the crate's file");
}
