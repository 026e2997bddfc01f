//! Who may call what: a [`Policy`] the server consults before every tool call, made of named
//! stages — allow and deny lists, scopes a caller's token must grant, predicates of your
//! own. The first stage that refuses ends the call with a tool error whose `_meta` says
//! `permission_denied` and names the stage, so a client can tell it from a failure of the
//! tool.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, json};

use crate::auth::AuthInfo;
use crate::content::CallToolResult;
use crate::protocol::ERROR_META_KEY;
use crate::protocol::ToolAnnotations;
use crate::schema::name_matches;

/// The machine-readable code of a refusal, in `_meta["mcp-runtime/error"].code`.
pub const PERMISSION_DENIED: &str = "permission_denied";

/// One tool call, as a policy sees it before it runs.
#[derive(Debug)]
pub struct CallRequest<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The tool's behaviour hints (`destructive`, `read_only`, …).
    pub annotations: &'a ToolAnnotations,
    /// Who calls, when the transport authenticated the request.
    pub caller: Option<&'a AuthInfo>,
    arguments: Option<&'a RawValue>,
}

impl<'a> CallRequest<'a> {
    pub(crate) fn new(
        tool: &'a str,
        annotations: &'a ToolAnnotations,
        caller: Option<&'a AuthInfo>,
        arguments: Option<&'a RawValue>,
    ) -> Self {
        CallRequest {
            tool,
            annotations,
            caller,
            arguments,
        }
    }

    /// The call's arguments read into `T` (`None` when they do not fit it).
    pub fn arguments<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(self.arguments.map_or("{}", RawValue::get)).ok()
    }

    /// Whether the caller's token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.caller
            .is_some_and(|c| c.scopes.iter().any(|s| s == scope))
    }
}

/// Why a stage refused a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The stage that refused.
    pub stage: String,
    /// Why, for the model and for people.
    pub reason: String,
}

impl Refusal {
    /// The tool error the client receives.
    pub fn into_result(self, tool: &str) -> CallToolResult {
        let mut meta = Map::new();
        meta.insert(
            ERROR_META_KEY.into(),
            json!({ "code": PERMISSION_DENIED, "stage": self.stage, "tool": tool, "reason": self.reason }),
        );
        CallToolResult {
            meta: Some(meta),
            ..CallToolResult::error(format!(
                "permission denied: `{tool}` may not be called ({}: {})",
                self.stage, self.reason
            ))
        }
    }
}

type Check = Box<dyn Fn(&CallRequest<'_>) -> Result<(), String> + Send + Sync>;

/// The future of an asynchronous stage.
pub type StageFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>;

type AsyncCheck = Box<dyn Fn(OwnedCall) -> StageFuture + Send + Sync>;

/// One tool call, owned, as an asynchronous stage sees it (it may keep it across `.await`s).
#[derive(Clone, Debug)]
pub struct OwnedCall {
    /// The tool's name.
    pub tool: String,
    /// The tool's behaviour hints.
    pub annotations: ToolAnnotations,
    /// Who calls, when the transport authenticated the request.
    pub caller: Option<AuthInfo>,
    /// The call's arguments as the client sent them (`null` when it sent none).
    pub arguments: serde_json::Value,
}

impl OwnedCall {
    pub(crate) fn of(call: &CallRequest<'_>) -> OwnedCall {
        OwnedCall {
            tool: call.tool.to_owned(),
            annotations: *call.annotations,
            caller: call.caller.cloned(),
            arguments: call
                .arguments
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or(serde_json::Value::Null),
        }
    }

    /// Whether the caller's token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.caller
            .as_ref()
            .is_some_and(|c| c.scopes.iter().any(|s| s == scope))
    }
}

enum Stage {
    Sync(Check),
    Async(AsyncCheck),
}

/// The stages a tool call passes before it runs, in the order they were added.
///
/// ```
/// use mcp_runtime::policy::Policy;
///
/// let policy = Policy::new()
///     .deny_tools(["drop_*"])
///     .require_scopes("admin_*", ["admin"])
///     .check("no_destructive_for_guests", |call| {
///         let guest = call.caller.is_none_or(|c| c.subject == "guest");
///         if guest && call.annotations.destructive == Some(true) {
///             return Err("guests may not run destructive tools".into());
///         }
///         Ok(())
///     });
/// let server = mcp_runtime::server!().auto_register(false).policy(policy).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Default)]
pub struct Policy {
    stages: Vec<(String, Stage)>,
    /// Whether `tools/list` leaves out the tools this policy refuses the caller.
    hide_denied: bool,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.stages.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Policy").field("stages", &names).finish()
    }
}

impl Policy {
    /// A policy with no stage: every call passes.
    pub fn new() -> Self {
        Policy::default()
    }

    /// Only these tools may be called (stage `allow_list`). Patterns are compared without
    /// regard to ASCII case; `*` stands for any run of characters.
    pub fn allow_tools(self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        self.check("allow_list", move |call| {
            if patterns.iter().any(|p| name_matches(p, call.tool)) {
                Ok(())
            } else {
                Err("the tool is not on the allow list".into())
            }
        })
    }

    /// These tools may never be called (stage `deny_list`).
    pub fn deny_tools(self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        self.check("deny_list", move |call| {
            match patterns.iter().find(|p| name_matches(p, call.tool)) {
                Some(p) => Err(format!("the tool matches `{p}` on the deny list")),
                None => Ok(()),
            }
        })
    }

