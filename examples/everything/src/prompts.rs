//! Prompts the scenarios get, and the completion of `test_prompt_with_arguments`.

use mcp_runtime::prelude::*;

use crate::media::RED_PIXEL_PNG;

/// A simple prompt without arguments.
#[prompt(title = "Simple Test Prompt")]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with required arguments.
#[prompt(
    title = "Prompt With Arguments",
    complete(arg1 = complete_test_value, arg2 = complete_test_value)
)]
fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// What either argument of `test_prompt_with_arguments` completes to: the values the suite
/// and its documentation use.
const TEST_VALUES: &[&str] = &[
    "hello",
    "world",
    "paris",
    "park",
    "party",
    "testValue1",
    "testValue2",
];

/// The test values that start with what was typed so far.
fn complete_test_value(prefix: &str) -> Vec<String> {
    TEST_VALUES
        .iter()
        .filter(|value| value.starts_with(prefix))
        .map(|value| (*value).to_owned())
        .collect()
}

/// A prompt that includes an embedded resource.
#[prompt(title = "Prompt With Embedded Resource")]
// The argument is named `resourceUri` on the wire, and prompt arguments take their
// parameter's name.
#[allow(non_snake_case)]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    resourceUri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            EmbeddedResource::text(
                resourceUri,
                "text/plain",
                "Embedded resource content for testing.",
            ),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt that includes image content.
#[prompt(title = "Prompt With Image")]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, Image::png(RED_PIXEL_PNG)),
        PromptMessage::user("Please analyze the image above."),
    ]
}
