//! Compile-time behaviour of the macros: what `#[tool]`, `#[prompt]` and `#[resource]` accept,
//! and the error each mistake produces, pinned as `.stderr` snapshots.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p mcp-tests --test ui`, then
//! read every changed `.stderr`: each error must point at the user's own token. The snapshots
//! follow the compiler pinned in `rust-toolchain.toml`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/tool/pass/*.rs");
    t.compile_fail("ui/tool/fail/*.rs");
    t.pass("ui/prompt/pass/*.rs");
    t.compile_fail("ui/prompt/fail/*.rs");
    t.pass("ui/resource/pass/*.rs");
    t.compile_fail("ui/resource/fail/*.rs");
    t.pass("ui/main/pass/*.rs");
    t.compile_fail("ui/main/fail/*.rs");
}
