//! `completion/complete`: suggestions for a prompt argument or a template variable.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::Deserialize;

use super::Server;
use super::request::Request;
use super::request::panic_message;
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
    /// `completion/complete`: the suggestions for one prompt argument or template variable.
    pub(super) fn complete_argument(&self, req: &Request<'_>) -> Result<String, RpcError> {
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
