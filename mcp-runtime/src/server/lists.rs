//! The list methods — `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` — with cursor pagination over pre-serialised entries.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::value::RawValue;

use super::Server;
use super::request::panic_message;
use super::request::{Request, Routed, parse_params};
use crate::protocol::messages::ListParams;
use crate::protocol::{CacheHint, ProtocolVersion, RpcError};
use crate::registry::Catalogue;
use crate::resource::Resource;

impl Server {
    /// `tools/list`: in a session, in the schema profile of its client, chosen once from its
    /// `clientInfo.name` (see `ServerBuilder::per_client_schema_profiles`); a stateless
    /// request gets the server's own profile.
    pub(super) fn list_tools(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let slot = if req.is_stateless() {
            self.schema_profiles().base_slot()
        } else {
            self.schema_slot(req.session)
        };
        let hidden = self.list_hidden(req);
        let hidden = hidden.as_ref().or(req.hidden);
        self.list_tools_in(
            &self.catalogue_for(req.session, hidden),
            slot,
            req.version,
            req.params,
        )
    }

    fn list_tools_in(
        &self,
        catalogue: &Catalogue,
        slot: usize,
        version: ProtocolVersion,
        params: Option<&RawValue>,
    ) -> Result<String, RpcError> {
        let profiles = self.schema_profiles();
        let entries: Vec<&RawValue> = catalogue
            .tools
            .iter()
            .map(|t| t.wire(version, slot, profiles))
            .collect();
        self.page("tools", &entries, params)
    }

    /// `prompts/list`.
    pub(super) fn list_prompts(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let hidden = self.list_hidden(req);
        let catalogue = self.catalogue_for(req.session, hidden.as_ref().or(req.hidden));
        let entries: Vec<&RawValue> = catalogue
            .prompts
            .iter()
            .map(|p| p.wire(req.version))
            .collect();
        self.page("prompts", &entries, req.params)
    }

    /// `resources/templates/list`.
    pub(super) fn list_resource_templates(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let hidden = self.list_hidden(req);
        let catalogue = self.catalogue_for(req.session, hidden.as_ref().or(req.hidden));
        let entries: Vec<&RawValue> = catalogue
            .templates
            .iter()
            .map(|t| t.wire(req.version))
            .collect();
        self.page("resourceTemplates", &entries, req.params)
    }

    /// Static resources, then the concrete resources each template's `list` function names.
    /// Those functions are user code, so the listing runs like a handler when there are any.
    pub(super) fn list_resources(
        &self,
        req: &Request<'_>,
        cache: Option<CacheHint>,
    ) -> Result<Routed, RpcError> {
        let p: ListParams = req.params()?;
        let version = req.version;
        let hidden = self.list_hidden(req);
        let catalogue = self.catalogue_for(req.session, hidden.as_ref().or(req.hidden));
        let listers: Vec<_> = catalogue
            .templates
            .iter()
            .filter_map(|t| t.descriptor.list.map(|list| (t.descriptor.uri, list)))
            .collect();
        // The skills' `SKILL.md` files come after the server's own resources.
        let skills = self.skill_resources(req);
        if listers.is_empty() {
            let entries: Vec<&RawValue> = catalogue
                .resources
                .iter()
                .map(|r| r.wire(version))
                .chain(skills.iter().map(AsRef::as_ref))
                .collect();
            let result = page_result(
                "resources",
                &entries,
                self.inner.settings.page_size,
                p.cursor.as_deref(),
            );
            return Ok(req.answer(result, cache));
        }
        let server = self.clone();
        Ok(req.answer_later(
            async move {
                let mut owned: Vec<Box<RawValue>> = Vec::new();
                for (uri, list) in listers {
                    let listed = catch_unwind(AssertUnwindSafe(list)).map_err(|panic| {
                        tracing::error!(
                            template = uri,
                            panic = panic_message(&*panic),
                            "resource list panicked"
                        );
                        RpcError::internal(format!("listing the resources of `{uri}` failed"))
                    })??;
                    owned.extend(listed.iter().map(|r| listed_entry(r, version)));
                }
                let entries: Vec<&RawValue> = catalogue
                    .resources
                    .iter()
                    .map(|r| r.wire(version))
                    .chain(skills.iter().map(AsRef::as_ref))
                    .chain(owned.iter().map(AsRef::as_ref))
                    .collect();
                page_result(
                    "resources",
                    &entries,
                    server.inner.settings.page_size,
                    p.cursor.as_deref(),
                )
            },
            cache,
        ))
    }

    fn page(
        &self,
        key: &str,
        entries: &[&RawValue],
        params: Option<&RawValue>,
    ) -> Result<String, RpcError> {
        let p: ListParams = parse_params(params)?;
        page_result(
            key,
            entries,
            self.inner.settings.page_size,
            p.cursor.as_deref(),
        )
    }
}

fn listed_entry(resource: &Resource, version: ProtocolVersion) -> Box<RawValue> {
    let mut value = serde_json::to_value(resource).unwrap_or_default();
    if !version.has_titles()
        && let Some(obj) = value.as_object_mut()
    {
        obj.remove("title");
        if let Some(annotations) = obj.get_mut("annotations").and_then(|a| a.as_object_mut()) {
            annotations.remove("lastModified");
        }
    }
    serde_json::value::to_raw_value(&value).expect("a JSON value always serialises")
}

