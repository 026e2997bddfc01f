//! `cargo mcp install CLIENT [TARGET]`: the server written into a client's configuration
//! file, merged with what is there, the old file kept as a backup.

use std::path::{Path, PathBuf};

use clap::ArgMatches;

use crate::config_file::ConfigFile;
use crate::crate_build::{self, Selection};
use crate::json::Json;
use crate::talk::{headers, key_values};
use crate::{Failure, Outcome};

/// The MCP clients whose configuration files `install` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientApp {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    GeminiCli,
}

impl ClientApp {
    fn parse(name: &str) -> ClientApp {
        match name {
            "claude-desktop" => ClientApp::ClaudeDesktop,
            "claude-code" => ClientApp::ClaudeCode,
            "cursor" => ClientApp::Cursor,
            "vscode" => ClientApp::VsCode,
            _ => ClientApp::GeminiCli,
        }
    }

    fn title(self) -> &'static str {
        match self {
            ClientApp::ClaudeDesktop => "Claude Desktop",
            ClientApp::ClaudeCode => "Claude Code",
            ClientApp::Cursor => "Cursor",
            ClientApp::VsCode => "VS Code",
            ClientApp::GeminiCli => "Gemini CLI",
        }
    }

    /// The object that holds the servers, by name.
    fn servers_key(self) -> &'static str {
        match self {
            ClientApp::VsCode => "servers",
            _ => "mcpServers",
        }
    }

    /// The file this client reads, for the user or (`project`) for the project in `cwd`.
    fn config_path(self, project: bool, env: &Env) -> Result<PathBuf, Failure> {
        if project {
            return match self {
                ClientApp::ClaudeDesktop => Err(Failure::Failed(
                    "Claude Desktop has no project configuration: drop --project".into(),
                )),
                ClientApp::ClaudeCode => Ok(env.cwd.join(".mcp.json")),
                ClientApp::Cursor => Ok(env.cwd.join(".cursor").join("mcp.json")),
                ClientApp::VsCode => Ok(env.cwd.join(".vscode").join("mcp.json")),
                ClientApp::GeminiCli => Ok(env.cwd.join(".gemini").join("settings.json")),
            };
        }
        let home = env.home()?;
        Ok(match self {
            ClientApp::ClaudeDesktop => env
                .app_config_dir()?
                .join("Claude")
                .join("claude_desktop_config.json"),
            ClientApp::ClaudeCode => home.join(".claude.json"),
            ClientApp::Cursor => home.join(".cursor").join("mcp.json"),
            ClientApp::VsCode => env
                .app_config_dir()?
                .join("Code")
                .join("User")
                .join("mcp.json"),
            ClientApp::GeminiCli => home.join(".gemini").join("settings.json"),
        })
    }

    /// The entry for a server run as a command.
    fn command_entry(self, command: &str, args: &[String], env: &[(String, String)]) -> Json {
        let mut entry = Vec::new();
        if matches!(self, ClientApp::ClaudeCode | ClientApp::VsCode) {
            entry.push(("type".to_owned(), Json::String("stdio".into())));
        }
        entry.push(("command".to_owned(), Json::String(command.to_owned())));
        if !args.is_empty() {
            let args = args.iter().map(|a| Json::String(a.clone())).collect();
            entry.push(("args".to_owned(), Json::Array(args)));
        }
        if !env.is_empty() {
            let env = env
                .iter()
                .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                .collect();
            entry.push(("env".to_owned(), Json::Object(env)));
        }
        Json::Object(entry)
    }

    /// The entry for a server at a URL (Streamable HTTP).
    fn url_entry(self, url: &str, headers: &[(String, String)]) -> Result<Json, Failure> {
        let mut entry = Vec::new();
        let url = Json::String(url.to_owned());
        match self {
            ClientApp::ClaudeDesktop => {
                return Err(Failure::Failed(
                    "Claude Desktop's configuration file holds only servers it starts itself: \
                     add a remote server in Claude Desktop under Settings → Connectors, or \
                     install a command instead of a URL"
                        .into(),
                ));
            }
            ClientApp::ClaudeCode | ClientApp::VsCode => {
                entry.push(("type".to_owned(), Json::String("http".into())));
                entry.push(("url".to_owned(), url));
            }
            ClientApp::Cursor => entry.push(("url".to_owned(), url)),
            ClientApp::GeminiCli => entry.push(("httpUrl".to_owned(), url)),
        }
        if !headers.is_empty() {
            let headers = headers
                .iter()
                .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                .collect();
            entry.push(("headers".to_owned(), Json::Object(headers)));
        }
        Ok(Json::Object(entry))
    }
}

