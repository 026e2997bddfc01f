//! `cargo mcp install CLIENT [TARGET]`: the server written into a client's configuration
//! file, merged with what is there, the old file kept as a backup.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgMatches;

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
        let host = target
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split(['/', ':']).next())
            .unwrap_or("server");
        (host.to_owned(), app.url_entry(target, &headers)?)
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

    let path = match m.get_one::<String>("config") {
        Some(file) => PathBuf::from(file),
        None => app.config_path(m.get_flag("project"), &env)?,
    };
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Failure::Failed(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let (content, replaced) = merge(existing.as_deref(), app, &name, entry, &path)?;

    if m.get_flag("dry-run") {
        eprintln!(
            "cargo mcp: --dry-run: would {} `{name}` in {}; nothing was written:",
            if replaced { "replace" } else { "add" },
            path.display()
        );
        print!("{content}");
        return Ok(());
    }
    let backup = write(&path, existing.is_some(), &content)?;
    eprintln!(
        "cargo mcp: {} `{name}` in {}",
        if replaced { "replaced" } else { "added" },
        path.display()
    );
    if let Some(backup) = backup {
        eprintln!(
            "cargo mcp: the previous file is kept as {}",
            backup.display()
        );
    }
    eprintln!("cargo mcp: restart {} to load it", app.title());
    Ok(())
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

/// The new file's text, and whether an entry of that name was replaced.
fn merge(
    existing: Option<&str>,
    app: ClientApp,
    name: &str,
    entry: Json,
    path: &Path,
) -> Result<(String, bool), Failure> {
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
    let replaced = servers.set(name, entry);
    let mut text = serde_json::to_string_pretty(&config)
        .map_err(|e| Failure::Failed(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    Ok((text, replaced))
}

/// Writes `content` to `path` through a temporary file renamed into place, after copying
/// the old file (when there is one) to a backup whose name is returned.
fn write(path: &Path, existed: bool, content: &str) -> Result<Option<PathBuf>, Failure> {
    let fail = |what: &str, p: &Path, e: std::io::Error| {
        Failure::Failed(format!(
            "cannot {what} {}: {e}; nothing was changed",
            p.display()
        ))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail("create", dir, e))?;
    }
    let backup = if existed {
        let backup = backup_path(path);
        std::fs::copy(path, &backup).map_err(|e| fail("back up", path, e))?;
        Some(backup)
    } else {
        None
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".cargo-mcp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, content).map_err(|e| fail("write", &temporary, e))?;
    if existed && let Ok(metadata) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temporary, metadata.permissions());
    }
    if let Err(e) = std::fs::rename(&temporary, path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(fail("replace", path, e));
    }
    Ok(backup)
}

/// `FILE.bak`, or `FILE.bak.2`, `FILE.bak.3`… when that is taken.
fn backup_path(path: &Path) -> PathBuf {
    let with = |suffix: &str| {
        let mut name: OsString = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let first = with(".bak");
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| with(&format!(".bak.{n}")))
        .find(|p| !p.exists())
        .expect("some number is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_other_entries_and_keys_in_their_order() {
        let existing = r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}, "z": 1}"#;
        let entry = ClientApp::Cursor.command_entry("/bin/srv", &["--v".into()], &[]);
        let (text, replaced) = merge(
            Some(existing),
            ClientApp::Cursor,
            "srv",
            entry,
            Path::new("f"),
        )
        .unwrap();
        assert!(!replaced);
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
