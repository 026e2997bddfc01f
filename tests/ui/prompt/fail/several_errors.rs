use mcp_runtime::prelude::*;

fn languages(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[prompt(nmae = "x", name = "", title = "A", title = "B", complete(lang = languages), icon())]
async fn broken<T>((a, b): (u32, u32), text: &str, value: impl ToString) -> impl Into<String> {
    let _ = (a, b, text);
    value.to_string()
}

fn main() {}