/// One page of a list result: `{"<key>": [...], "nextCursor": "…"}`.
pub(super) fn page_result(
    key: &str,
    entries: &[&RawValue],
    page_size: usize,
    cursor: Option<&str>,
) -> Result<String, RpcError> {
    let (start, end) = page(entries.len(), page_size, cursor)?;
    let mut result = String::with_capacity(
        64 + entries[start..end]
            .iter()
            .map(|e| e.get().len() + 1)
            .sum::<usize>(),
    );
    result.push_str("{\"");
    result.push_str(key);
    result.push_str("\":[");
    for (i, entry) in entries[start..end].iter().enumerate() {
        if i > 0 {
            result.push(',');
        }
        result.push_str(entry.get());
    }
    result.push(']');
    if end < entries.len() {
        result.push_str(",\"nextCursor\":\"");
        result.push_str(&encode_cursor(end));
        result.push('"');
    }
    result.push('}');
    Ok(result)
}

/// Cursors are opaque to clients; this one is the index of the page's first item.
fn encode_cursor(index: usize) -> String {
    format!("i{index}")
}

/// The bounds of the page a cursor points at.
fn page(len: usize, page_size: usize, cursor: Option<&str>) -> Result<(usize, usize), RpcError> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .strip_prefix('i')
            .and_then(|n| n.parse::<usize>().ok())
            // Only a cursor this server gave out: not `i+1` or `i01` for `i1`.
            .filter(|&n| n > 0 && n < len && encode_cursor(n) == c)
            .ok_or_else(|| RpcError::invalid_params(format!("invalid cursor `{c}`")))?,
    };
    // A page size may be as large as `usize` holds (one page for every list).
    Ok((start, start.saturating_add(page_size).min(len)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::CallToolResult;
    use crate::protocol::{Implementation, ToolAnnotations};
    use crate::registry::{SourceLocation, ToolDescriptor};
    use crate::session::{Negotiated, Outbound, Session};
    use serde_json::{Value, json};

    /// A tool whose argument is recursive, so its default schema keeps a `$ref`.
    static WALK: ToolDescriptor = ToolDescriptor {
        name: "walk",
        title: None,
        description: None,
        annotations: ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        icons: &[],
        meta: None,
        input_schema: || {
            json!({
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/Tree"}},
                "required": ["tree"],
                "$defs": {"Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}
            })
        },
        output_schema: || None,
        task: crate::tasks::TaskSupport::Never,
        timeout: None,
        schema_profile: None,
        call: |_, _| Box::pin(async { CallToolResult::error("unused") }),
        states: &[],
        scopes: &[],
        location: SourceLocation {
            file: file!(),
            line: line!(),
        },
    };

    fn session_of(client: &str) -> Session {
        let session = Session::new(Outbound::new().0);
        session.initialize(Negotiated {
            version: ProtocolVersion::LATEST_HANDSHAKE,
            client_info: Implementation::new(client, "1.0"),
            client_capabilities: Default::default(),
        });
        session
    }

    fn listed_schema(server: &Server, session: &Session) -> Value {
        let text = server
            .list_tools_in(
                &server.catalogue(),
                server.schema_slot(session),
                ProtocolVersion::LATEST_HANDSHAKE,
                None,
            )
            .unwrap();
        let mut list: Value = serde_json::from_str(&text).unwrap();
        list["tools"][0]["inputSchema"].take()
    }

    #[test]
    fn each_session_lists_tools_in_the_profile_of_its_client() {
        let server = Server::builder("t", "1")
            .auto_register(false)
            .tools([&WALK])
            .build()
            .unwrap();
        let claude = listed_schema(&server, &session_of("claude-ai"));
        assert!(!claude.to_string().contains("$ref"), "{claude}");
        let other = listed_schema(&server, &session_of("some-client"));
        assert!(other.to_string().contains("$ref"), "{other}");
        let off = Server::builder("t", "1")
            .auto_register(false)
            .per_client_schema_profiles(false)
            .tools([&WALK])
            .build()
            .unwrap();
        assert!(
            listed_schema(&off, &session_of("claude-ai"))
                .to_string()
                .contains("$ref")
        );
    }

    #[test]
    fn pages_cover_the_list_without_overlap() {
        assert_eq!(page(5, 2, None).unwrap(), (0, 2));
        assert_eq!(page(5, 2, Some(&encode_cursor(2))).unwrap(), (2, 4));
        assert_eq!(page(5, 2, Some(&encode_cursor(4))).unwrap(), (4, 5));
    }

    #[test]
    fn foreign_cursors_are_invalid_params() {
        for c in ["", "x", "i0", "i5", "i-1", "5", "i+1", "i01", "i 1"] {
            assert_eq!(page(5, 2, Some(c)).unwrap_err().code, -32602, "{c}");
        }
    }

    #[test]
    fn a_page_as_large_as_usize_holds_ends_with_the_list() {
        assert_eq!(page(5, usize::MAX, None).unwrap(), (0, 5));
        assert_eq!(
            page(5, usize::MAX, Some(&encode_cursor(1))).unwrap(),
            (1, 5)
        );
    }
}
