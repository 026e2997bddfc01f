//! Resources the scenarios read and subscribe to: text, binary, a template, and one that
//! changes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{serde, tokio};

use crate::media::RED_PIXEL_PNG;

/// A static text resource for testing.
#[resource(
    "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing.
#[resource(
    "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime = "image/png"
)]
fn static_binary() -> Vec<u8> {
    RED_PIXEL_PNG.to_vec()
}

/// What `test://template/{id}/data` holds, in the field order the suite documents.
#[derive(serde::Serialize)]
#[serde(crate = "mcp_runtime::serde", rename_all = "camelCase")]
struct TemplateData {
    id: String,
    template_test: bool,
    data: String,
}

/// A resource template with parameter substitution.
#[resource(
    "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime = "application/json"
)]
fn template_data(
    /// Any identifier; it is echoed in the data.
    id: String,
) -> Json<TemplateData> {
    Json(TemplateData {
        data: format!("Data for ID: {id}"),
        id,
        template_test: true,
    })
}

/// The URI of the resource that changes.
const WATCHED: &str = "test://watched-resource";

/// How many times the watched resource has changed.
static REVISION: AtomicU64 = AtomicU64::new(0);

/// How often the watched resource changes.
const WATCHED_PERIOD: Duration = Duration::from_secs(3);

/// A resource that changes every 3 seconds; subscribe to hear about it.
#[resource(
    "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime = "text/plain"
)]
fn watched_resource() -> String {
    format!(
        "Watched resource content (revision {})",
        REVISION.load(Ordering::Relaxed)
    )
}

/// Changes the watched resource every few seconds, telling the clients that subscribed to it.
pub fn spawn_watched_resource_changes(server: &Server) {
    let server = server.clone();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(WATCHED_PERIOD);
        ticks.tick().await; // the first tick is immediate
        loop {
            ticks.tick().await;
            REVISION.fetch_add(1, Ordering::Relaxed);
            server.notify_resource_updated(WATCHED);
        }
    });
}
