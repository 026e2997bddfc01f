//! The one table of paths that generated code uses. Every path is absolute and goes through
//! `::mcp_runtime::__private`, so users never depend on serde, schemars, inventory or tokio;
//! `expand` takes every path it writes from here.

use proc_macro2::TokenStream;
use quote::quote;

fn private() -> TokenStream {
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
    state => State;
    state_of => state_of;
    state_missing => state_missing;
    toolbox_trait => Toolbox;
    tool_arguments => ToolArguments;
    field => Field;
    argument_struct => argument_struct;
    argument_struct_parsed_only => argument_struct_parsed_only;
    parameter_deserialize => ParameterDeserialize;
    parameter_schema => ParameterSchema;
    tool_output => ToolOutput;
    tool_output_of => tool_output;
    submit_tool => submit_tool;
    submit => submit;
    argument_object => argument_object;
    arguments_check => ArgumentsCheck;
    is_maybe_an_object => IsMaybeAnObject;
    is_not_an_object => IsNotAnObject;
    send_tool_future => send_tool_future;
    send_check => send_check;
    is_send_future => IsSendFuture;
    is_not_send_future => IsNotSendFuture;
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
    prompt_entry => PromptEntry;
    resource_trait => ResourceItem;
    resource_descriptor => ResourceDescriptor;
    resource_request => ResourceRequest;
    resource_future => ResourceFuture;
    resource_output => resource_output;
    resource_output_ty => ResourceOutput;
    resource_entry => ResourceEntry;
    resource => Resource;
    rpc_error => RpcError;
    list_function => ListFunction;
    role => Role;
    json_value => serde_json::Value;
    json_macro => serde_json::json;
    schema_profile => SchemaProfile;
}

/// The same path as a string, for `#[serde(crate = "…")]`-style attributes.
pub(crate) fn as_string(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}
