//! A request or notification through the server's layers (see [`crate::middleware`]): what
//! the layers see of it, and the terminal below them, which serves it as the server would
//! without layers and reads back its result. Only servers with layers come here.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Server;
use super::request::{CatchUnwind, Request, Routed, mark_complete};
use crate::middleware::{LayerResult, McpRequest, Terminal};
use crate::protocol::{Method, RequestId, RpcError, error_frame, response_frame};
use crate::session::{RequestChannel, Session};

impl Server {
    pub(super) fn has_layers(&self) -> bool {
        !self.inner.layers.is_empty()
    }

    /// Serves a request through the layers: they see it as the client sent it, and the
    /// terminal below them serves what they pass on as `serve_request` would have.
    pub(super) fn layered_request(&self, req: &Request<'_>) -> Routed {
        let Request {
            session,
            id,
            method,
            name,
            version,
            params,
            channel,
            ..
        } = *req;
        let finish = req.finish.clone();
        let stateless = finish.is_stateless();
        let request = self.mcp_request(session, name, params, Some(id), channel, stateless);
        let (server, session, channel, id_below) = (
            self.clone(),
            Arc::clone(session),
            channel.clone(),
            id.clone(),
        );
        let terminal: Terminal = Arc::new(move |request: McpRequest| {
            let (server, session, channel, id, finish) = (
                server.clone(),
                Arc::clone(&session),
                channel.clone(),
                id_below.clone(),
                finish.clone(),
            );
            Box::pin(async move {
                let params = raw_params(&request.params)?;
                let hidden = &request.hidden;
                let routed = server.serve_request(&Request {
                    server: &server,
                    session: &session,
                    id: &id,
                    method,
                    name: &request.method,
                    version,
                    params: params.as_deref(),
                    read: None,
                    channel: &channel,
                    finish,
                    hidden: (!hidden.is_empty()).then_some(hidden),
                })?;
                let frame = match routed {
                    Routed::Reply(frame) => frame,
                    Routed::Deferred(call) => call.await,
                };
                frame.map_or(Ok(Value::Null), |frame| read_frame(&frame))
            })
        });
        let run = self.inner.layers.run(request, terminal);
        let id = id.clone();
        let work = async move {
            let frame = match CatchUnwind(run).await {
                Ok(Ok(result)) => {
                    let text = result.to_string();
                    // A result a layer made itself is marked complete, as every stateless
                    // result must be; one from below already is.
                    let text = if stateless && result.get("resultType").is_none() {
                        mark_complete(&text, None)
                    } else {
                        text
                    };
                    response_frame(&id, &text)
                }
                Ok(Err(error)) => error_frame(Some(&id), &error),
                Err(panic) => {
                    let panic = super::request::panic_message(&*panic);
                    tracing::error!(panic, "a layer panicked");
                    error_frame(
                        Some(&id),
                        &RpcError::internal("a layer of the server failed"),
                    )
                }
            };
            Some(frame)
        };
        // `initialize` is settled before the next message is read, as without layers; every
        // other request runs as a handler does, beside the next messages.
        if method == Method::Initialize {
            settle(work)
        } else {
            Routed::Deferred(Box::pin(work))
        }
    }

    /// Passes a notification through the layers; the server handles it below them.
    pub(super) fn layered_notification(
        &self,
        session: &Arc<Session>,
        method: &str,
        params: Option<&RawValue>,
        channel: &RequestChannel,
    ) -> Routed {
        let mut request = self.mcp_request(session, method, params, None, channel, false);
        request.known = is_known_notification(method) || self.has_custom_notification(method);
        let (server, session) = (self.clone(), Arc::clone(session));
        let terminal: Terminal = Arc::new(move |request: McpRequest| {
            let params = raw_params(&request.params);
            let (server, session) = (server.clone(), Arc::clone(&session));
            Box::pin(async move {
                server.notification(&session, &request.method, params?.as_deref());
                Ok(Value::Null)
            })
        });
        let run = self.inner.layers.run(request, terminal);
        settle(async move {
            if let Err(panic) = CatchUnwind(run).await {
                let panic = super::request::panic_message(&*panic);
                tracing::error!(panic, "a layer panicked on a notification");
            }
            None
        })
    }

    fn mcp_request(
        &self,
        session: &Session,
        method: &str,
        params: Option<&RawValue>,
        id: Option<&RequestId>,
        channel: &RequestChannel,
        stateless: bool,
    ) -> McpRequest {
        McpRequest {
            method: method.to_owned(),
            params: params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(Value::Null),
            id: id.cloned(),
            server: self.clone(),
            auth: channel.auth.clone(),
            session_id: session
                .is_session()
                .then(|| session.key())
                .flatten()
                .map(str::to_owned),
            connection: session.is_session().then(|| session.serial()),
            client: session.negotiated().map(|n| n.client_info.clone()),
            stateless,
            known: true,
            hidden: Default::default(),
        }
    }
}

/// Whether MCP defines a notification a client sends.
fn is_known_notification(method: &str) -> bool {
    matches!(
        method,
        "notifications/initialized"
            | "notifications/cancelled"
            | "notifications/progress"
            | "notifications/roots/list_changed"
            | "notifications/tasks/status"
    )
}

/// The parameters as the server reads them again.
fn raw_params(params: &Value) -> Result<Option<Box<RawValue>>, RpcError> {
    if params.is_null() {
        return Ok(None);
    }
    serde_json::value::to_raw_value(params)
        .map(Some)
        .map_err(|e| RpcError::internal(format!("unreadable parameters: {e}")))
}

/// The result or error of a response frame.
fn read_frame(frame: &[u8]) -> LayerResult {
    #[derive(Deserialize)]
    struct Response {
        #[serde(default)]
        result: Option<Value>,
        #[serde(default)]
        error: Option<RpcError>,
    }
    let response: Response = serde_json::from_slice(frame)
        .map_err(|e| RpcError::internal(format!("unreadable response: {e}")))?;
    match (response.result, response.error) {
        (_, Some(error)) => Err(error),
        (Some(result), None) => Ok(result),
        (None, None) => Ok(Value::Null),
    }
}

/// Answers at once when the layers did not wait for anything (so that `initialize`, or a
/// notification, is settled before the next message is read, as without layers); otherwise
/// the transport runs the rest.
fn settle(work: impl Future<Output = Option<Vec<u8>>> + Send + 'static) -> Routed {
    let mut work = Box::pin(work);
    match work
        .as_mut()
        .poll(&mut TaskContext::from_waker(Waker::noop()))
    {
        Poll::Ready(frame) => Routed::Reply(frame),
        Poll::Pending => Routed::Deferred(work),
    }
}
