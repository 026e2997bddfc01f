//! What handlers keep in a session: a store of values (JSON, so that replicas sharing sessions
//! share it too) and the session's own visibility of tools, prompts and resources. Lives and
//! dies with the session; travels in its shared record (`cluster::SessionRecord`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::ListKind;

/// A session's own view of the catalogue: items it hides (`false`) or shows although the
/// server disabled them (`true`), by name (resources by the URI they were declared with).
/// Items without an entry follow the server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionVisibility {
    /// Tools, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, bool>,
    /// Prompts, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompts: BTreeMap<String, bool>,
    /// Resources and templates, by the URI they were declared with.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, bool>,
}

impl SessionVisibility {
    /// Whether the session follows the server in everything.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prompts.is_empty() && self.resources.is_empty()
    }

    /// Takes `other`'s overrides over these.
    pub(crate) fn overlay(&mut self, other: &SessionVisibility) {
        for kind in ListKind::ALL {
            let mine = self.of_mut(kind);
            for (name, visible) in other.of(kind) {
                mine.insert(name.clone(), *visible);
            }
        }
    }

    pub(crate) fn of(&self, kind: ListKind) -> &BTreeMap<String, bool> {
        match kind {
            ListKind::Tools => &self.tools,
            ListKind::Prompts => &self.prompts,
            ListKind::Resources => &self.resources,
        }
    }

    fn of_mut(&mut self, kind: ListKind) -> &mut BTreeMap<String, bool> {
        match kind {
            ListKind::Tools => &mut self.tools,
            ListKind::Prompts => &mut self.prompts,
            ListKind::Resources => &mut self.resources,
        }
    }

    /// The kinds whose overrides differ between two visibilities, as bits.
    fn changed(&self, other: &SessionVisibility) -> u8 {
        ListKind::ALL
            .into_iter()
            .filter(|kind| self.of(*kind) != other.of(*kind))
            .fold(0, |bits, kind| bits | kind.bit())
    }
}

/// The store and visibility of one session, with what the shared record last said of them.
#[derive(Default)]
pub(crate) struct Kept {
    values: Map<String, Value>,
    visibility: SessionVisibility,
    /// Counts changes of the visibility, so a view of the catalogue built for it is known
    /// to be current.
    visibility_version: u64,
    /// The store and visibility as the shared record last had them: a record that still says
    /// the same holds no news from another replica, so what this replica changed since (and
    /// has not shared yet) is kept.
    seen: Option<(Map<String, Value>, SessionVisibility)>,
}

impl Kept {
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    pub(crate) fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        self.values.insert(key, value)
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        self.values.remove(key)
    }

    pub(crate) fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    pub(crate) fn visibility(&self) -> &SessionVisibility {
        &self.visibility
    }

    pub(crate) fn visibility_version(&self) -> u64 {
        self.visibility_version
    }

    /// Shows or hides one item for this session; `None` follows the server again. Returns
    /// whether anything changed.
    pub(crate) fn set_visible(
        &mut self,
        kind: ListKind,
        name: &str,
        visible: Option<bool>,
    ) -> bool {
        let overrides = self.visibility.of_mut(kind);
        let changed = match visible {
            Some(visible) => overrides.insert(name.to_owned(), visible) != Some(visible),
            None => overrides.remove(name).is_some(),
        };
        if changed {
            self.visibility_version += 1;
        }
        changed
    }

    /// Takes the shared record's store and visibility, when they are news (another replica
    /// changed them); returns the kinds of list whose visibility changed.
    pub(crate) fn adopt(
        &mut self,
        values: &Map<String, Value>,
        visibility: &SessionVisibility,
    ) -> u8 {
        if self
            .seen
            .as_ref()
            .is_some_and(|(v, vis)| v == values && vis == visibility)
        {
            return 0;
        }
        self.seen = Some((values.clone(), visibility.clone()));
        self.values = values.clone();
        let changed = self.visibility.changed(visibility);
        if changed != 0 {
            self.visibility = visibility.clone();
            self.visibility_version += 1;
        }
        changed
    }

    /// What this replica wrote to the shared record (which later changes may already have
    /// moved on from).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn shared(&mut self, values: &Map<String, Value>, visibility: &SessionVisibility) {
        self.seen = Some((values.clone(), visibility.clone()));
    }
}
