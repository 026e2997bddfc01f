//! Compile-time behaviour of the macros: what `#[tool]` accepts, and the error each mistake
//! produces, pinned as `.stderr` snapshots.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p mcp-tests --test ui`, then
//! read every changed `.stderr`: each error must point at the user's own token. The snapshots
//! follow the compiler pinned in `rust-toolchain.toml`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/tool/pass/*.rs");
    t.compile_fail("ui/tool/fail/*.rs");
}
