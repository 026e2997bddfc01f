//! The `tools/call` path: find the tool, run it as a cancellable, panic-contained future, and
//! shape its result for the negotiated protocol revision.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde_json::value::RawValue;

use super::Server;
use super::dispatch::{Routed, parse_params};
use super::session::{Outbound, Session};
use crate::content::{CallToolResult, Content, Text};
use crate::context::Context;
use crate::protocol::messages::CallToolParams;
use crate::protocol::{ProtocolVersion, RequestId, RpcError, error_frame, response_frame};
use crate::registry::Arguments;

impl Server {
    pub(super) fn call_tool(
        &self,
        session: &Arc<Session>,
        id: &RequestId,
        version: ProtocolVersion,
        params: Option<&RawValue>,
        out: &Outbound,
    ) -> Result<Routed, RpcError> {
        let p: CallToolParams<'_> = parse_params(params)?;
        let tool = self.catalogue().tool(&p.name).ok_or_else(|| {
            RpcError::invalid_params(format!("unknown tool `{}`", p.name))
                .with_data(serde_json::json!({ "name": p.name }))
        })?;
        let cancel = session.begin(id).ok_or_else(|| {
            RpcError::invalid_request(format!("a request with id {id} is already in flight"))
        })?;
        let descriptor = tool.descriptor;
        let wraps_output = tool.wraps_output;
        let args = Arguments::new(p.arguments.map(ToOwned::to_owned));
        let progress_token = p.meta.and_then(|m| m.progress_token);
        let ctx = Context::new(
            Arc::clone(session),
            out.clone(),
            id.clone(),
            progress_token,
            cancel.clone(),
        );
        let session = Arc::clone(session);
        let id = id.clone();
        Ok(Routed::Deferred(Box::pin(async move {
            let call = CatchUnwind((descriptor.call)(ctx, args));
            let outcome = tokio::select! {
                // Cancellation is looked at first: a handler that notices it and returns
                // must not be answered either. The client gave up on the request, and the
                // cancellation section of the specification asks for no response.
                biased;
                () = cancel.cancelled() => return None,
                outcome = call => outcome,
            };
            session.finish(&id);
            let mut result = outcome.unwrap_or_else(|panic| {
                let message = panic_message(&*panic);
                tracing::error!(tool = descriptor.name, panic = message, "tool panicked");
                CallToolResult::error(format!(
                    "tool `{}` failed with an internal error",
                    descriptor.name
                ))
            });
            if let Some(defect) = result.internal_error.take() {
                tracing::error!(tool = descriptor.name, defect, "tool result is unusable");
                return Some(error_frame(Some(&id), &RpcError::internal(defect)));
            }
            shape_result(&mut result, version, wraps_output);
            // A CallToolResult holds strings and JSON values only: it always serialises.
            let json = serde_json::to_string(&result).unwrap_or_default();
            Some(response_frame(&id, &json))
        })))
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
        let structured = if wraps_output {
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
}

/// Runs a future, turning a panic inside it into an error value.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string panic payload)")
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
