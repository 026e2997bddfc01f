use mcp_runtime::prelude::*;

struct Library;

#[toolbox]
impl Library {
    /// A prompt that needs the library.
    #[prompt]
    fn recommend(&self) -> String {
        "read more".into()
    }

    /// A tool with a misspelt key, and a parameter that is no argument.
    #[tool(nme = "find")]
    fn search(&self, query: &str) -> String {
        query.to_owned()
    }
}

fn main() {}
