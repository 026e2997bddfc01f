//! A server's life with its clients: what it declares (capabilities, the `initialize`
//! result of each revision, `server/discover`), the handshake, and choosing a transport from
//! the command line.

use serde_json::Value;

use super::Server;
use crate::protocol::{Implementation, ProtocolVersion};

/// Which capabilities the server declares, from what is registered when it is built.
#[derive(Clone, Copy)]
pub(crate) struct Capabilities {
    /// Whether any tool may run as a task (the tasks extension).
    pub tasks: bool,
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub completions: bool,
}

/// The `initialize` result for one revision.
pub(crate) fn initialize_result(
    info: &Implementation,
    instructions: Option<&str>,
    capabilities: Capabilities,
    extensions: &serde_json::Map<String, Value>,
    version: ProtocolVersion,
) -> String {
    let mut declared = serde_json::Map::new();
    declared.insert("logging".into(), Value::Object(Default::default()));
    if capabilities.tools {
        declared.insert("tools".into(), serde_json::json!({ "listChanged": true }));
    }
    if capabilities.prompts {
        declared.insert("prompts".into(), serde_json::json!({ "listChanged": true }));
    }
    if capabilities.resources {
        declared.insert(
            "resources".into(),
            serde_json::json!({ "subscribe": true, "listChanged": true }),
        );
    }
    if capabilities.completions && version.has_completions() {
        declared.insert("completions".into(), Value::Object(Default::default()));
    }
    // The handshake era has no `extensions`: what the server adds is experimental there.
    if !extensions.is_empty() {
        declared.insert("experimental".into(), Value::Object(extensions.clone()));
    }
    let mut server_info = info.clone();
    if !version.has_titles() {
        server_info.title = None;
    }
    if !version.has_icons() {
        server_info.description = None;
        server_info.website_url = None;
    }
    let mut result = serde_json::json!({
        "protocolVersion": version.as_str(),
        "capabilities": declared,
        "serverInfo": server_info,
    });
    if let Some(instructions) = instructions {
        result["instructions"] = instructions.into();
    }
    result.to_string()
}

/// The address of `--http ADDR` (or `--http=ADDR`), if given anywhere on the command line;
/// the program's other arguments are its own.
fn http_address(mut args: impl Iterator<Item = String>) -> crate::Result<Option<String>> {
    while let Some(arg) = args.next() {
        if let Some(addr) = arg.strip_prefix("--http=") {
            return Ok(Some(addr.to_owned()));
        }
        if arg == "--http" {
            return match args.next() {
                Some(addr) if !addr.starts_with("--") => Ok(Some(addr)),
                _ => Err(crate::Error::Usage(
                    "--http needs an address, e.g. --http 127.0.0.1:8080".into(),
                )),
            };
        }
    }
    Ok(None)
}

/// Whether this process's command line names an HTTP address (`--http ADDR`), as
/// [`Server::serve`] reads it: `#[mcp_runtime::main]` then picks the multi-threaded
/// scheduler.
#[cfg(feature = "multi-thread")]
pub(crate) fn http_requested() -> bool {
    let args = std::env::args_os().skip(1);
    matches!(
        http_address(args.map(|a| a.to_string_lossy().into_owned())),
        Ok(Some(_))
    )
}

impl Server {
    /// Serves as the command line says: on standard input and output by default, on
    /// Streamable HTTP at `/mcp` with `--http ADDR` anywhere among the arguments (feature
    /// `http`). Other arguments are the program's own and are not looked at.
    pub async fn serve(&self) -> crate::Result<()> {
        match http_address(std::env::args().skip(1))? {
            None => self.serve_stdio().await,
            #[cfg(feature = "http")]
            Some(addr) => self.serve_http(addr).await,
            #[cfg(not(feature = "http"))]
            Some(_) => Err(crate::Error::Usage(
                "this server was built without HTTP: enable the `http` feature of mcp-runtime"
                    .into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::http_address;

    fn parse(args: &[&str]) -> Result<Option<String>, String> {
        http_address(args.iter().map(|a| (*a).to_owned())).map_err(|e| e.to_string())
    }

    #[test]
    fn the_command_line_picks_the_transport() {
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(
            parse(&["--http", "127.0.0.1:1"]),
            Ok(Some("127.0.0.1:1".into()))
        );
        assert_eq!(parse(&["--http=[::1]:2"]), Ok(Some("[::1]:2".into())));
        assert!(parse(&["--http"]).is_err());
        assert!(parse(&["--http", "--verbose"]).is_err());
        // The program's own arguments are left to it.
        assert_eq!(parse(&["--verbose"]), Ok(None));
        assert_eq!(
            parse(&["--db", "notes.db", "--http", "127.0.0.1:1"]),
            Ok(Some("127.0.0.1:1".into()))
        );
    }
}
