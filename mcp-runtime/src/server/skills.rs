//! The skills extension's methods (`skills/list`, `skills/get`, `resources/directory/read`)
//! and its files as `skill://` resources (see [`crate::Skills`]).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Server;
use super::lists::page_result;
use super::request::Request;
use crate::protocol::RpcError;
use crate::protocol::messages::ListParams;
use crate::skills::Found;

#[derive(Deserialize)]
struct UriParams {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

impl Server {
    /// Whether the request may see the skill `name`: neither its session's visibility nor
    /// the layers hid its `SKILL.md` (by `disable_resource` / `hide_resource` of
    /// `skill://<name>/SKILL.md`).
    fn skill_visible(&self, req: &Request<'_>, name: &str) -> bool {
        let manifest = format!("skill://{name}/SKILL.md");
        let hidden_by = |visibility: &crate::session::SessionVisibility| {
            visibility.resources.get(&manifest) == Some(&false)
        };
        if req.hidden.is_some_and(hidden_by) {
            return false;
        }
        !(req.session.is_session() && hidden_by(req.session.data().visibility()))
    }

    /// `skills/list`: every skill's entry, paginated like the other lists (an entry is never
    /// split across pages).
    pub(super) fn list_skills(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: ListParams = req.params()?;
        let entries: Vec<&RawValue> = self
            .inner
            .skills
            .skills
            .iter()
            .filter(|s| self.skill_visible(req, &s.name))
            .map(|s| &*s.entry_raw)
            .collect();
        page_result(
            "skills",
            &entries,
            self.inner.settings.page_size,
            p.cursor.as_deref(),
        )
    }

    /// `skills/get`: one skill's entry, by the URI of its `SKILL.md`.
    pub(super) fn get_skill(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: UriParams = req.params()?;
        let skill = self
            .inner
            .skills
            .by_manifest(&p.uri)
            .filter(|s| self.skill_visible(req, &s.name))
            .ok_or_else(|| {
                RpcError::invalid_params(format!("no skill is served at `{}`", p.uri))
            })?;
        Ok(serde_json::json!({ "skill": skill.entry }).to_string())
    }

    /// `resources/directory/read`: the direct children of a skill's folder (or of a folder
    /// within it), folders marked `inode/directory`; a URI that is no folder is `-32602`.
    pub(super) fn read_directory(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: UriParams = req.params()?;
        let found = self
            .inner
            .skills
            .find(&p.uri)
            .filter(|_| self.skill_visible(req, skill_name(&p.uri)));
        match found {
            Some(Found::Directory(children)) => {
                let children: Vec<Box<RawValue>> = children
                    .iter()
                    .map(|c| serde_json::value::to_raw_value(c).expect("JSON values serialise"))
                    .collect();
                let children: Vec<&RawValue> = children.iter().map(AsRef::as_ref).collect();
                page_result(
                    "resources",
                    &children,
                    self.inner.settings.page_size,
                    p.cursor.as_deref(),
                )
            }
            Some(Found::File { .. }) => Err(RpcError::invalid_params(format!(
                "`{}` is a file, not a directory: read it with resources/read",
                p.uri
            ))),
            None => Err(RpcError::invalid_params(format!(
                "no directory is served at `{}`",
                p.uri
            ))),
        }
    }

    /// The contents of a skill's file, when `uri` names one the request may see.
    pub(super) fn read_skill_file(&self, req: &Request<'_>, uri: &str) -> Option<String> {
        let Some(Found::File { path, content }) = self.inner.skills.find(uri) else {
            return None;
        };
        if !self.skill_visible(req, skill_name(uri)) {
            return None;
        }
        let mime = crate::skills::mime_type(path, content);
        let contents = match std::str::from_utf8(content) {
            Ok(text) if mime != "application/octet-stream" => {
                serde_json::json!({ "uri": uri, "mimeType": mime, "text": text })
            }
            _ => {
                use base64::Engine as _;
                let blob = base64::engine::general_purpose::STANDARD.encode(content);
                serde_json::json!({ "uri": uri, "mimeType": mime, "blob": blob })
            }
        };
        Some(serde_json::json!({ "contents": [contents] }).to_string())
    }

    /// The `resources/list` entries of the `SKILL.md` files the request may see.
    pub(super) fn skill_resources(&self, req: &Request<'_>) -> Vec<Box<RawValue>> {
        self.inner
            .skills
            .skills
            .iter()
            .filter(|s| self.skill_visible(req, &s.name))
            .map(|s| s.manifest_raw.clone())
            .collect()
    }
}

/// The skill a `skill://` URI is in (its authority).
fn skill_name(uri: &str) -> &str {
    let rest = uri.strip_prefix("skill://").unwrap_or(uri);
    rest.split('/').next().unwrap_or(rest)
}
