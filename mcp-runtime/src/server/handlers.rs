//! Requests that run user code — `tools/call`, `prompts/get`, `resources/read` — as
//! cancellable, panic-contained futures, with their results shaped for the negotiated revision.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::request::{CatchUnwind, Request, Routed, frame, panic_message};
use super::stateless::StatelessParams;
use crate::audit::{AuditCall, Outcome};
use crate::content::{CallToolResult, Content, Text};
use crate::context::Context;
use crate::policy::CallRequest;
use crate::prompt::PromptArguments;
use crate::protocol::messages::{CallToolParams, RequestMeta};
use crate::protocol::{CacheHint, ProtocolVersion, RpcError};
use crate::registry::{Arguments, ResourceRequest};
use crate::resource::resource_not_found;

#[derive(Deserialize)]
struct GetPromptParams<'a> {
    name: String,
    /// Text, or `null` for an argument left out: read by `PromptArguments::from_text`, whose
    /// errors name the argument.
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
struct ReadResourceParams {
    uri: String,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

impl Request<'_> {
    /// Registers the request as in flight and builds its [`Context`].
    fn begin(&self, meta: Option<RequestMeta>) -> Result<(Context, CancellationToken), RpcError> {
        self.begin_handler(meta, None)
            .map(|(ctx, cancel, _)| (ctx, cancel))
    }

    /// [`Request::begin`], for a method of the server's own.
    pub(super) fn begin_custom(
        &self,
        meta: Option<RequestMeta>,
    ) -> Result<(Context, CancellationToken), RpcError> {
        self.begin(meta)
    }

    /// [`Request::run`], for a method of the server's own.
    pub(super) fn run_custom<T: Send + 'static>(
        &self,
        cancel: CancellationToken,
        handler: Pin<Box<dyn Future<Output = T> + Send>>,
        respond: impl FnOnce(Result<T, String>) -> Result<String, RpcError> + Send + 'static,
    ) -> Routed {
        self.run(cancel, handler, None, respond)
    }

    /// [`Request::begin`]; with a time `limit`, the context has a deadline and a token of
    /// its own, which the limit stops (`ctx.is_cancelled()`) without cancelling the request:
    /// a tool stopped by its time limit is still answered.
    fn begin_handler(
        &self,
        meta: Option<RequestMeta>,
        limit: Option<std::time::Duration>,
    ) -> Result<(Context, CancellationToken, Option<CancellationToken>), RpcError> {
        let cancel = self.session.begin(self.id).ok_or_else(|| {
            RpcError::invalid_request(format!(
                "a request with id {} is already in flight",
                self.id
            ))
        })?;
        // Each handle of a token costs a lock to make and to drop: the context shares the
        // request's own unless a limit needs one that stops without cancelling.
        let stop = limit.map(|_| cancel.child_token());
        let ctx = Context::new(
            self.server.clone(),
            Arc::clone(self.session),
            self.channel.clone(),
            self.id.clone(),
            meta.and_then(|m| m.progress_token),
            stop.clone().unwrap_or_else(|| cancel.clone()),
            limit.map(|limit| tokio::time::Instant::now() + limit),
        );
        Ok((ctx, cancel, stop))
    }

    /// Runs `handler` concurrently; `respond` turns its outcome (or its panic message) into
    /// the result to send, which the era then shapes with `cache`. A cancelled request is
    /// answered with nothing. A call that may become a task becomes one the first time its
    /// handler waits.
    fn run<T: Send + 'static>(
        &self,
        cancel: CancellationToken,
        handler: Pin<Box<dyn Future<Output = T> + Send>>,
        cache: Option<CacheHint>,
        respond: impl FnOnce(Result<T, String>) -> Result<String, RpcError> + Send + 'static,
    ) -> Routed {
        let session = Arc::clone(self.session);
        let id = self.id.clone();
        let task = self.channel.task.clone().map(|slot| {
            let owner = self.channel.auth.as_ref().map(|a| a.subject.clone());
            (slot, self.server.clone(), owner)
        });
        let finish = self.finish.clone();
        let answer = move |outcome| finish.apply(respond(outcome), cache);
        Routed::Deferred(Box::pin(async move {
            let mut handler = CatchUnwind(handler);
            // Cancellation is looked at first: a handler that notices it and returns must
            // not be answered either. The client gave up on the request, and the
            // cancellation section of the specification asks for no response.
            let outcome = match task {
                None => {
                    // The same as a biased select of the two, except that the waiter on the
                    // token (a lock to add and one to remove) is added only once the handler
                    // waits: most finish at their first poll.
                    let cancelled = cancel.cancelled();
                    let mut cancelled = std::pin::pin!(cancelled);
                    let mut armed = false;
                    // A cancelled call is answered with nothing.
                    std::future::poll_fn(|cx| {
                        let gone = if armed {
                            cancelled.as_mut().poll(cx).is_ready()
                        } else {
                            cancel.is_cancelled()
                        };
                        if gone {
                            return Poll::Ready(None);
                        }
                        match Pin::new(&mut handler).poll(cx) {
                            Poll::Ready(outcome) => Poll::Ready(Some(outcome)),
                            // Polled now, the waiter sees a cancellation that came since.
                            Poll::Pending if !armed => {
                                armed = true;
                                cancelled.as_mut().poll(cx).map(|()| None)
                            }
                            Poll::Pending => Poll::Pending,
                        }
                    })
                    .await?
                }
                Some((slot, server, owner)) => {
                    // Polled once here, whatever it does: no waiter on the token is needed.
                    if cancel.is_cancelled() {
                        return None;
                    }
                    let polled =
                        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut handler).poll(cx)))
                            .await;
                    match polled {
                        Poll::Ready(outcome) => outcome,
                        // The handler waits: the call becomes a task, and the handler goes
                        // on in the task's runner.
                        Poll::Pending => {
                            session.finish(&id);
                            let (task, running) = match server.create_task(&slot, owner).await {
                                Ok(created) => created,
                                Err(error) => return Some(frame(&id, Err(error))),
                            };
                            let finish = Box::pin(async move {
                                let outcome = handler.await;
                                answer(outcome.map_err(|panic| panic_message(&*panic).to_owned()))
                            });
                            server.run_task(task.task_id.clone(), running, cancel, finish);
                            return Some(server.task_created(&id, &task));
                        }
                    }
                }
            };
            // The client may cancel on another thread between the two polls above, and a
            // handler that noticed it finishes in the same poll: it is not answered either.
            if cancel.is_cancelled() {
                return None;
            }
            session.finish(&id);
            let outcome = outcome.map_err(|panic| panic_message(&*panic).to_owned());
            Some(frame(&id, answer(outcome)))
        }))
    }
}

