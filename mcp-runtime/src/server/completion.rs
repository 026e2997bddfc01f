//! `completion/complete`: suggestions for a prompt argument or a template variable.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::Deserialize;

use super::Server;
use super::request::panic_message;
use super::request::{Request, Routed};
use crate::completion::{Completion, CompletionContext};
use crate::protocol::RpcError;
use crate::registry::CompletionDescriptor;

#[derive(Deserialize)]
struct CompleteParams {
    #[serde(rename = "ref")]
    reference: Reference,
    argument: ArgumentValue,
    #[serde(default)]
    context: Option<ContextArguments>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Deserialize)]
struct ArgumentValue {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct ContextArguments {
    #[serde(default)]
    arguments: HashMap<String, String>,
}

impl Server {
    /// `completion/complete`: answered by the item's own completion function, or, for an
    /// item of a mounted server, by that server.
    pub(super) fn complete(&self, req: &Request<'_>) -> Result<Routed, RpcError> {
        let p: CompleteParams = req.params()?;
        let catalogue = self.catalogue_for(req.session, req.hidden);
        let completer = match &p.reference {
            Reference::Prompt { name } => catalogue.prompt(name).and_then(|p| p.completer.clone()),
            Reference::Resource { uri } => catalogue
                .resource_by_declared_uri(uri)
                .and_then(|r| r.completer.clone()),
        };
        let Some(completer) = completer else {
            return Ok(req.answer(self.complete_argument(req), None));
        };
        let context = CompletionContext {
            argument: p.argument.name,
            value: p.argument.value,
            arguments: p.context.map(|c| c.arguments).unwrap_or_default(),
        };
        let (ctx, cancel) = req.begin_custom(None)?;
        Ok(req.run_custom(cancel, completer(ctx, context), |outcome| {
            // A mounted server's answer is held to the same bound as the server's own.
            let completion = outcome
                .map_err(|panic| {
                    tracing::error!(panic, "completion panicked");
                    RpcError::internal("the completion function failed")
                })??
                .bounded();
            serde_json::to_string(&serde_json::json!({ "completion": completion }))
                .map_err(|e| RpcError::internal(e.to_string()))
        }))
    }

    /// `completion/complete`: the suggestions for one prompt argument or template variable.
    fn complete_argument(&self, req: &Request<'_>) -> Result<String, RpcError> {
        let p: CompleteParams = req.params()?;
        let catalogue = self.catalogue_for(req.session, req.hidden);
        let (completions, known): (&[CompletionDescriptor], bool) = match &p.reference {
            Reference::Prompt { name } => {
                let prompt = catalogue
                    .prompt(name)
                    .ok_or_else(|| RpcError::invalid_params(format!("unknown prompt `{name}`")))?;
                let d = prompt.descriptor;
                (
                    d.completions,
                    d.arguments.iter().any(|a| a.name == p.argument.name),
                )
            }
            Reference::Resource { uri } => {
                let resource = catalogue.resource_by_declared_uri(uri).ok_or_else(|| {
                    RpcError::invalid_params(format!("unknown resource template `{uri}`"))
                })?;
                let known = resource
                    .template
                    .variable_names()
                    .any(|v| v == p.argument.name);
                (resource.descriptor.completions, known)
            }
        };
        if !known {
            return Err(RpcError::invalid_params(format!(
                "no argument `{}` to complete",
                p.argument.name
            )));
        }
        let completion = match completions.iter().find(|c| c.argument == p.argument.name) {
            Some(completer) => {
                let context = CompletionContext {
                    argument: p.argument.name,
                    value: p.argument.value,
                    arguments: p.context.map(|c| c.arguments).unwrap_or_default(),
                };
                catch_unwind(AssertUnwindSafe(|| (completer.complete)(&context))).map_err(
                    |panic| {
                        tracing::error!(panic = panic_message(&*panic), "completion panicked");
                        RpcError::internal("the completion function failed")
                    },
                )?
            }
            // An argument without a completion function has no suggestions.
            None => Completion::default(),
        };
        serde_json::to_string(&serde_json::json!({ "completion": completion }))
            .map_err(|e| RpcError::internal(e.to_string()))
    }
}