/// Where files live: read from the environment once, so tests can point it elsewhere.
struct Env {
    cwd: PathBuf,
    home: Option<PathBuf>,
    xdg_config: Option<PathBuf>,
    appdata: Option<PathBuf>,
}

impl Env {
    fn from_process() -> Result<Env, Failure> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Ok(Env {
            cwd: std::env::current_dir()
                .map_err(|e| Failure::Failed(format!("the current directory: {e}")))?,
            home: var("HOME").or_else(|| var("USERPROFILE")),
            xdg_config: var("XDG_CONFIG_HOME"),
            appdata: var("APPDATA"),
        })
    }

    fn home(&self) -> Result<PathBuf, Failure> {
        self.home.clone().ok_or_else(|| {
            Failure::Failed("HOME is not set: pass --config FILE to name the file".into())
        })
    }

    /// The folder applications keep their settings in: `~/Library/Application Support` on
    /// macOS, `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` or `~/.config` elsewhere.
    fn app_config_dir(&self) -> Result<PathBuf, Failure> {
        if cfg!(target_os = "macos") {
            return Ok(self.home()?.join("Library").join("Application Support"));
        }
        if cfg!(windows) {
            return self.appdata.clone().ok_or_else(|| {
                Failure::Failed("APPDATA is not set: pass --config FILE to name the file".into())
            });
        }
        match &self.xdg_config {
            Some(dir) if dir.is_absolute() => Ok(dir.clone()),
            _ => Ok(self.home()?.join(".config")),
        }
    }
}

/// `cargo mcp install`.
pub(crate) async fn run(m: &ArgMatches) -> Outcome {
    let app = ClientApp::parse(m.get_one::<String>("client").expect("required"));
    let env = Env::from_process()?;
    let target = m.get_one::<String>("target").map_or(".", String::as_str);
    let server_env = key_values(m, "env")?;
    let headers = headers(m)?;
    let extra_args: Vec<String> = m
        .get_many::<String>("args")
        .into_iter()
        .flatten()
        .cloned()
        .collect();

    let is_url = target.starts_with("http://") || target.starts_with("https://");
    let (default_name, entry) = if is_url {
        if !server_env.is_empty() || !extra_args.is_empty() {
            return Err(Failure::Failed(
                "--env and arguments after `--` are for a server the client starts; a URL target is already running".into(),
            ));
        }
        (url_host(target)?, app.url_entry(target, &headers)?)
    } else {
        if !headers.is_empty() {
            return Err(Failure::Failed(
                "--header is for a URL target; a server the client starts gets --env instead"
                    .into(),
            ));
        }
        let (program, mut args, name) = if target == "." {
            eprintln!("cargo mcp: building the server in release mode…");
            let built =
                crate_build::build(Path::new("."), &Selection::from_matches(m), true).await?;
            (built.executable, Vec::new(), built.name)
        } else {
            command_words(target, &env)?
        };
        args.extend(extra_args);
        let program = program.to_string_lossy().into_owned();
        (name, app.command_entry(&program, &args, &server_env))
    };
    let name = m.get_one::<String>("name").cloned().unwrap_or(default_name);
    check_entry_name(&name)?;

    let path = match m.get_one::<String>("config") {
        Some(file) => PathBuf::from(file),
        None => app.config_path(m.get_flag("project"), &env)?,
    };
    // Read, merge and write under one lock, so that another `cargo mcp install` into the
    // same file merges with this one's result instead of writing over it. A dry run takes
    // no lock, and is refused where the install would be.
    let dry_run = m.get_flag("dry-run");
    let file = if dry_run {
        ConfigFile::find(&path)?
    } else {
        ConfigFile::lock(&path)?
    };
    let existing = file.read()?;
    if let Some(original) = &existing {
        file.check_writable(original)?;
    }
    let merged = merge(
        existing.as_ref().map(|o| o.text.as_str()),
        app,
        &name,
        entry,
        &path,
    )?;
    if dry_run {
        eprintln!(
            "cargo mcp: --dry-run: would {} `{name}` in {}; nothing was written:",
            if merged.replaced.is_some() {
                "replace"
            } else {
                "add"
            },
            path.display()
        );
        print!("{}", merged.text);
        return Ok(());
    }
    let backup = file.replace(existing.as_ref(), &merged.text)?;
    let shown = if file.target != path {
        format!("{} (a link to {})", path.display(), file.target.display())
    } else {
        path.display().to_string()
    };
    match &merged.replaced {
        None => eprintln!("cargo mcp: added `{name}` in {shown}"),
        Some(replaced) => {
            eprintln!("cargo mcp: replaced `{name}` in {shown}");
            if !replaced.kept.is_empty() {
                eprintln!(
                    "cargo mcp: kept what this install does not set: {}",
                    replaced.kept.join(", ")
                );
            }
            if !replaced.dropped.is_empty() {
                eprintln!(
                    "cargo mcp: removed {}, which a {} does not use",
                    replaced.dropped.join(", "),
                    if is_url {
                        "server at a URL"
                    } else {
                        "server the client starts"
                    }
                );
            }
        }
    }
    if let Some(backup) = backup {
        eprintln!(
            "cargo mcp: the previous file is kept as {}",
            backup.display()
        );
    }
    eprintln!("cargo mcp: restart {} to load it", app.title());
    Ok(())
}