    /// Tools matching `pattern` need a caller whose token grants every one of `scopes`
    /// (stage `scopes`; see the HTTP transport's `auth`).
    pub fn require_scopes(
        self,
        pattern: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let pattern = pattern.into();
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        self.check("scopes", move |call| {
            if !name_matches(&pattern, call.tool) {
                return Ok(());
            }
            let missing: Vec<&str> = scopes
                .iter()
                .filter(|s| !call.has_scope(s))
                .map(String::as_str)
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the caller lacks the scope(s) {}",
                    missing.join(", ")
                ))
            }
        })
    }

    /// A stage of your own, named `name`: `Err(reason)` refuses the call.
    pub fn check(
        mut self,
        name: impl Into<String>,
        predicate: impl Fn(&CallRequest<'_>) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.stages
            .push((name.into(), Stage::Sync(Box::new(predicate))));
        self
    }

    /// A stage of your own that may wait (ask a permission service, read a database):
    /// `Err(reason)` refuses the call. Stages run in the order they were added, the
    /// asynchronous ones included; a policy with one is consulted as the call begins, before
    /// the tool runs.
    ///
    /// ```
    /// use mcp_runtime::policy::Policy;
    ///
    /// let policy = Policy::new().check_async("quota", |call| async move {
    ///     let used = 3; // e.g. looked up for `call.caller`
    ///     if used >= 3 && call.tool == "send_mail" {
    ///         return Err("the caller's mail quota is spent".to_owned());
    ///     }
    ///     Ok(())
    /// });
    /// # let _ = policy;
    /// ```
    pub fn check_async<F, Fut>(mut self, name: impl Into<String>, predicate: F) -> Self
    where
        F: Fn(OwnedCall) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        let check: AsyncCheck = Box::new(move |call| Box::pin(predicate(call)));
        self.stages.push((name.into(), Stage::Async(check)));
        self
    }

    /// Leaves out of each caller's `tools/list` the tools this policy refuses that caller,
    /// judged by the synchronous stages without arguments (a stage that refuses by argument,
    /// and an asynchronous stage, are judged at the call).
    /// Pages stay full; a call to a hidden tool is still refused as it would be.
    pub fn hide_denied(mut self) -> Self {
        self.hide_denied = true;
        self
    }

    pub(crate) fn hides_denied(&self) -> bool {
        self.hide_denied
    }

    /// Whether some stage is asynchronous.
    pub(crate) fn waits(&self) -> bool {
        self.stages
            .iter()
            .any(|(_, stage)| matches!(stage, Stage::Async(_)))
    }

    /// Runs the stages in order; the first refusal wins. Asynchronous stages are not run
    /// here (see [`Policy::evaluate_async`]).
    pub fn evaluate(&self, call: &CallRequest<'_>) -> Result<(), Refusal> {
        for (stage, check) in &self.stages {
            if let Stage::Sync(check) = check {
                check(call).map_err(|reason| Refusal {
                    stage: stage.clone(),
                    reason,
                })?;
            }
        }
        Ok(())
    }

    /// Runs every stage in order, the asynchronous ones included; the first refusal wins.
    pub async fn evaluate_async(&self, call: OwnedCall) -> Result<(), Refusal> {
        let arguments = serde_json::value::to_raw_value(&call.arguments).ok();
        for (name, stage) in &self.stages {
            let verdict = match stage {
                Stage::Sync(check) => check(&CallRequest::new(
                    &call.tool,
                    &call.annotations,
                    call.caller.as_ref(),
                    arguments.as_deref(),
                )),
                Stage::Async(check) => check(call.clone()).await,
            };
            verdict.map_err(|reason| Refusal {
                stage: name.clone(),
                reason,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(tool: &'a str, caller: Option<&'a AuthInfo>) -> CallRequest<'a> {
        CallRequest::new(tool, &ToolAnnotations::NONE, caller, None)
    }

    #[test]
    fn the_first_stage_that_refuses_names_itself() {
        let policy = Policy::new()
            .allow_tools(["read_*", "drop_table"])
            .deny_tools(["drop_*"])
            .require_scopes("read_secrets", ["secrets"]);
        assert!(policy.evaluate(&call("read_notes", None)).is_ok());
        assert_eq!(
            policy
                .evaluate(&call("write_notes", None))
                .unwrap_err()
                .stage,
            "allow_list"
        );
        assert_eq!(
            policy
                .evaluate(&call("drop_table", None))
                .unwrap_err()
                .stage,
            "deny_list"
        );
        let refusal = policy.evaluate(&call("read_secrets", None)).unwrap_err();
        assert_eq!(refusal.stage, "scopes");
        assert!(refusal.reason.contains("secrets"));
        let admin = AuthInfo::new("ada").scopes(["secrets"]);
        assert!(policy.evaluate(&call("read_secrets", Some(&admin))).is_ok());
    }

    #[test]
    fn a_refusal_is_a_tool_error_with_a_machine_readable_code() {
        let result = Refusal {
            stage: "deny_list".into(),
            reason: "no".into(),
        }
        .into_result("drop_table");
        assert!(result.is_error);
        let meta = &result.meta.unwrap()[ERROR_META_KEY];
        assert_eq!(meta["code"], PERMISSION_DENIED);
        assert_eq!(meta["stage"], "deny_list");
    }
}
