//! Requests from a handler to the client: the one path sampling, elicitation, roots and ping
//! share — capability check, id, timeout, cancellation when abandoned. (Why one gets no
//! answer, [`ClientError`], is the session layer's.)

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::Context;
use crate::protocol::{RequestId, notification_frame};
use crate::server::DEFAULT_CLIENT_REQUEST_TIMEOUT;
pub use crate::session::ClientError;

/// Forgets an abandoned request and tells the client to stop working on it.
struct PendingRequest<'a> {
    ctx: &'a Context,
    id: i64,
    method: &'static str,
    answered: bool,
}

impl Drop for PendingRequest<'_> {
    fn drop(&mut self) {
        if !self.answered && self.ctx.inner.session.client_requests().forget(self.id) {
            // The handler gave up (timeout or its own cancellation): the specification's
            // cancellation applies to server-to-client requests too.
            self.ctx.inner.out.notify(notification_frame(
                "notifications/cancelled",
                &serde_json::json!({
                    "requestId": self.id,
                    "reason": format!("the server no longer needs the answer to `{}`", self.method),
                }),
            ));
        }
    }
}

impl Context {
    /// Whether the client declared a capability, by its path (`&["elicitation", "url"]`).
    pub(crate) fn client_supports(&self, path: &[&str]) -> bool {
        self.inner.session.client_supports(path)
    }

    pub(crate) fn require(
        &self,
        path: &[&'static str],
        capability: &'static str,
    ) -> Result<(), ClientError> {
        if self.client_supports(path) {
            Ok(())
        } else {
            if let Some(round_trip) = &self.inner.out.round_trip {
                // Should the handler fail for it, the stateless answer names the capability.
                round_trip.note_missing(path);
            }
            Err(ClientError::NotSupported { capability })
        }
    }

    /// Sends a request to the client and awaits its answer.
    pub(crate) async fn request_client(
        &self,
        method: &'static str,
        params: &impl Serialize,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError> {
        self.checkpoint().await;
        if let Some(round_trip) = &self.inner.out.round_trip {
            let params = serde_json::to_value(params)
                .map_err(|e| ClientError::InvalidRequest(e.to_string()))?;
            // In a task the question waits in the task's `inputRequests` for `tasks/update`.
            if let Some(task) = self.task() {
                return task.ask(round_trip.next_key(method), method, params).await;
            }
            return round_trip
                .answer(method, params)
                .ok_or(ClientError::InputRequired { method });
        }
        let timeout = timeout
            .or_else(|| self.server().map(crate::Server::client_request_timeout))
            .unwrap_or(DEFAULT_CLIENT_REQUEST_TIMEOUT);
        let (id, answer) = self.inner.session.client_requests().register();
        let mut pending = PendingRequest {
            ctx: self,
            id,
            method,
            answered: false,
        };
        self.inner.out.send(request_frame(id, method, params));
        let outcome = tokio::time::timeout(timeout, answer).await;
        let answer = match outcome {
            Err(_elapsed) => {
                return Err(ClientError::Timeout {
                    method,
                    after: timeout,
                });
            }
            Ok(Err(_closed)) => {
                pending.answered = true;
                return Err(ClientError::Disconnected);
            }
            Ok(Ok(answer)) => answer,
        };
        pending.answered = true;
        answer.map_err(|error| ClientError::Rejected { method, error })
    }

    /// Names the requests to the client this handler makes next, in the order it makes them:
    /// in a stateless (2026-07-28) request they are the keys of `inputRequests` and of the
    /// client's `inputResponses` (unnamed ones are keyed `<method>-<n>`). Call it before
    /// asking, the same way on every run. Without effect in the handshake era.
    pub fn name_inputs<I, K>(&self, keys: I)
    where
        I: IntoIterator<Item = K>,
        K: Into<String>,
    {
        if let Some(round_trip) = &self.inner.out.round_trip {
            round_trip.name_inputs(keys.into_iter().map(Into::into).collect());
        }
    }

    /// Passes a request of a mounted server on to this request's client (a proxy's
    /// forwarding): sampling, elicitation and roots, each only if the client declared it.
    #[cfg(feature = "client")]
    pub(crate) async fn forward_client_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, crate::protocol::RpcError> {
        use crate::protocol::RpcError;
        let (method, path, capability): (&'static str, &[&'static str], &'static str) = match method
        {
            "sampling/createMessage" => ("sampling/createMessage", &["sampling"], "sampling"),
            "elicitation/create" => ("elicitation/create", &["elicitation"], "elicitation"),
            "roots/list" => ("roots/list", &["roots"], "roots"),
            "ping" => return Ok(serde_json::json!({})),
            other => return Err(RpcError::method_not_found(other)),
        };
        self.require(path, capability).map_err(|e| {
            RpcError::method_not_found(method)
                .with_data(serde_json::json!({ "reason": e.to_string() }))
        })?;
        self.request_client(method, &params, None)
            .await
            .map_err(|error| match error {
                ClientError::Rejected { error, .. } => error,
                other => RpcError::internal(other.to_string()),
            })
    }

    /// Checks that the client is alive (`ping`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.inner.out.round_trip.is_some() {
            // A stateless request has no channel back to ping; the client is there.
            return Ok(());
        }
        self.request_client("ping", &serde_json::json!({}), None)
            .await
            .map(drop)
    }
}

fn request_frame(id: i64, method: &str, params: &impl Serialize) -> Vec<u8> {
    #[derive(Serialize)]
    struct Request<'a, P> {
        jsonrpc: &'static str,
        id: RequestId,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_vec(&Request {
        jsonrpc: "2.0",
        id: RequestId::Number(id),
        method,
        params,
    })
    .unwrap_or_default()
}

/// Reads the client's answer into its expected type.
pub(crate) fn read_answer<T: serde::de::DeserializeOwned>(
    method: &'static str,
    value: Value,
) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::InvalidResponse {
        method,
        problem: e.to_string(),
    })
}
