//! Changes at run time: enabling, disabling, adding and removing items, with the
//! `list_changed` notifications they cause (coalesced), and resource-update notifications.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Server;
use crate::protocol::{ListKind, notification_frame};
use crate::registry::{
    CatalogueError, CataloguePrompt, CatalogueResource, CatalogueTool, Items, PromptDescriptor,
    ResourceDescriptor, ToolDescriptor, build_all,
};
use crate::session::Session;

const TOOLS: u8 = ListKind::Tools.bit();
const PROMPTS: u8 = ListKind::Prompts.bit();
const RESOURCES: u8 = ListKind::Resources.bit();

/// How long changes are gathered before one notification per kind goes out.
const COALESCE: Duration = Duration::from_millis(5);

/// Changing what a running server offers. Every change that alters a list sends the matching
/// `notifications/…/list_changed` to every initialized client and to every
/// `subscriptions/listen` stream that asked for it; many changes made together cause one
/// notification per list.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// /// Deletes everything.
/// #[tool(annotations(destructive))]
/// fn wipe() -> &'static str { "wiped" }
///
/// # fn main() {
/// let server = mcp_runtime::server!().build().unwrap();
/// assert!(server.disable_tool("wipe"));
/// assert!(server.tool_names().is_empty());
/// assert!(server.enable_tool("wipe"));
/// assert_eq!(server.tool_names(), ["wipe"]);
/// # }
/// ```
impl Server {
    /// Makes a registered tool available again; returns whether anything changed.
    pub fn enable_tool(&self, name: &str) -> bool {
        self.change(TOOLS, |items| Ok(items.tools.set_enabled(name, true)))
            .unwrap_or(false)
    }

    /// Hides a tool from `tools/list` and refuses calls to it; returns whether anything
    /// changed.
    pub fn disable_tool(&self, name: &str) -> bool {
        self.change(TOOLS, |items| Ok(items.tools.set_enabled(name, false)))
            .unwrap_or(false)
    }

    /// Adds tools (see [`tools!`](crate::tools!)).
    pub fn add_tools(
        &self,
        tools: impl IntoIterator<Item = &'static ToolDescriptor>,
    ) -> Result<(), CatalogueError> {
        let built = build_all(tools, CatalogueTool::build)?;
        self.change(TOOLS, |items| items.tools.add(built).map(|()| true))
            .map(drop)
    }

    /// Adds a tool made at run time (feature `dynamic`), checked against the server's own
    /// schema profile; clients hear `notifications/tools/list_changed`. A tool of the same
    /// name is refused: remove it first.
    #[cfg(feature = "dynamic")]
    pub fn add_dynamic_tool(&self, tool: crate::DynamicTool) -> Result<(), CatalogueError> {
        let profiles = self.schema_profiles();
        let built = tool.build(profiles.get(profiles.base_slot()))?;
        self.change(TOOLS, |items| items.tools.add(vec![built]).map(|()| true))
            .map(drop)
    }

    /// Adds a prompt made at run time (feature `dynamic`); clients hear
    /// `notifications/prompts/list_changed`.
    #[cfg(feature = "dynamic")]
    pub fn add_dynamic_prompt(&self, prompt: crate::DynamicPrompt) -> Result<(), CatalogueError> {
        let built = prompt.build()?;
        self.change(PROMPTS, |items| {
            items.prompts.add(vec![built]).map(|()| true)
        })
        .map(drop)
    }

    /// Adds a resource or template made at run time (feature `dynamic`); clients hear
    /// `notifications/resources/list_changed`.
    #[cfg(feature = "dynamic")]
    pub fn add_dynamic_resource(
        &self,
        resource: crate::DynamicResource,
    ) -> Result<(), CatalogueError> {
        let built = resource.build()?;
        self.change(RESOURCES, |items| {
            items.resources.add(vec![built]).map(|()| true)
        })
        .map(drop)
    }

