//! The session a handler is called in, as [`Context::session`] gives it: a typed store that
//! lives as long as the session, and the session's own visibility of the catalogue.

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Context;
use crate::protocol::{ListKind, notification_frame};
use crate::session::Session;

/// The session a request belongs to: what handlers keep in it, and what it sees of the
/// catalogue. From [`Context::session`].
///
/// **The store** holds values by type (`get::<Pins>()`) or by key (`get_key::<u32>("visits")`).
/// Values are kept as JSON (`Serialize + DeserializeOwned`), so that when replicas share
/// sessions (`mcp_runtime::redis`) they share the store too: what one request puts in is
/// there for the next, whichever replica serves it. The store is dropped with the session
/// (its `DELETE`, its idle timeout, the end of a stdio connection).
///
/// **Visibility**: [`disable_tool`](Self::disable_tool) hides a tool from this session alone
/// (its `tools/list`, and calls to it are refused as for an unknown tool);
/// [`enable_tool`](Self::enable_tool) shows it again, even one the server disabled for
/// everyone. Each change sends `notifications/tools/list_changed` to this session only. The
/// same goes for prompts and resources.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::serde::{Deserialize, Serialize};
///
/// #[derive(Default, Serialize, Deserialize)]
/// #[serde(crate = "mcp_runtime::serde")]
/// struct Visits(u32);
///
/// /// Count this session's visits.
/// #[tool]
/// fn visit(ctx: Context) -> Result<u32, ToolError> {
///     let session = ctx.session()?;
///     Ok(session.update(|visits: &mut Visits| {
///         visits.0 += 1;
///         visits.0
///     })?)
/// }
///
/// # #[mcp_runtime::main]
/// # async fn main() {
/// # let server = mcp_runtime::server!().auto_register(false).tools(mcp_runtime::tools![visit]).build().unwrap();
/// let client = server.connect_memory();
/// client.initialize().await.unwrap();
/// for expected in ["1", "2"] {
///     let result = client.call_tool("visit", serde_json::json!({})).await.unwrap();
///     assert_eq!(result.content, vec![Content::text(expected)]);
/// }
/// # }
/// ```
#[derive(Clone)]
pub struct SessionData {
    session: Arc<Session>,
}

/// Why the session store could not do what it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// The request has no session: the client speaks the stateless revision (2026-07-28),
    /// or the HTTP endpoint is stateless.
    NoSession,
    /// A value could not be converted to or from JSON.
    Value {
        /// The value's key (its type's name, for values kept by type).
        key: String,
        /// What serde said.
        problem: String,
    },
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::NoSession => f.write_str(
                "this request has no session (the client speaks the stateless revision of MCP, or the endpoint is stateless), so nothing is kept between requests: keep such state in the server, keyed by the caller's identity",
            ),
            SessionError::Value { key, problem } => {
                write!(f, "the session value `{key}` could not be read or written: {problem}")
            }
        }
    }
}

impl std::error::Error for SessionError {}

impl Context {
    /// The session this request belongs to: its store and its visibility. Over stdio the
    /// connection is the one session; over Streamable HTTP it is the `Mcp-Session-Id`'s.
    /// A request of the stateless revision (2026-07-28), or one to a stateless HTTP
    /// endpoint, has none: [`SessionError::NoSession`].
    pub fn session(&self) -> Result<SessionData, SessionError> {
        let session = &self.inner.session;
        if !session.is_session() {
            return Err(SessionError::NoSession);
        }
        Ok(SessionData {
            session: Arc::clone(session),
        })
    }

    /// The session's id (its `Mcp-Session-Id`) over Streamable HTTP; `None` over stdio,
    /// whose connection is the one session, and for requests without a session.
    pub fn session_id(&self) -> Option<&str> {
        let session = &self.inner.session;
        session.is_session().then(|| session.key()).flatten()
    }
}

/// The key a value kept by type is stored under.
fn type_key<T: 'static>() -> &'static str {
    std::any::type_name::<T>()
}

impl SessionData {
    /// The session's id over Streamable HTTP (see [`Context::session_id`]).
    pub fn id(&self) -> Option<&str> {
        self.session.key()
    }

