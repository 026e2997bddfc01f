/// Add two integers.
#[tool(annotations(read_only, idempotent))]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Greet someone by name.
#[tool(annotations(read_only))]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}
