//! A prompt whose attribute is wrong is reported once, at the mistake: listing it in
//! `prompts![…]` or naming it where a `Prompt` is expected, even in a constant, adds no second
//! error.
use mcp_runtime::Prompt;
use mcp_runtime::prelude::*;

#[prompt(version = "2")]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

const fn name_of<T: Prompt>() -> &'static str {
    T::DESCRIPTOR.name
}

const GREETING: &str = name_of::<greeting>();

fn main() {
    let prompts = mcp_runtime::prompts![greeting];
    let _ = (prompts, GREETING);
}