impl Server {
    /// `tools/call`: the policy, the audit record, the time limit, and the task the call
    /// may become, around the tool's own function.
    pub(super) fn call_tool(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        // The reading is taken for an object only (serde reads a struct from an array too,
        // and the envelope refuses array parameters before this, but not for ever).
        let read = req
            .read
            .filter(|_| req.params.is_some_and(|p| p.get().starts_with('{')));
        let p: CallToolParams<'_> = match read.and_then(StatelessParams::call_tool) {
            Some(p) => p,
            None => req.params()?,
        };
        let version = req.version;
        let catalogue = self.catalogue_for(req.session, req.hidden);
        let tool = catalogue.tool(&p.name).ok_or_else(|| {
            RpcError::invalid_params(format!("unknown tool `{}`", p.name))
                .with_data(serde_json::json!({ "name": p.name }))
        })?;
        let descriptor = tool.descriptor;
        self.check_scopes(req, "tool", descriptor.name, descriptor.scopes)?;
        let caller = req.channel.auth.as_deref();
        let mut audit = AuditCall::begin(
            self.audit(),
            descriptor.name,
            caller.map(|c| c.subject.as_str()),
            p.arguments.map(RawValue::get),
            || crate::telemetry::traceparent_of(req.params.map(RawValue::get)),
        );
        // A policy that waits is consulted as the call begins, before the tool runs.
        let mut consult = None;
        if let Some(policy) = self.policy() {
            let request = CallRequest::new(
                descriptor.name,
                &descriptor.annotations,
                caller,
                p.arguments,
            );
            if policy.waits() {
                consult = Some(crate::policy::OwnedCall::of(&request));
            } else if let Err(refusal) = policy.evaluate(&request) {
                tracing::info!(tool = descriptor.name, stage = %refusal.stage, "tool call refused");
                if let Some(audit) = audit.take() {
                    audit.end(Outcome::Denied, Some(&refusal.stage));
                }
                let mut result = refusal.into_result(descriptor.name);
                shape_result(&mut result, version, false);
                return Ok(req.answer(Ok(serde_json::to_string(&result).unwrap_or_default()), None));
            }
        }
        // A tool with task support may become a task when the client declares tasks.
        // A call refused from here on is a protocol error, and recorded as one.
        let refused = |audit: &mut Option<AuditCall>| {
            if let Some(audit) = audit.take() {
                audit.end(Outcome::ProtocolError, None);
            }
        };
        let task = self
            .task_slot(descriptor.task, req.session, req.is_stateless())
            .inspect_err(|_| refused(&mut audit))?;
        let with_task;
        let req = match task {
            Some(slot) => {
                let mut channel = req.channel.clone();
                channel.task = Some(slot);
                with_task = channel;
                req.with_channel(&with_task)
            }
            None => req.with_channel(req.channel),
        };
        let limit = descriptor.timeout.or(self.tool_timeout());
        let (ctx, cancel, stop) = req
            .begin_handler(p.meta, limit)
            .inspect_err(|_| refused(&mut audit))?;
        let wraps_output = tool.wraps_output;
        let args = Arguments::new(p.arguments).with_schema(tool.schemas().0);
        let call = match &tool.handler {
            Some(handler) => handler(ctx, args),
            None => (descriptor.call)(ctx, args),
        };
        let call = match consult {
            Some(owned) => {
                let server = self.clone();
                Box::pin(async move {
                    let verdict = match server.policy() {
                        Some(policy) => policy.evaluate_async(owned).await,
                        None => Ok(()),
                    };
                    match verdict {
                        Ok(()) => call.await,
                        Err(refusal) => {
                            tracing::info!(tool = descriptor.name, stage = %refusal.stage, "tool call refused");
                            refusal.into_result(descriptor.name)
                        }
                    }
                }) as crate::registry::ToolFuture
            }
            None => call,
        };
        let call = match limit.zip(stop) {
            Some((limit, stop)) => with_time_limit(call, limit, descriptor.name, stop),
            None => call,
        };
        let round_trip = req.channel.round_trip.clone();
        Ok(req.run(cancel, call, None, move |outcome| {
            let mut result = outcome.unwrap_or_else(|panic| {
                tracing::error!(tool = descriptor.name, panic, "tool panicked");
                CallToolResult::error(format!(
                    "tool `{}` failed with an internal error",
                    descriptor.name
                ))
            });
            let denied_by = result
                .meta
                .as_ref()
                .and_then(|meta| meta.get(crate::protocol::ERROR_META_KEY))
                .filter(|error| error["code"] == crate::policy::PERMISSION_DENIED)
                .and_then(|error| error["stage"].as_str())
                .map(str::to_owned);
            if let Some(stage) = &denied_by
                && let Some(audit) = audit.take()
            {
                audit.end(Outcome::Denied, Some(stage));
            }
            let ended = if result.internal_error.is_some() {
                Outcome::ProtocolError
            } else if round_trip.as_ref().is_some_and(|r| r.wants_input()) {
                Outcome::InputRequired
            } else if result.is_error {
                Outcome::ToolError
            } else {
                Outcome::Ok
            };
            if let Some(audit) = audit {
                audit.end(ended, None);
            }
            if let Some(defect) = result.internal_error.take() {
                tracing::error!(tool = descriptor.name, defect, "tool result is unusable");
                return Err(RpcError::internal(defect));
            }
            shape_result(&mut result, version, wraps_output);
            Ok(crate::protocol::result_json_sized(
                result.size_hint(),
                |out| result.write_json(out),
            ))
        }))
    }

    /// `prompts/get`: the prompt's function, its messages shaped for the revision.
    pub(super) fn get_prompt(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let p: GetPromptParams = req.params()?;
        let version = req.version;
        let catalogue = self.catalogue_for(req.session, req.hidden);
        let prompt = catalogue.prompt(&p.name).ok_or_else(|| {
            RpcError::invalid_params(format!("unknown prompt `{}`", p.name))
                .with_data(serde_json::json!({ "name": p.name }))
        })?;
        let descriptor = prompt.descriptor;
        self.check_scopes(req, "prompt", descriptor.name, descriptor.scopes)?;
        let arguments = PromptArguments::from_text(p.arguments.map(RawValue::get))?;
        let (ctx, cancel) = req.begin(p.meta)?;
        let get = match &prompt.handler {
            Some(handler) => handler(ctx, arguments),
            None => (descriptor.get)(ctx, arguments),
        };
        Ok(req.run(cancel, get, None, move |outcome| {
            let mut result = outcome.map_err(|panic| {
                tracing::error!(prompt = descriptor.name, panic, "prompt panicked");
                RpcError::internal(format!(
                    "prompt `{}` failed with an internal error",
                    descriptor.name
                ))
            })??;
            for message in &mut result.messages {
                shape_content(&mut message.content, version);
            }
            serde_json::to_string(&result).map_err(|e| RpcError::internal(e.to_string()))
        }))
    }

    /// `resources/read`: the resource or template the URI names, read by its function.
    pub(super) fn read_resource(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let p: ReadResourceParams = req.params()?;
        // A skill's file (the skills extension).
        if let Some(contents) = self.read_skill_file(req, &p.uri) {
            return Ok(req.answer(Ok(contents), Some(self.read_cache())));
        }
        let catalogue = self.catalogue_for(req.session, req.hidden);
        let (resource, variables) = catalogue.resolve(&p.uri).ok_or_else(|| {
            if p.uri.len() > crate::UriTemplate::MAX_MATCHED_URI {
                RpcError::invalid_params(format!(
                    "the URI is {} bytes long; resource templates match URIs of at most {} bytes",
                    p.uri.len(),
                    crate::UriTemplate::MAX_MATCHED_URI
                ))
            } else {
                resource_not_found(&p.uri)
            }
        })?;
        let descriptor = resource.descriptor;
        self.check_scopes(req, "resource", descriptor.uri, descriptor.scopes)?;
        let cache = Some(descriptor.cache.unwrap_or(self.read_cache()));
        let (ctx, cancel) = req.begin(p.meta)?;
        let variables = PromptArguments::new(
            variables
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        );
        let request = ResourceRequest {
            uri: p.uri,
            variables,
        };
        let read = match &resource.handler {
            Some(handler) => handler(ctx, request),
            None => (descriptor.read)(ctx, request),
        };
        Ok(req.run(cancel, read, cache, move |outcome| {
            let contents = outcome.map_err(|panic| {
                tracing::error!(resource = descriptor.uri, panic, "resource panicked");
                RpcError::internal(format!(
                    "resource `{}` failed with an internal error",
                    descriptor.name
                ))
            })??;
            serde_json::to_string(&serde_json::json!({ "contents": contents }))
                .map_err(|e| RpcError::internal(e.to_string()))
        }))
    }
}

