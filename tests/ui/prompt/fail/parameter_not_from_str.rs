use mcp_runtime::prelude::*;

/// Does not implement `FromStr`.
struct Branch {
    name: String,
}

#[prompt]
fn code_review(files: u32, base: Option<Branch>) -> String {
    let base = base.map_or_else(|| "main".to_owned(), |b| b.name);
    format!("Review {files} files against {base}.")
}

fn main() {}
