//! The client the official conformance suite judges in client mode
//! (`tests/conformance/client`): `conformance-client URL`, with the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` (2025-11-25
//! when unset) and the scenario's settings in `MCP_CONFORMANCE_CONTEXT`. Each scenario does
//! what a client of such a server does, through `mcp_runtime::client` alone.

use std::process::ExitCode;

use mcp_runtime::client::oauth::{OAuth, exchange_id_token, follow_redirect};
use mcp_runtime::client::{CallError, Client, ClientBuilder, Era};
use mcp_runtime::protocol::ProtocolVersion;
use mcp_runtime::serde_json::{Map, Value, json};

/// The client ID metadata document the suite's authorization servers expect.
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect the suite's authorization servers send the code to (nothing listens there:
/// the redirect is read from the authorization endpoint's answer).
const REDIRECT: &str = "http://localhost:3000/callback";

fn main() -> ExitCode {
    let url = std::env::args().next_back().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version =
        std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into());
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| mcp_runtime::serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match runtime.block_on(run(&url, &scenario, &version, &context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance-client: {scenario}: {error}");
            ExitCode::FAILURE
        }
    }
}

fn builder(version: &str, scenario: &str, context: &Value) -> ClientBuilder {
    let mut builder = Client::builder()
        .name("mcp-runtime-conformance-client", "1.0.0")
        .on_elicitation(|request| async move { Ok(accept_with_defaults(&request)) });
    builder = if version == "2026-07-28" {
        builder.era(Era::Stateless)
    } else {
        let version = version
            .parse::<ProtocolVersion>()
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        builder.era(Era::Handshake).protocol_version(version)
    };
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(scenario, context));
    }
    builder
}

/// The OAuth settings a scenario calls for: the authorization code flow signed in by
/// following the authorization server's redirect, or a grant without a person.
fn oauth(scenario: &str, context: &Value) -> OAuth {
    let text = |key: &str| context[key].as_str().unwrap_or_default().to_owned();
    match scenario {
        "auth/client-credentials-basic" => {
            OAuth::client_credentials(text("client_id"), text("client_secret"))
        }
        "auth/client-credentials-jwt" => {
            OAuth::private_key_jwt(text("client_id"), &text("private_key_pem"))
                .unwrap_or_else(|e| panic!("the scenario's key: {e}"))
        }
        "auth/cross-app-access-complete-flow" | "auth/enterprise-managed-authorization" => {
            let (endpoint, id_token, idp_client) = (
                text("idp_token_endpoint"),
                text("idp_id_token"),
                text("idp_client_id"),
            );
            OAuth::jwt_bearer(
                text("client_id"),
                Some(text("client_secret")),
                move |request| {
                    let (endpoint, id_token, idp_client) =
                        (endpoint.clone(), id_token.clone(), idp_client.clone());
                    async move {
                        exchange_id_token(
                            &endpoint,
                            &id_token,
                            Some(&idp_client),
                            &request.issuer,
                            request.resource.as_deref(),
                        )
                        .await
                    }
                },
            )
        }
        "auth/wif-jwt-bearer" => {
            let assertion = text("valid_jwt");
            OAuth::jwt_bearer(text("client_id"), None, move |_request| {
                let assertion = assertion.clone();
                async move { Ok(assertion) }
            })
        }
        _ => {
            let mut oauth = OAuth::new()
                .client_name("mcp-runtime conformance client")
                .client_metadata_url(METADATA_DOCUMENT)
                .on_authorize(REDIRECT, |url, _redirect| follow_redirect(url));
            if let Some(id) = context["client_id"].as_str() {
                oauth = oauth.client_id(id, context["client_secret"].as_str().map(str::to_owned));
            }
            if scenario.starts_with("auth/dpop") {
                oauth = oauth.dpop();
            }
            oauth
        }
    }
}

/// Accepts an elicitation with every field at its schema's default (SEP-1034), or a value of
/// its type when it has none.
fn accept_with_defaults(request: &Value) -> Value {
    let mut content = Map::new();
    if let Some(properties) = request["requestedSchema"]["properties"].as_object() {
        for (name, property) in properties {
            let value = match (&property["default"], property["type"].as_str()) {
                (Value::Null, Some("boolean")) => json!(true),
                (Value::Null, Some("integer" | "number")) => json!(0),
                (Value::Null, _) => match property["enum"].get(0) {
                    Some(first) => first.clone(),
                    None => json!(""),
                },
                (default, _) => default.clone(),
            };
            content.insert(name.clone(), value);
        }
    }
    json!({ "action": "accept", "content": content })
}

async fn run(url: &str, scenario: &str, version: &str, context: &Value) -> Result<(), CallError> {
    let client = builder(version, scenario, context).http(url).await?;
    let tools = client.all_tools().await?;
    match scenario {
        "initialize" | "json-schema-ref-no-deref" => {}
        "tools_call" => {
            client
                .call_tool("add_numbers", json!({ "a": 5, "b": 3 }))
                .await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
        }
        "http-standard-headers" => {
            if let Some(tool) = tools.first() {
                client.call_tool(&tool.name, json!({})).await?;
            }
            if let Some(resource) = client.all_resources().await?.first() {
                client.read_resource(&resource.uri).await?;
            }
            if let Some(prompt) = client.all_prompts().await?.first() {
                client.get_prompt(&prompt.name, Map::new()).await?;
            }
        }
        "http-custom-headers" => {
            for call in context["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, call["arguments"].clone()).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // The client left out the tools whose header marks are invalid.
            for tool in &tools {
                client
                    .call_tool(&tool.name, json!({ "region": "us-west1" }))
                    .await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let schema = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .map(|t| t.input_schema.clone())
                .unwrap_or_default();
            client
                .call_tool("json_schema_echo", json!({ "schema": schema }))
                .await?;
        }
        scenario if scenario.starts_with("auth/") => {
            client.call_tool("test-tool", json!({})).await?;
        }
        _ => {}
    }
    client.close().await;
    Ok(())
}
