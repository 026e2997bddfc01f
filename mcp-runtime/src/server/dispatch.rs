//! The dispatch of one incoming message, independent of any transport.
//!
//! [`Server::route`] reads one message and either answers at once (lifecycle, lists, errors —
//! in the order messages arrive, so `initialize` is settled before the next message is read)
//! or returns the future of a handler call, which the transport runs concurrently. A request
//! is looked up in the method table, prepared for its era (the stateless era's metadata is
//! read in [`stateless`](super::stateless)), and served by one `match`
//! from method to code for both eras.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::Server;
use super::request::{Finish, Request, Routed, parse_params};
use super::stateless::StatelessParams;
use crate::protocol::messages::{
    CancelledParams, InitializeParams, SetLevelParams, SubscribeParams,
};
use crate::protocol::{
    Envelope, Frame, Incoming, Method, ProtocolVersion, RequestId, RpcError, error_frame,
};
use crate::resource::resource_not_found;
use crate::session::{Negotiated, RequestChannel, Session};

/// The most messages a JSON-RPC batch (2025-03-26) may hold.
pub const MAX_BATCH_ITEMS: usize = 64;

/// Why bytes are not one message [`Server::read`] can route.
pub(crate) enum Unread<'a> {
    /// Arrays and objects nest deeper than the server's limit.
    TooDeep,
    /// A JSON-RPC batch (2025-03-26), from its `[`.
    Batch(&'a [u8]),
    NotUtf8(std::str::Utf8Error),
    /// Not JSON, or JSON but no JSON-RPC object.
    NotAMessage(serde_json::Error),
}

impl Server {
    /// Routes one message (a line on stdio, a body on HTTP).
    pub(crate) fn route(
        &self,
        session: &Arc<Session>,
        bytes: &[u8],
        out: &RequestChannel,
    ) -> Routed {
        self.trace_in(bytes);
        match self.read(bytes) {
            Ok(envelope) => self.route_envelope(session, envelope, None, out),
            Err(Unread::TooDeep) => Routed::Reply(self.too_deep(bytes)),
            Err(Unread::Batch(items)) => self.route_batch(session, items, out),
            Err(Unread::NotUtf8(e)) => Routed::Reply(Some(error_frame(
                None,
                &RpcError::parse_error(format!("invalid JSON: the message is not UTF-8 ({e})")),
            ))),
            Err(Unread::NotAMessage(e)) => {
                Routed::Reply(Some(error_frame(None, &parse_failure(&e))))
            }
        }
    }