/// The host of a URL, as the entry's default name: without the user name and password, the
/// port, or the brackets of an IPv6 address.
fn url_host(url: &str) -> Result<String, Failure> {
    let rest = url.split_once("://").map_or("", |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return Err(Failure::Failed(format!(
            "`{url}` has no host: write the server's URL, such as http://127.0.0.1:8000/mcp"
        )));
    }
    Ok(host.to_ascii_lowercase())
}

/// Refuses a name a client could not show or the user could not type back: empty, with
/// control characters (a line break would split it in every listing), or with white space
/// at either end.
fn check_entry_name(name: &str) -> Result<(), Failure> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else if name.trim() != name {
        Some("starts or ends with white space")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(Failure::Failed(format!(
            "the entry's name {} {problem}: pass --name NAME with a name such as `notes`",
            name.escape_debug()
        ))),
        None => Ok(()),
    }
}

/// The program (absolute when it is a path: a client starts it from anywhere), its
/// arguments, and the entry's default name.
fn command_words(target: &str, env: &Env) -> Result<(PathBuf, Vec<String>, String), Failure> {
    let (program, args) = crate::talk::command_words(target)?;
    let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    let mut path = PathBuf::from(program);
    if program.contains(std::path::MAIN_SEPARATOR) || program.contains('/') {
        if !path.is_absolute() {
            path = env.cwd.join(path);
        }
        if !path.is_file() {
            return Err(Failure::Failed(format!(
                "{} does not exist: build the server first, or install `.` to build it",
                path.display()
            )));
        }
        path = path.canonicalize().unwrap_or(path);
    }
    let name = Path::new(program)
        .file_stem()
        .map_or_else(|| "server".to_owned(), |s| s.to_string_lossy().into_owned());
    Ok((path, args, name))
}

/// The fields of an entry that `cargo mcp install` writes. Every other field (`trust`,
/// `timeout`, `includeTools`, `cwd`…) is the user's, and a reinstall keeps it.
const MANAGED: [&str; 7] = [
    "type", "command", "args", "env", "url", "httpUrl", "headers",
];

/// The new file, and what became of the entry.
#[derive(Debug)]
struct Merged {
    text: String,
    /// `None` when the entry was added.
    replaced: Option<Replaced>,
}

/// What a reinstall kept of the old entry and what it removed.
#[derive(Debug, Default)]
struct Replaced {
    /// The user's fields, and the variables and headers this run did not set.
    kept: Vec<String>,
    /// Managed fields that do not apply to the new kind of server.
    dropped: Vec<String>,
}