    /// Removes a tool; returns whether it was there.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.change(TOOLS, |items| Ok(items.tools.remove(name)))
            .unwrap_or(false)
    }

    /// Makes a registered prompt available again; returns whether anything changed.
    pub fn enable_prompt(&self, name: &str) -> bool {
        self.change(PROMPTS, |items| Ok(items.prompts.set_enabled(name, true)))
            .unwrap_or(false)
    }

    /// Hides a prompt; returns whether anything changed.
    pub fn disable_prompt(&self, name: &str) -> bool {
        self.change(PROMPTS, |items| Ok(items.prompts.set_enabled(name, false)))
            .unwrap_or(false)
    }

    /// Adds prompts (see [`prompts!`](crate::prompts!)).
    pub fn add_prompts(
        &self,
        prompts: impl IntoIterator<Item = &'static PromptDescriptor>,
    ) -> Result<(), CatalogueError> {
        let built = build_all(prompts, CataloguePrompt::build)?;
        self.change(PROMPTS, |items| items.prompts.add(built).map(|()| true))
            .map(drop)
    }

    /// Removes a prompt; returns whether it was there.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change(PROMPTS, |items| Ok(items.prompts.remove(name)))
            .unwrap_or(false)
    }

    /// Makes a registered resource or template (named by the URI it was declared with)
    /// available again; returns whether anything changed.
    pub fn enable_resource(&self, uri: &str) -> bool {
        self.change(RESOURCES, |items| {
            Ok(items.resources.set_enabled(uri, true))
        })
        .unwrap_or(false)
    }

    /// Hides a resource or template; returns whether anything changed.
    pub fn disable_resource(&self, uri: &str) -> bool {
        self.change(RESOURCES, |items| {
            Ok(items.resources.set_enabled(uri, false))
        })
        .unwrap_or(false)
    }

    /// Adds resources or templates (see [`resources!`](crate::resources!)).
    pub fn add_resources(
        &self,
        resources: impl IntoIterator<Item = &'static ResourceDescriptor>,
    ) -> Result<(), CatalogueError> {
        let built = build_all(resources, CatalogueResource::build)?;
        self.change(RESOURCES, |items| items.resources.add(built).map(|()| true))
            .map(drop)
    }

    /// Removes a resource or template; returns whether it was there.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change(RESOURCES, |items| Ok(items.resources.remove(uri)))
            .unwrap_or(false)
    }

    /// Tells every client subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`): handshake-era sessions that sent
    /// `resources/subscribe`, and `subscriptions/listen` streams naming it. Callable from any
    /// thread or task.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.deliver_resource_updated(uri);
        self.publish(crate::cluster::ClusterEvent::ResourceUpdated {
            uri: uri.to_owned(),
        });
    }

    /// Tells this process's clients subscribed to `uri` that it changed.
    pub(crate) fn deliver_resource_updated(&self, uri: &str) {
        let frame = notification_frame(
            "notifications/resources/updated",
            &serde_json::json!({ "uri": uri }),
        );
        for session in self.initialized_sessions() {
            if session.is_subscribed(uri) {
                session.notifications().notify(frame.clone());
            }
        }
        self.inner.listeners.resource_updated(uri);
    }

    /// Applies a change to the items; when it changed something, publishes the new catalogue
    /// and schedules the `list_changed` notification of `kind`.
    fn change(
        &self,
        kind: u8,
        apply: impl FnOnce(&mut Items) -> Result<bool, CatalogueError>,
    ) -> Result<bool, CatalogueError> {
        let mut items = self.inner.items.lock().unwrap_or_else(|p| p.into_inner());
        if !apply(&mut items)? {
            return Ok(false);
        }
        let snapshot = Arc::new(items.snapshot());
        *self
            .inner
            .catalogue
            .write()
            .unwrap_or_else(|p| p.into_inner()) = snapshot;
        drop(items);
        self.schedule_list_changed(kind);
        Ok(true)
    }

    fn schedule_list_changed(&self, kind: u8) {
        if self.inner.pending_changes.fetch_or(kind, Ordering::AcqRel) != 0 {
            return; // a flush is already scheduled and will include this kind
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let server = self.clone();
                runtime.spawn(async move {
                    tokio::time::sleep(COALESCE).await;
                    server.flush_list_changed();
                });
            }
            Err(_) => self.flush_list_changed(),
        }
    }

    fn flush_list_changed(&self) {
        let kinds = self.inner.pending_changes.swap(0, Ordering::AcqRel);
        self.deliver_list_changed(kinds);
        self.publish(crate::cluster::ClusterEvent::ListChanged { kinds });
    }

    /// Tells this process's clients that lists changed (here or on another replica); a
    /// client is told once until it fetches the list again.
    pub(crate) fn deliver_list_changed(&self, kinds: u8) {
        let sessions: Vec<_> = self
            .initialized_sessions()
            .into_iter()
            .map(|session| {
                let news = session.lists_changed(kinds);
                (session, news)
            })
            .collect();
        for kind in ListKind::ALL {
            if kinds & kind.bit() != 0 {
                let frame = notification_frame(kind.notification(), &serde_json::json!({}));
                for (session, news) in &sessions {
                    if news & kind.bit() != 0 {
                        session.notifications().notify(frame.clone());
                    }
                }
                self.inner.listeners.list_changed(kind);
            }
        }
    }

    /// The client of `session` fetched the lists of `kinds` (or can no longer get the
    /// notifications queued for them): the next change is news again, here or — for a copy
    /// of a session another replica opened — on the replica that announces its changes.
    /// That one is told of every such fetch: whether it has announced a change this copy has
    /// not heard of yet cannot be known here.
    pub(crate) fn lists_fetched(&self, session: &Session, kinds: u8) {
        // A copy tells its client of changes to what the session sees that are made here.
        session.lists_fetched(kinds);
        if !session.announced_here()
            && self.in_cluster()
            && let Some(key) = session.key()
        {
            self.publish(crate::cluster::ClusterEvent::ListsFetched {
                session: key.to_owned(),
                kinds,
            });
        }
    }
}
