//! Every key of `#[tool(…)]`: `name`, `title`, `description` and `annotations(…)`.

// Tools here go without descriptions for brevity: the warning that asks for one is checked
// on its own (`ui.rs`).
#![allow(deprecated)]

use mcp_runtime::Tool;
use mcp_runtime::prelude::*;

/// This doc comment is replaced by the `description` key.
#[tool(
    name = "weather.get-v2",
    title = "Current weather",
    description = "The weather in a city right now.",
    annotations(read_only, destructive = false, idempotent, open_world)
)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Delete every file, locally.
#[tool(annotations(destructive, open_world = false))]
fn wipe() {}

/// Undocumented tools and tools without attributes have no description or hints.
#[tool()]
fn bare() {}

#[tool]
fn undocumented() {}

fn main() {
    assert_eq!(get_weather("Oslo".to_owned()), "sunny in Oslo");

    let d = <get_weather as Tool>::DESCRIPTOR;
    assert_eq!(d.name, "weather.get-v2");
    assert_eq!(d.title, Some("Current weather"));
    assert_eq!(d.description, Some("The weather in a city right now."));
    assert_eq!(d.annotations.read_only, Some(true));
    assert_eq!(d.annotations.destructive, Some(false));
    assert_eq!(d.annotations.idempotent, Some(true));
    assert_eq!(d.annotations.open_world, Some(true));

    let d = <wipe as Tool>::DESCRIPTOR;
    assert_eq!(d.name, "wipe");
    assert_eq!(d.title, None);
    assert_eq!(d.description, Some("Delete every file, locally."));
    assert_eq!(d.annotations.read_only, None);
    assert_eq!(d.annotations.destructive, Some(true));
    assert_eq!(d.annotations.open_world, Some(false));

    let d = <bare as Tool>::DESCRIPTOR;
    assert_eq!(
        d.description,
        Some("Undocumented tools and tools without attributes have no description or hints.")
    );
    assert_eq!(<undocumented as Tool>::DESCRIPTOR.description, None);

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(
        server.tool_names(),
        ["bare", "undocumented", "weather.get-v2", "wipe"]
    );
}
