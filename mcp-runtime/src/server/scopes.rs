//! Per-item OAuth scopes (`#[tool(scopes("notes:write"))]`, and on prompts and resources):
//! whether a request's caller may use an item, the error when it may not (which the HTTP
//! transport answers with 403 `insufficient_scope`, the specification's step-up), and the
//! items left out of a caller's lists.

use super::Server;
use super::request::Request;
use crate::protocol::{RpcError, code};
use crate::session::SessionVisibility;

impl Server {
    /// The scopes of `scopes` the request's caller lacks. Scopes are enforced when the request
    /// came with a verified token, or over HTTP (where a request without one lacks them all);
    /// a stdio or in-process client, which no token can come from, is the machine's own user.
    fn missing_scopes<'s>(&self, req: &Request<'_>, scopes: &'s [&'s str]) -> Vec<&'s str> {
        if scopes.is_empty() {
            return Vec::new();
        }
        match req.channel.auth.as_deref() {
            Some(caller) => scopes
                .iter()
                .copied()
                .filter(|s| !caller.has_scope(s))
                .collect(),
            None if over_http(req) => scopes.to_vec(),
            None => Vec::new(),
        }
    }

    /// `Err` naming the scopes needed when the caller lacks any of an item's `scopes`.
    pub(super) fn check_scopes(
        &self,
        req: &Request<'_>,
        kind: &str,
        name: &str,
        scopes: &[&str],
    ) -> Result<(), RpcError> {
        let missing = self.missing_scopes(req, scopes);
        if missing.is_empty() {
            return Ok(());
        }
        Err(RpcError::new(
            code::INSUFFICIENT_SCOPE,
            format!(
                "the {kind} `{name}` needs the scope(s) {}, which the caller's token does not grant: ask the authorization server for them",
                missing.join(", ")
            ),
        )
        .with_data(serde_json::json!({ "scopes": scopes, "missing": missing })))
    }

    /// What a request's lists leave out: what the layers hid, the items whose scopes the
    /// caller lacks, and the tools a policy that hides what it denies refuses it.
    pub(super) fn list_hidden(&self, req: &Request<'_>) -> Option<SessionVisibility> {
        let policy = self.policy().filter(|p| p.hides_denied());
        let catalogue = self.catalogue_for(req.session, req.hidden);
        // Most servers require no scopes and hide nothing by policy: nothing to add.
        if !catalogue.scoped && policy.is_none() {
            return None;
        }
        let mut hidden = req.hidden.cloned().unwrap_or_default();
        let mut any = req.hidden.is_some();
        let mut hide = |map: &mut std::collections::BTreeMap<String, bool>, name: &str| {
            map.insert(name.to_owned(), false);
            any = true;
        };
        for tool in &catalogue.tools {
            if !self.missing_scopes(req, tool.descriptor.scopes).is_empty() {
                hide(&mut hidden.tools, tool.descriptor.name);
            }
        }
        for prompt in &catalogue.prompts {
            if !self
                .missing_scopes(req, prompt.descriptor.scopes)
                .is_empty()
            {
                hide(&mut hidden.prompts, prompt.descriptor.name);
            }
        }
        for resource in catalogue.resources.iter().chain(&catalogue.templates) {
            if !self
                .missing_scopes(req, resource.descriptor.scopes)
                .is_empty()
            {
                hide(&mut hidden.resources, resource.descriptor.uri);
            }
        }
        if let Some(policy) = policy {
            let caller = req.channel.auth.as_deref();
            for tool in &catalogue.tools {
                let d = tool.descriptor;
                let call = crate::policy::CallRequest::new(d.name, &d.annotations, caller, None);
                if policy.evaluate(&call).is_err() {
                    hide(&mut hidden.tools, d.name);
                }
            }
        }
        any.then_some(hidden)
    }

    /// Every scope an item of the catalogue requires, sorted (the protected-resource
    /// metadata's `scopes_supported`).
    pub fn item_scopes(&self) -> Vec<&'static str> {
        let catalogue = self.catalogue();
        let mut scopes: Vec<&'static str> = catalogue
            .tools
            .iter()
            .flat_map(|t| t.descriptor.scopes.iter().copied())
            .chain(
                catalogue
                    .prompts
                    .iter()
                    .flat_map(|p| p.descriptor.scopes.iter().copied()),
            )
            .chain(
                catalogue
                    .resources
                    .iter()
                    .chain(&catalogue.templates)
                    .flat_map(|r| r.descriptor.scopes.iter().copied()),
            )
            .collect();
        scopes.sort_unstable();
        scopes.dedup();
        scopes
    }
}

#[cfg(feature = "http")]
fn over_http(req: &Request<'_>) -> bool {
    req.channel.http.is_some()
}

#[cfg(not(feature = "http"))]
fn over_http(_: &Request<'_>) -> bool {
    false
}