    /// Reads one message, its members borrowed from `bytes` (checked to be UTF-8 once), or
    /// says why `bytes` are not one. [`route`](Self::route) answers each reason; a transport
    /// that must know what a message is before routing it (an HTTP POST's shape decides its
    /// session and its slots) reads it here and routes it with
    /// [`route_read`](Self::route_read), without reading it again.
    pub(crate) fn read<'a>(&self, bytes: &'a [u8]) -> Result<Envelope<'a>, Unread<'a>> {
        if nests_deeper_than(bytes, self.max_nesting_depth()) {
            return Err(Unread::TooDeep);
        }
        let trimmed = bytes.trim_ascii_start();
        if trimmed.first() == Some(&b'[') {
            return Err(Unread::Batch(trimmed));
        }
        let text = std::str::from_utf8(bytes).map_err(Unread::NotUtf8)?;
        Envelope::parse(text).map_err(Unread::NotAMessage)
    }

    /// Routes the message [`read`](Self::read) found in `bytes`, as [`route`](Self::route)
    /// would. `stateless`, when given, is what the transport read of the message's
    /// parameters as a stateless request's: they are not read again.
    #[cfg(feature = "http")]
    pub(crate) fn route_read<'a>(
        &self,
        session: &Arc<Session>,
        bytes: &[u8],
        envelope: Envelope<'a>,
        stateless: Option<StatelessParams<'a>>,
        out: &RequestChannel,
    ) -> Routed {
        self.trace_in(bytes);
        self.route_envelope(session, envelope, stateless, out)
    }

    /// The answer to a message that nests past the limit: read without parsing it, it is
    /// refused as JSON-RPC asks — a parse error when it is not JSON at all, an invalid request
    /// answered to its id, and nothing for a notification or a response.
    fn too_deep(&self, bytes: &[u8]) -> Option<Frame> {
        let limit = self.max_nesting_depth();
        let top = std::str::from_utf8(bytes)
            .ok()
            .and_then(|_| crate::protocol::deep::scan(bytes));
        let Some(top) = top else {
            return Some(error_frame(
                None,
                &RpcError::parse_error("invalid JSON: the message is not one JSON value"),
            ));
        };
        if top.object && !top.method && top.answer {
            tracing::debug!(limit, "ignoring a response that nests past the limit");
            return None;
        }
        let has_id = top.id.is_some();
        let id = top
            .id
            .and_then(|range| serde_json::from_slice::<RequestId>(&bytes[range]).ok());
        if top.object && top.method && !has_id {
            tracing::debug!(limit, "ignoring a notification that nests past the limit");
            return None;
        }
        Some(error_frame(
            id.as_ref(),
            &RpcError::invalid_request(format!(
                "arrays and objects nest deeper than the limit of {limit}"
            )),
        ))
    }

    fn route_batch(&self, session: &Arc<Session>, bytes: &[u8], out: &RequestChannel) -> Routed {
        let items = match serde_json::from_slice::<Vec<&RawValue>>(bytes) {
            Ok(items) => items,
            Err(e) => return Routed::Reply(Some(error_frame(None, &parse_failure(&e)))),
        };
        let allowed = session
            .negotiated()
            .is_some_and(|n| n.version.allows_batches());
        if !allowed {
            return Routed::Reply(Some(error_frame(
                None,
                &RpcError::invalid_request(
                    "JSON-RPC batches are not supported by the negotiated protocol version",
                ),
            )));
        }
        if items.is_empty() {
            return Routed::Reply(Some(error_frame(
                None,
                &RpcError::invalid_request("an empty batch"),
            )));
        }
        // Each item is answered at once, in one response: unbounded, a batch of a few
        // megabytes of `tools/list` asks for gigabytes.
        if items.len() > MAX_BATCH_ITEMS {
            return Routed::Reply(Some(error_frame(
                None,
                &RpcError::invalid_request(format!(
                    "a batch holds {} messages; at most {MAX_BATCH_ITEMS} are accepted",
                    items.len()
                )),
            )));
        }
        let routed: Vec<Routed> = items
            .into_iter()
            .map(|raw| match Envelope::parse(raw.get()) {
                Ok(envelope) if envelope.is_stateless_era() => in_batch(envelope),
                Ok(envelope) => self.route_envelope(session, envelope, None, out),
                Err(e) => Routed::Reply(Some(error_frame(None, &parse_failure(&e)))),
            })
            .collect();
        Routed::Deferred(Box::pin(async move {
            let mut frames = Vec::new();
            for r in routed {
                let frame = match r {
                    Routed::Reply(frame) => frame,
                    Routed::Deferred(fut) => fut.await,
                };
                frames.extend(frame);
            }
            // A batch of notifications only is answered with nothing at all.
            (!frames.is_empty()).then(|| {
                let mut out =
                    Vec::with_capacity(frames.iter().map(|f| f.len() + 1).sum::<usize>() + 1);
                out.push(b'[');
                for (i, f) in frames.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(f);
                }
                out.push(b']');
                out
            })
        }))
    }

    fn route_envelope<'a>(
        &self,
        session: &Arc<Session>,
        envelope: Envelope<'a>,
        stateless: Option<StatelessParams<'a>>,
        out: &RequestChannel,
    ) -> Routed {
        // A response is never answered, not even a malformed one: two peers that both
        // answered what they could not read would answer each other for ever.
        let response = envelope.is_response();
        match envelope.classify() {
            Err((id, error)) if response => {
                tracing::debug!(?id, %error.message, "ignoring a malformed response");
                Routed::Reply(None)
            }
            Err((id, error)) => Routed::Reply(Some(error_frame(id.as_ref(), &error))),
            Ok(Incoming::Notification { method, params }) if self.has_layers() => {
                self.layered_notification(session, &method, params, out)
            }
            Ok(Incoming::Notification { method, params }) => {
                self.notification(session, &method, params);
                Routed::Reply(None)
            }
            // A response answers one of the server's own requests to the client.
            Ok(Incoming::Response { id, result }) => {
                let answer = match result {
                    Ok(value) => serde_json::from_str(value.get())
                        .map_err(|e| RpcError::internal(format!("unreadable result: {e}"))),
                    Err(error) => Err(serde_json::from_str(error.get()).unwrap_or_else(|_| {
                        RpcError::internal(format!("malformed error object: {}", error.get()))
                    })),
                };
                if let Some(answer) = session.client_requests().deliver(id.as_ref(), answer) {
                    if self.in_cluster() && session.key().is_some() {
                        // Another replica asked: it gets the answer.
                        self.forward_answer(session, id.as_ref(), answer);
                    } else {
                        tracing::debug!(?id, "dropping a response to no pending request");
                    }
                }
                Routed::Reply(None)
            }
            Ok(Incoming::Request { id, method, params }) => {
                let serve = || {
                    // Handlers, layers, lists and completers catch their own panics; this
                    // catches the runtime's, so that a defect answers one request with an
                    // internal error rather than end the connection (or, on stdio, the
                    // process).
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.request(session, &id, &method, params, stateless, out)
                    }))
                    .unwrap_or_else(|_| {
                        tracing::error!(%method, "serving a request panicked");
                        Err(RpcError::internal(format!(
                            "the server failed while serving `{method}`"
                        )))
                    })
                    .unwrap_or_else(|error| Routed::Reply(Some(error_frame(Some(&id), &error))))
                };
                if self.observing() {
                    self.observed(session, &id, &method, params, out, serve)
                } else {
                    serve()
                }
            }
        }
    }

    /// A request: its method looked up in the table, prepared for its era, and served.
    fn request<'a>(
        &self,
        session: &Arc<Session>,
        id: &RequestId,
        name: &str,
        params: Option<&'a RawValue>,
        read: Option<StatelessParams<'a>>,
        channel: &RequestChannel,
    ) -> Result<Routed, RpcError> {
        let stateless = channel.stateless_only || super::stateless::is_stateless(name, params);
        // A method this era lacks, or that this server serves nothing for, is not found.
        let method = match Method::parse(name).filter(|&m| self.serves(m, stateless)) {
            Some(method) => method,
            None if self.has_custom_method(name) => Method::Custom,
            None => return Err(RpcError::method_not_found(name)),
        };
        if stateless {
            let read = match read {
                Some(read) => read,
                None => StatelessParams::read(params)?,
            };
            let prepared = self.prepare_stateless(session, method, params, &read, channel)?;
            return self.serve_either(&Request {
                server: self,
                session: &prepared.session,
                id,
                method,
                name,
                version: ProtocolVersion::LATEST_HANDSHAKE,
                params,
                read: Some(&read),
                channel: &prepared.channel,
                finish: prepared.finish,
                hidden: None,
            });
        }
        let version = match method {
            // The only requests before the handshake, answered whatever the session is.
            Method::Initialize | Method::Ping => ProtocolVersion::LATEST_HANDSHAKE,
            _ => {
                session
                    .negotiated()
                    .ok_or_else(|| {
                        RpcError::invalid_request(format!(
                            "the session is not initialized: send `initialize` before `{name}`"
                        ))
                    })?
                    .version
            }
        };
        self.serve_either(&Request {
            server: self,
            session,
            id,
            method,
            name,
            version,
            params,
            read: None,
            channel,
            finish: Finish::handshake(),
            hidden: None,
        })
    }

    /// Serves a request of either era: through the layers when the server has any.
    fn serve_either(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        if self.has_layers() {
            return Ok(self.layered_request(req));
        }
        self.serve_request(req)
    }

    /// Whether the server answers `method` in an era: the era has it, and the server serves
    /// what it needs.
    fn serves(&self, method: Method, stateless: bool) -> bool {
        let in_era = if stateless {
            method.in_stateless()
        } else {
            method.in_handshake()
        };
        in_era && self.has(method.needs())
    }

    /// Serves a request of either era: the one table from method to code.
    pub(super) fn serve_request(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        if let Some(list) = req.method.fetches() {
            self.lists_fetched(req.session, list.bit());
        }
        // Lists say how long they stay fresh, in the era that has cache hints.
        let lists = req.is_stateless().then_some(self.inner.settings.list_cache);
        Ok(match req.method {
            Method::Initialize => req.answer(self.initialize(req), None),
            Method::Ping => req.answer(Ok("{}".into()), None),
            Method::ServerDiscover => req.answer(Ok(self.discover_result()), None),
            Method::ToolsList => req.answer(self.list_tools(req), lists),
            Method::ToolsCall => self.call_tool(req)?,
            Method::PromptsList => req.answer(self.list_prompts(req), lists),
            Method::PromptsGet => self.get_prompt(req)?,
            Method::ResourcesList => self.list_resources(req, lists)?,
            Method::ResourceTemplatesList => req.answer(self.list_resource_templates(req), lists),
            Method::ResourcesRead => self.read_resource(req)?,
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                req.answer(self.subscribe(req), None)
            }
            Method::CompletionComplete => self.complete(req)?,
            Method::LoggingSetLevel => {
                let p: SetLevelParams = req.params()?;
                req.session.set_log_level(p.level);
                req.answer(Ok("{}".into()), None)
            }
            Method::SubscriptionsListen => self.listen(req)?,
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                self.task_request(req)?
            }
            Method::SkillsList => req.answer(self.list_skills(req), lists),
            Method::SkillsGet => req.answer(self.get_skill(req), lists),
            Method::ResourcesDirectoryRead => req.answer(self.read_directory(req), lists),
            Method::Custom => self.call_custom(req)?,
        })
    }

    /// `resources/subscribe` and `resources/unsubscribe`.
    fn subscribe(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: SubscribeParams = req.params()?;
        if req.method == Method::ResourcesUnsubscribe {
            req.session.unsubscribe(&p.uri);
            return Ok("{}".into());
        }
        if self
            .catalogue_for(req.session, req.hidden)
            .resolve(&p.uri)
            .is_none()
        {
            return Err(resource_not_found(&p.uri));
        }
        if !req.session.subscribe(&p.uri) {
            return Err(RpcError::invalid_params(format!(
                "this session holds as many subscriptions as it may ({} URIs, {} KiB of them \
                 in all): unsubscribe from one first",
                crate::session::MAX_SUBSCRIPTIONS,
                crate::session::MAX_SUBSCRIPTION_BYTES / 1024
            )));
        }
        Ok("{}".into())
    }

    pub(super) fn notification(&self, session: &Session, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/cancelled" => match parse_params::<CancelledParams>(params) {
                Ok(p) => {
                    tracing::debug!(id = %p.request_id, reason = ?p.reason, "request cancelled by the client");
                    session.cancel(&p.request_id);
                }
                Err(e) => tracing::debug!(%e, "ignoring a malformed cancellation"),
            },
            // Requests are served from the `initialize` response on; the notification only
            // confirms what the session already allows.
            "notifications/initialized" => {}
            "notifications/roots/list_changed" => session.forget_roots(),
            other if self.custom_notification(other, params) => {}
            other => tracing::debug!(method = other, "ignoring an unknown notification"),
        }
    }

    fn initialize(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: InitializeParams = req.params()?;
        let session = req.session;
        let version = p
            .protocol_version
            .parse::<ProtocolVersion>()
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let negotiated = Negotiated {
            version,
            client_info: p.client_info,
            client_capabilities: p.capabilities,
        };
        if !session.initialize(negotiated) {
            return Err(RpcError::invalid_request(
                "the session is already initialized; `initialize` may be sent once",
            ));
        }
        Ok(self.inner.initialize_results[version.index()].clone())
    }
}