/// A tool call that ends with a tool error once it has run for `limit`; the handler is
/// dropped then, at its next `.await`, and its context cancelled (`stop`), which work it
/// moved off the runtime (`spawn_blocking`) sees in `ctx.is_cancelled()`.
fn with_time_limit(
    call: crate::registry::ToolFuture,
    limit: std::time::Duration,
    name: &'static str,
    stop: CancellationToken,
) -> crate::registry::ToolFuture {
    Box::pin(async move {
        match tokio::time::timeout(limit, call).await {
            Ok(result) => result,
            Err(_) => {
                stop.cancel();
                tracing::warn!(tool = name, ?limit, "tool timed out and was stopped");
                CallToolResult::error(format!(
                    "tool `{name}` did not finish within {} and was stopped",
                    describe_duration(limit)
                ))
            }
        }
    })
}

/// `30 s`, `250 ms`.
fn describe_duration(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Adapts a result to the negotiated revision: wraps non-object structured output, mirrors it
/// as text, and replaces content kinds the revision does not know.
pub(crate) fn shape_result(
    result: &mut CallToolResult,
    version: ProtocolVersion,
    wraps_output: bool,
) {
    if let Some(structured) = result.structured_content.take() {
        // `structuredContent` is an object: anything else is wrapped, as its schema is.
        let structured = if wraps_output || !structured.is_object() {
            serde_json::json!({ "result": structured })
        } else {
            structured
        };
        if result.content.is_empty() {
            result.content.push(Content::text(structured.to_string()));
        }
        if version.has_structured_output() {
            result.structured_content = Some(structured);
        }
    }
    for block in &mut result.content {
        shape_content(block, version);
    }
}

/// Replaces a content block the revision does not know by a text block describing it.
pub(crate) fn shape_content(block: &mut Content, version: ProtocolVersion) {
    match block {
        Content::ResourceLink(link) if !version.has_resource_links() => {
            *block = Content::Text(Text::new(format!("{} <{}>", link.name, link.uri)));
        }
        Content::Audio(audio) if !version.has_audio() => {
            *block = Content::Text(Text::new(format!(
                "[audio content of type {} is not supported by protocol version {version}]",
                audio.mime_type
            )));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_output_gets_a_text_mirror() {
        let mut r = CallToolResult::structured(json!({"x": 1}));
        shape_result(&mut r, ProtocolVersion::V2025_06_18, false);
        assert_eq!(r.content, vec![Content::text(r#"{"x":1}"#)]);
        assert_eq!(r.structured_content, Some(json!({"x": 1})));
    }

    #[test]
    fn structured_output_is_text_only_before_2025_06_18() {
        let mut r = CallToolResult::structured(json!([1, 2]));
        shape_result(&mut r, ProtocolVersion::V2025_03_26, true);
        assert_eq!(r.content, vec![Content::text(r#"{"result":[1,2]}"#)]);
        assert_eq!(r.structured_content, None);
    }
}
