//! The one table of paths that generated code uses. Every path is absolute and goes through
//! `::mcp_runtime::__private`, so users never depend on serde, schemars, inventory or tokio.

use proc_macro2::TokenStream;
use quote::quote;

pub(crate) fn private() -> TokenStream {
    quote!(::mcp_runtime::__private)
}

macro_rules! private_paths {
    ($($fn_name:ident => $($segment:ident)::+;)*) => {
        $(
            pub(crate) fn $fn_name() -> TokenStream {
                let private = private();
                quote!(#private $(::$segment)+)
            }
        )*
    };
}

private_paths! {
    serde => serde;
    schemars => schemars;
    tokio => tokio;
    tool_trait => Tool;
    tool_descriptor => ToolDescriptor;
    tool_annotations => ToolAnnotations;
    source_location => SourceLocation;
    arguments => Arguments;
    tool_future => ToolFuture;
    context => Context;
    into_tool_result => IntoToolResult;
    input_schema => input_schema;
    fields_schema => fields_schema;
    output_schema => output_schema;
    assert_tool_parameter => assert_tool_parameter;
    submit_tool => submit_tool;
}

/// The same path as a string, for `#[serde(crate = "…")]`-style attributes.
pub(crate) fn as_string(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}
