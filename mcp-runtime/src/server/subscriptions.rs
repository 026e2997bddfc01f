//! `subscriptions/listen` (2026-07-28): a long-lived request whose response stream carries
//! the change notifications the client opted in to — list changes, resource updates, task
//! status — each tagged with the subscription's id. It replaces the handshake era's GET
//! stream and `resources/subscribe`.
//!
//! The acknowledgement is queued before the listener is registered, on the same queue as
//! every later notification, so nothing can overtake it. The request ends when the client
//! cancels it (`notifications/cancelled` on stdio, a closed stream on HTTP) — then nothing is
//! answered — or when the transport closes, which answers it with a completion result.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Server;
use super::listeners::Listener;
use super::request::{Request, Routed};
use crate::protocol::{Needs, RpcError, response_frame};

/// The notification types a client opts in to (`SubscriptionFilter`); the acknowledgement
/// carries the subset the server honours.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filter {
    #[serde(default, skip_serializing_if = "is_false")]
    tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource_subscriptions: Option<Vec<String>>,
    /// Task status notifications (the tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task_ids: Option<Vec<String>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Deserialize)]
struct ListenParams {
    #[serde(default)]
    notifications: Option<Filter>,
}

impl Server {
    /// `subscriptions/listen`: acknowledges what it will send, then stays open.
    pub(super) fn listen(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let (session, id, out) = (req.session, req.id, req.channel);
        let p: ListenParams = req.params()?;
        let requested = p.notifications.unwrap_or_default();
        // One listener follows no more than a session may subscribe to: the filter is held
        // for as long as the listener lives, and a gap on the bus retells each entry.
        let most = crate::session::MAX_SUBSCRIPTIONS;
        let mut bytes = 0;
        for (field, asked) in [
            ("resourceSubscriptions", &requested.resource_subscriptions),
            ("taskIds", &requested.task_ids),
        ] {
            let asked = asked.as_deref().unwrap_or_default();
            if asked.len() > most {
                return Err(RpcError::invalid_params(format!(
                    "{field} names {} entries; one subscription may follow at most {most}",
                    asked.len()
                )));
            }
            bytes += asked.iter().map(String::len).sum::<usize>();
        }
        // Held, and repeated in the acknowledgement, for as long as the listener lives.
        let most_bytes = crate::session::MAX_SUBSCRIPTION_BYTES;
        if bytes > most_bytes {
            return Err(RpcError::invalid_params(format!(
                "resourceSubscriptions and taskIds come to {bytes} bytes; one subscription may \
                 follow at most {most_bytes}"
            )));
        }
        if requested.task_ids.is_some()
            && !session.client_supports(&super::tasks::CLIENT_CAPABILITY)
        {
            return Err(super::tasks::missing_extension(
                "task status notifications need the client to declare the tasks extension",
            ));
        }
        let honoured = Filter {
            tools_list_changed: requested.tools_list_changed && self.has(Needs::Tools),
            prompts_list_changed: requested.prompts_list_changed && self.has(Needs::Prompts),
            resources_list_changed: requested.resources_list_changed && self.has(Needs::Resources),
            resource_subscriptions: requested
                .resource_subscriptions
                .filter(|_| self.has(Needs::Resources)),
            task_ids: requested.task_ids.filter(|_| self.has(Needs::Tasks)),
        };
        let cancel = session.begin(id).ok_or_else(|| {
            RpcError::invalid_request(format!("a request with id {id} is already in flight"))
        })?;
        let listener = Arc::new(Listener {
            id: id.clone(),
            lists: [
                honoured.tools_list_changed,
                honoured.prompts_list_changed,
                honoured.resources_list_changed,
            ],
            resources: honoured
                .resource_subscriptions
                .iter()
                .flatten()
                .cloned()
                .collect(),
            tasks: std::sync::Mutex::new(
                honoured
                    .task_ids
                    .iter()
                    .flatten()
                    .map(|id| (id.clone(), None))
                    .collect(),
            ),
            owner: out.auth.as_ref().map(|a| a.subject.clone()),
            out: out.out.clone(),
        });
        listener.send(
            "notifications/subscriptions/acknowledged",
            json!({ "notifications": honoured }),
        );
        self.inner.listeners.add(&listener);
        let closing = out.closing.clone();
        let session = Arc::clone(session);
        let id = id.clone();
        Ok(Routed::Deferred(Box::pin(async move {
            tokio::select! {
                biased;
                // The client ended it: no response, as for any cancelled request.
                () = cancel.cancelled() => None,
                // The transport is closing: a completion result says the end was orderly.
                () = closing.cancelled() => {
                    session.finish(&id);
                    let result = json!({ "resultType": "complete", "_meta": listener.tag() });
                    Some(response_frame(&id, &result.to_string()))
                }
            }
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_acknowledged_filter_lists_only_what_is_honoured() {
        let filter = Filter {
            tools_list_changed: true,
            resource_subscriptions: Some(vec!["file:///a".into()]),
            ..Filter::default()
        };
        assert_eq!(
            serde_json::to_value(&filter).unwrap(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
        let read: Filter = serde_json::from_value(json!({"promptsListChanged": true})).unwrap();
        assert!(read.prompts_list_changed && !read.tools_list_changed);
    }
}
