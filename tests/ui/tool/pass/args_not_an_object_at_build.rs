//! `#[tool(args)]` on a type whose schema is not an object, which the macro cannot know (an
//! enum of names): refused when the server is built, saying how to fix it.

use mcp_runtime::CatalogueError;
use mcp_runtime::prelude::*;

/// A flavour.
#[derive(mcp_runtime::serde::Deserialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
enum Flavour {
    Vanilla,
    Chocolate,
}

/// Pick a flavour.
#[tool(args)]
fn pick(flavour: Flavour) -> &'static str {
    match flavour {
        Flavour::Vanilla => "vanilla",
        Flavour::Chocolate => "chocolate",
    }
}

fn main() {
    let error = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![pick])
        .build()
        .unwrap_err();
    let CatalogueError::InputSchemaNotObject { name, .. } = &error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(*name, "pick");
    let message = error.to_string();
    assert!(
        message.contains("must be an object with named fields")
            && message.contains("remove `args` to make the parameter one argument"),
        "{message}"
    );
}