/// The new file's text, and what became of an entry of that name.
fn merge(
    existing: Option<&str>,
    app: ClientApp,
    name: &str,
    entry: Json,
    path: &Path,
) -> Result<Merged, Failure> {
    let mut config = match existing {
        Some(text) if !text.trim().is_empty() => serde_json::from_str::<Json>(text).map_err(|e| {
            Failure::Failed(format!(
                "{} is not plain JSON ({e}); nothing was changed: fix it (comments and trailing commas are not read), or pass --config to write another file",
                path.display()
            ))
        })?,
        _ => Json::Object(Vec::new()),
    };
    if !matches!(config, Json::Object(_)) {
        return Err(Failure::Failed(format!(
            "{} does not hold a JSON object; nothing was changed",
            path.display()
        )));
    }
    let key = app.servers_key();
    let servers = config.object_at(key).ok_or_else(|| {
        Failure::Failed(format!(
            "`{key}` in {} is not an object; nothing was changed",
            path.display()
        ))
    })?;
    let replaced = match servers.get(name) {
        Some(Json::Object(_)) => {
            let old = servers.object_at(name).expect("an object is there");
            Some(update_entry(old, entry))
        }
        // An entry that is not an object holds nothing of the user's to keep.
        Some(_) => {
            servers.set(name, entry);
            Some(Replaced::default())
        }
        None => {
            servers.set(name, entry);
            None
        }
    };
    let mut text = serde_json::to_string_pretty(&config)
        .map_err(|e| Failure::Failed(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    Ok(Merged { text, replaced })
}

/// The `scheme://host:port` of an entry's URL, if it has one.
fn origin_of(entry: &Json) -> Option<&str> {
    let url = ["url", "httpUrl"]
        .iter()
        .find_map(|key| match entry.get(key) {
            Some(Json::String(url)) => Some(url.as_str()),
            _ => None,
        })?;
    let start = url.find("://").map_or(0, |at| at + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| start + at);
    Some(&url[..end])
}

/// Updates the fields of `old` that cargo mcp manages from `new`, keeping the rest.
///
/// The user adds fields of their own to an entry (`trust`, `timeout`, `includeTools`, an
/// `env` variable holding a token), and reinstalling after a rebuild must not lose them.
/// Variables and headers given now are set one by one among the old ones. Fields of the
/// other kind of server are removed: a server that moved from a command to a URL must not
/// keep a `command` the client would start instead.
fn update_entry(old: &mut Json, new: Json) -> Replaced {
    let stdio = new.get("command").is_some();
    let old_stdio = old.get("command").is_some();
    let mut dropped = Vec::new();
    let mut kept = Vec::new();
    // Headers carry a token for one server: at another origin the old ones are not kept.
    if !stdio && origin_of(old) != origin_of(&new) && old.remove("headers").is_some() {
        dropped.push("`headers` (for another server's address)".to_owned());
    }
    for key in MANAGED {
        match (key, new.get(key)) {
            ("env" | "headers", Some(Json::Object(values))) => match old.object_at(key) {
                Some(old_values) => {
                    for (k, v) in values {
                        old_values.set(k, v.clone());
                    }
                    let set: Vec<&str> = values.iter().map(|(k, _)| k.as_str()).collect();
                    for k in old_values.keys() {
                        if !set.contains(&k) {
                            kept.push(format!("{key} {k}"));
                        }
                    }
                }
                None => {
                    old.set(key, Json::Object(values.clone()));
                }
            },
            (_, Some(value)) => {
                old.set(key, value.clone());
            }
            // The user's variables (or headers) for the same kind of server stay.
            ("env", None) if stdio => keep_values(old, key, &mut kept),
            ("headers", None) if !stdio => keep_values(old, key, &mut kept),
            // A `type` the user set stays while the server stays of the same kind.
            ("type", None) if stdio == old_stdio => {}
            // A command line without arguments: no old ones stay, and none is news.
            ("args", None) if stdio => {
                old.remove(key);
            }
            (_, None) => {
                if old.remove(key).is_some() {
                    dropped.push(format!("`{key}`"));
                }
            }
        }
    }
    for key in old.keys() {
        if !MANAGED.contains(&key) {
            kept.push(format!("`{key}`"));
        }
    }
    Replaced { kept, dropped }
}

fn keep_values(old: &Json, key: &str, kept: &mut Vec<String>) {
    if let Some(Json::Object(values)) = old.get(key) {
        kept.extend(values.iter().map(|(k, _)| format!("{key} {k}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_other_entries_and_keys_in_their_order() {
        let existing = r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}, "z": 1}"#;
        let entry = ClientApp::Cursor.command_entry("/bin/srv", &["--v".into()], &[]);
        let Merged { text, replaced } = merge(
            Some(existing),
            ClientApp::Cursor,
            "srv",
            entry,
            Path::new("f"),
        )
        .unwrap();
        assert!(replaced.is_none());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["mcpServers"]["other"]["command"], "x");
        assert_eq!(value["mcpServers"]["srv"]["args"][0], "--v");
        let order: Vec<usize> = ["theme", "mcpServers", "z"]
            .iter()
            .map(|k| text.find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(order.is_sorted(), "{text}");
    }

    #[test]
    fn files_that_are_not_json_are_left_alone() {
        let entry = ClientApp::VsCode.command_entry("/bin/srv", &[], &[]);
        let error = merge(
            Some("{ // comment\n}"),
            ClientApp::VsCode,
            "srv",
            entry.clone(),
            Path::new("f"),
        )
        .unwrap_err();
        assert!(format!("{error:?}").contains("nothing was changed"));
        assert!(
            merge(
                Some(r#"{"servers": []}"#),
                ClientApp::VsCode,
                "srv",
                entry,
                Path::new("f")
            )
            .is_err()
        );
    }
}