    /// The value of type `T`, if one was inserted.
    pub fn get<T: DeserializeOwned + 'static>(&self) -> Result<Option<T>, SessionError> {
        self.get_key(type_key::<T>())
    }

    /// Keeps a value of type `T`, replacing the one there was.
    pub fn insert<T: Serialize + 'static>(&self, value: T) -> Result<(), SessionError> {
        self.insert_key(type_key::<T>(), value)
    }

    /// Takes the value of type `T` out of the session.
    pub fn remove<T: DeserializeOwned + 'static>(&self) -> Result<Option<T>, SessionError> {
        self.remove_key(type_key::<T>())
    }

    /// Changes the value of type `T` (its `Default` when there is none) in one step, so two
    /// calls of the same session at once in one process lose neither change; returns what
    /// `change` returns. `change` runs with the session's store locked: it must not use the
    /// session itself. Between replicas sharing sessions, the last write of the record wins.
    pub fn update<T, R>(&self, change: impl FnOnce(&mut T) -> R) -> Result<R, SessionError>
    where
        T: Serialize + DeserializeOwned + Default + 'static,
    {
        self.update_key(type_key::<T>(), change)
    }

    /// The value under `key`, read as a `T`.
    pub fn get_key<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, SessionError> {
        let data = self.session.data();
        data.get(key)
            .map(|value| T::deserialize(value).map_err(|e| value_error(key, e)))
            .transpose()
    }

    /// Keeps `value` under `key`, replacing what was there.
    pub fn insert_key<T: Serialize>(&self, key: &str, value: T) -> Result<(), SessionError> {
        let value = serde_json::to_value(value).map_err(|e| value_error(key, e))?;
        self.session.data().insert(key.to_owned(), value);
        Ok(())
    }

    /// Takes the value under `key` out of the session.
    pub fn remove_key<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, SessionError> {
        let removed = self.session.data().remove(key);
        removed
            .map(|value| serde_json::from_value(value).map_err(|e| value_error(key, e)))
            .transpose()
    }

    /// Changes the value under `key` (`T::default()` when there is none) in one step.
    pub fn update_key<T, R>(
        &self,
        key: &str,
        change: impl FnOnce(&mut T) -> R,
    ) -> Result<R, SessionError>
    where
        T: Serialize + DeserializeOwned + Default,
    {
        let mut data = self.session.data();
        let mut value = match data.get(key) {
            Some(value) => T::deserialize(value).map_err(|e| value_error(key, e))?,
            None => T::default(),
        };
        let answer = change(&mut value);
        let value = serde_json::to_value(value).map_err(|e| value_error(key, e))?;
        data.insert(key.to_owned(), value);
        Ok(answer)
    }

    /// The keys of the values kept, in order.
    pub fn keys(&self) -> Vec<String> {
        self.session.data().values().keys().cloned().collect()
    }

    /// Shows a tool to this session, even one the server disabled; returns whether that
    /// changed anything.
    pub fn enable_tool(&self, name: &str) -> bool {
        self.set_visible(ListKind::Tools, name, Some(true))
    }

    /// Hides a tool from this session: it leaves `tools/list`, and calls to it are refused
    /// as for an unknown tool. Returns whether that changed anything.
    pub fn disable_tool(&self, name: &str) -> bool {
        self.set_visible(ListKind::Tools, name, Some(false))
    }

    /// Shows a prompt to this session, even one the server disabled.
    pub fn enable_prompt(&self, name: &str) -> bool {
        self.set_visible(ListKind::Prompts, name, Some(true))
    }

    /// Hides a prompt from this session.
    pub fn disable_prompt(&self, name: &str) -> bool {
        self.set_visible(ListKind::Prompts, name, Some(false))
    }

    /// Shows a resource or template (by the URI it was declared with) to this session, even
    /// one the server disabled.
    pub fn enable_resource(&self, uri: &str) -> bool {
        self.set_visible(ListKind::Resources, uri, Some(true))
    }

    /// Hides a resource or template from this session.
    pub fn disable_resource(&self, uri: &str) -> bool {
        self.set_visible(ListKind::Resources, uri, Some(false))
    }

    /// Makes the session see every item as the server offers it again.
    pub fn reset_visibility(&self) -> bool {
        let mut changed = 0;
        {
            let mut data = self.session.data();
            for kind in ListKind::ALL {
                let names: Vec<String> = data.visibility().of(kind).keys().cloned().collect();
                for name in names {
                    if data.set_visible(kind, &name, None) {
                        changed |= kind.bit();
                    }
                }
            }
        }
        notify_lists_changed(&self.session, changed);
        changed != 0
    }

    fn set_visible(&self, kind: ListKind, name: &str, visible: Option<bool>) -> bool {
        let changed = self.session.data().set_visible(kind, name, visible);
        if changed {
            notify_lists_changed(&self.session, kind.bit());
        }
        changed
    }
}

impl std::fmt::Debug for SessionData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionData")
            .field("id", &self.id())
            .field("keys", &self.keys())
            .finish()
    }
}

fn value_error(key: &str, error: serde_json::Error) -> SessionError {
    SessionError::Value {
        key: key.to_owned(),
        problem: crate::registry::strip_position(&error.to_string()).to_owned(),
    }
}

/// Tells one session that lists of `kinds` changed (once until it fetches them again).
pub(crate) fn notify_lists_changed(session: &Session, kinds: u8) {
    let news = session.lists_changed(kinds);
    for kind in ListKind::ALL {
        if news & kind.bit() != 0 {
            session.notifications().notify(notification_frame(
                kind.notification(),
                &Value::Object(Default::default()),
            ));
        }
    }
}
