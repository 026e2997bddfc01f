//! The server's policy and audit as ordinary layers: `.layer(policy)` and
//! `.layer(AuditLayer::new(sink))` do what `ServerBuilder::policy` and
//! `ServerBuilder::audit` do, at the place in the stack they are added, so they can be
//! ordered among the other layers (an audit outside a rate limit records what the limit
//! refused; a policy outside a cache is consulted on every call, one inside it only when the
//! cache has no answer).

use std::sync::Arc;

use serde_json::Value;

use super::{Layer, LayerFuture, McpRequest, Next};
use crate::audit::{Audit, AuditCall, Outcome};
use crate::policy::{OwnedCall, PERMISSION_DENIED, Policy};
use crate::protocol::ERROR_META_KEY;

impl Layer for Policy {
    /// Before a `tools/call`, every stage (the asynchronous ones too): a refusal is the same
    /// tool error the built-in policy gives. With [`Policy::hide_denied`], `tools/list`
    /// leaves out what the synchronous stages refuse the caller.
    fn handle<'a>(&'a self, mut request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin(async move {
            match request.method() {
                "tools/list" if self.hides_denied() => {
                    let server = request.server().clone();
                    for name in server.tool_names() {
                        let Some(annotations) = server.tool_annotations(name) else {
                            continue;
                        };
                        let call = crate::policy::CallRequest::new(
                            name,
                            &annotations,
                            request.auth(),
                            None,
                        );
                        if self.evaluate(&call).is_err() {
                            request.hide_tool(name);
                        }
                    }
                }
                "tools/call" => {
                    let Some(name) = request.target().map(str::to_owned) else {
                        return next.run(request).await;
                    };
                    // An unknown tool is the server's to refuse.
                    let Some(annotations) = request.server().tool_annotations(&name) else {
                        return next.run(request).await;
                    };
                    let call = OwnedCall {
                        tool: name.clone(),
                        annotations,
                        caller: request.auth().cloned(),
                        arguments: request
                            .params()
                            .get("arguments")
                            .cloned()
                            .unwrap_or(Value::Null),
                    };
                    if let Err(refusal) = self.evaluate_async(call).await {
                        tracing::info!(tool = %name, stage = %refusal.stage, "tool call refused");
                        let result = refusal.into_result(&name);
                        return serde_json::to_value(result)
                            .map_err(|e| crate::protocol::RpcError::internal(e.to_string()));
                    }
                }
                _ => {}
            }
            next.run(request).await
        })
    }
}

/// An [`Audit`] sink as a layer: one record per `tools/call` that passes through it, with
/// its outcome (`ok`, `tool_error`, `protocol_error`, `denied` with the stage,
/// `input_required`, or `cancelled` when the call was dropped first).
///
/// ```
/// use std::sync::Arc;
/// use mcp_runtime::audit::TracingAudit;
/// use mcp_runtime::middleware::{AuditLayer, RateLimit};
/// use mcp_runtime::policy::Policy;
///
/// // The audit is outermost: it records the calls the rate limit and the policy refuse.
/// let server = mcp_runtime::server!()
///     .auto_register(false)
///     .layer(AuditLayer::new(Arc::new(TracingAudit)))
///     .layer(RateLimit::per_minute(600))
///     .layer(Policy::new().deny_tools(["drop_*"]))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct AuditLayer {
    sink: Arc<dyn Audit>,
}

impl AuditLayer {
    /// A layer recording into `sink`.
    pub fn new(sink: Arc<dyn Audit>) -> AuditLayer {
        AuditLayer { sink }
    }
}

impl Layer for AuditLayer {
    fn handle<'a>(&'a self, request: McpRequest, next: Next) -> LayerFuture<'a> {
        Box::pin(async move {
            let tool = (request.method() == "tools/call")
                .then(|| request.target())
                .flatten()
                .and_then(|name| request.server().tool_static_name(name));
            let Some(tool) = tool else {
                return next.run(request).await;
            };
            let arguments = request.params().get("arguments").map(Value::to_string);
            let call = AuditCall::begin(
                &self.sink,
                tool,
                request.auth().map(|a| a.subject.as_str()),
                arguments.as_deref(),
                || {
                    request
                        .params()
                        .pointer("/_meta/traceparent")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                },
            );
            let result = next.run(request).await;
            if let Some(call) = call {
                let (outcome, stage) = outcome_of(&result);
                call.end(outcome, stage.as_deref());
            }
            result
        })
    }
}

/// How a call ended, from what it answered.
fn outcome_of(result: &super::LayerResult) -> (Outcome, Option<String>) {
    let Ok(result) = result else {
        return (Outcome::ProtocolError, None);
    };
    if result
        .get("resultType")
        .is_some_and(|t| t == "input_required")
    {
        return (Outcome::InputRequired, None);
    }
    if result.get("isError").is_some_and(|e| e == true) {
        let error = &result["_meta"][ERROR_META_KEY];
        if error["code"] == PERMISSION_DENIED {
            let stage = error["stage"].as_str().map(str::to_owned);
            return (Outcome::Denied, stage);
        }
        return (Outcome::ToolError, None);
    }
    (Outcome::Ok, None)
}
