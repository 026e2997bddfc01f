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
    task_support => TaskSupport;
    block_on => block_on;
    cache_hint => CacheHint;
    source_location => SourceLocation;
    arguments => Arguments;
    tool_future => ToolFuture;
    context => Context;
    tool_arguments => ToolArguments;
    argument_struct => argument_struct;
    argument_struct_parsed_only => argument_struct_parsed_only;
    parameter_deserialize => ParameterDeserialize;
    parameter_schema => ParameterSchema;
    tool_output => ToolOutput;
    tool_output_of => tool_output;
    submit_tool => submit_tool;
    icon => Icon;
    completion_descriptor => CompletionDescriptor;
    completer => Completer;
    completion_context => CompletionContext;
    completion => Completion;
    prompt_trait => Prompt;
    prompt_descriptor => PromptDescriptor;
    prompt_argument_descriptor => PromptArgumentDescriptor;
    prompt_arguments => PromptArguments;
    prompt_future => PromptFuture;
    text_argument => TextArgument;
    prompt_output => prompt_output;
    prompt_output_ty => PromptOutput;
    resource_trait => ResourceItem;
    resource_descriptor => ResourceDescriptor;
    resource_request => ResourceRequest;
    resource_future => ResourceFuture;
    resource_output => resource_output;
    resource_output_ty => ResourceOutput;
    list_function => ListFunction;
    role => Role;
    json_value => serde_json::Value;
    schema_profile => SchemaProfile;
}

/// The same path as a string, for `#[serde(crate = "…")]`-style attributes.
pub(crate) fn as_string(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}