/// Whether arrays and objects nest deeper than `limit` anywhere in a message (brackets in
/// strings aside). A message shorter than the limit cannot, and is not looked at; nor is one
/// with no more opening brackets than the limit, strings or not (counted with a vectorised
/// search, which is where most messages stop).
pub(crate) fn nests_deeper_than(bytes: &[u8], limit: usize) -> bool {
    if bytes.len() <= limit
        || memchr::memchr2_iter(b'[', b'{', bytes)
            .take(limit.saturating_add(1))
            .count()
            <= limit
    {
        return false;
    }
    let (mut depth, mut i) = (0usize, 0usize);
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            // A string is skipped whole, from one quote or backslash to the next: a large
            // text argument costs a vectorised search, not a look at every byte.
            b'"' => loop {
                let Some(j) = bytes
                    .get(i..)
                    .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                else {
                    // An unterminated string: nothing after it nests, and the parser
                    // refuses the message.
                    return false;
                };
                i += j + 1;
                if bytes[i - 1] == b'"' {
                    break;
                }
                // The escaped character is skipped, whatever it is.
                i += 1;
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn parse_failure(e: &serde_json::Error) -> RpcError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Data => RpcError::invalid_request(format!("not a JSON-RPC message: {e}")),
        Category::Syntax | Category::Eof | Category::Io => {
            RpcError::parse_error(format!("invalid JSON: {e}"))
        }
    }
}

/// A message of the 2026-07-28 era inside a batch: that era has no batches, and a request of
/// it is checked against the HTTP headers that name it only when it comes alone, so it is
/// refused here, never served (a notification is dropped; nothing answers one).
fn in_batch(envelope: Envelope<'_>) -> Routed {
    match envelope.classify() {
        Ok(Incoming::Request { id, .. }) => Routed::Reply(Some(error_frame(
            Some(&id),
            &RpcError::invalid_request(
                "a request of protocol revision 2026-07-28 cannot be in a batch: send it alone",
            ),
        ))),
        Ok(_) => Routed::Reply(None),
        Err((id, error)) => Routed::Reply(Some(error_frame(id.as_ref(), &error))),
    }
}

#[cfg(test)]
mod tests {
    use super::nests_deeper_than;

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        assert!(!nests_deeper_than(br#"{"a":[[1]]}"#, 3));
        assert!(nests_deeper_than(br#"{"a":[[[1]]]}"#, 3));
        assert!(!nests_deeper_than(br#"{"a":"[[[[[[[[\"[[[["}"#, 3));
        let deep = "[".repeat(100_000);
        assert!(nests_deeper_than(deep.as_bytes(), 64));
        // An escaped backslash ends with the string's quote; brackets after it count.
        assert!(nests_deeper_than(br#"{"a":"\\\\","b":[[[1]]]}"#, 3));
        assert!(!nests_deeper_than(br#"{"a":"\\\"]]]","b":[[1]]}"#, 3));
        // Unterminated strings, and an escape at the very end, end the look.
        assert!(!nests_deeper_than(br#"{"a":"[[[[[[[["#, 3));
        // Few opening brackets cannot nest deeply, however long the message.
        let long = format!(r#"{{"a":[[1]],"b":"{}"}}"#, "x".repeat(1000));
        assert!(!nests_deeper_than(long.as_bytes(), 3));
        let deep_and_long = format!(r#"{{"b":"{}","a":[[[1]]]}}"#, "x".repeat(1000));
        assert!(nests_deeper_than(deep_and_long.as_bytes(), 3));
        assert!(!nests_deeper_than(br#"{"a":"[[[[[[[[\\"#, 3));
        assert!(!nests_deeper_than(br#"{"a":"[[[[\"#, 3));
        // The character after a backslash is skipped: an escaped quote does not end the
        // string.
        assert!(!nests_deeper_than(br#"{"a":"\"[[[[","b":1}"#, 3));
    }
}
