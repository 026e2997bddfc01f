//! The command line: every subcommand, its arguments, and its help with an example.

use clap::{Arg, ArgAction, Command};

const EXIT_STATUS: &str = "\
Exit status:
  0  success
  1  the tool answered with an error (isError), lint found errors, or the command failed
  2  the command line is wrong
  3  the server answered with a protocol error (a JSON-RPC error)
  4  the server could not be built, started or reached, or the connection broke";

const TARGET_HELP: &str = "The server: a URL (http://…/mcp), a command line run over stdio \
(\"./target/debug/quickstart --flag\"), or `.` for the binary of the crate in the current \
directory (built first)";

/// The whole command.
pub(crate) fn command() -> Command {
    Command::new("cargo-mcp")
        .bin_name("cargo mcp")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Scaffold, run, call, lint and install MCP servers written with mcp-runtime")
        .after_help(format!(
            "Examples:\n  cargo mcp new hello-mcp\n  cd hello-mcp && cargo mcp dev --inspector\n  \
             cargo mcp call . add a=2 b=3\n  cargo mcp install claude-desktop\n\n{EXIT_STATUS}"
        ))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(new())
        .subcommand(dev())
        .subcommand(list())
        .subcommand(call())
        .subcommand(read())
        .subcommand(prompt())
        .subcommand(lint())
        .subcommand(install())
}

fn target(required: bool) -> Arg {
    let arg = Arg::new("target").value_name("TARGET").help(TARGET_HELP);
    if required {
        arg.required(true)
    } else {
        arg.default_value(".")
    }
}

/// Options every subcommand that talks to a server shares.
fn connection(command: Command) -> Command {
    command
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print the server's answer as JSON, for scripts"),
        )
        .arg(header(
            "An HTTP header to send with every request (URL targets)",
        ))
        .arg(env(
            "An environment variable for the server process (command targets)",
        ))
        .arg(
            Arg::new("timeout")
                .long("timeout")
                .value_name("SECONDS")
                .value_parser(clap::value_parser!(u64))
                .default_value("60")
                .help("How long to wait for each answer"),
        )
        .arg(package())
        .arg(bin())
}

/// `-H "NAME: VALUE"`, any number of times.
fn header(help: &'static str) -> Arg {
    Arg::new("header")
        .long("header")
        .short('H')
        .value_name("NAME: VALUE")
        .action(ArgAction::Append)
        .help(help)
}

/// `-e KEY=VALUE`, any number of times.
fn env(help: &'static str) -> Arg {
    Arg::new("env")
        .long("env")
        .short('e')
        .value_name("KEY=VALUE")
        .action(ArgAction::Append)
        .help(help)
}

/// The server's own arguments, after `--`.
fn server_args(help: &'static str) -> Arg {
    Arg::new("args")
        .value_name("ARGS")
        .num_args(0..)
        .last(true)
        .help(help)
}

fn package() -> Arg {
    Arg::new("package")
        .long("package")
        .short('p')
        .value_name("SPEC")
        .help("The package whose binary `.` means, in a workspace")
}

fn bin() -> Arg {
    Arg::new("bin")
        .long("bin")
        .value_name("NAME")
        .help("The binary `.` means, when the package has several")
}

fn examples(command: Command, examples: &str) -> Command {
    command.after_help(format!("Examples:\n{examples}\n\n{EXIT_STATUS}"))
}

fn new() -> Command {
    examples(
        Command::new("new")
            .about("Create a new MCP server crate that builds, passes its own test and runs")
            .arg(
                Arg::new("name")
                    .value_name("NAME")
                    .required(true)
                    .help("The crate's name; its folder is created in the current directory"),
            )
            .arg(
                Arg::new("http")
                    .long("http")
                    .action(ArgAction::SetTrue)
                    .help("A server that also serves Streamable HTTP (`--http ADDR`)"),
            )
            .arg(
                Arg::new("path")
                    .long("path")
                    .value_name("DIR")
                    .help("Create the crate in DIR instead of ./NAME"),
            )
            .arg(
                Arg::new("runtime-path")
                    .long("runtime-path")
                    .value_name("DIR")
                    .help("Depend on the mcp-runtime crate in DIR (default: the checkout this command was built from)"),
            )
            .arg(
                Arg::new("runtime-git")
                    .long("runtime-git")
                    .value_name("URL")
                    .conflicts_with("runtime-path")
                    .help("Depend on mcp-runtime from this git repository"),
            ),
        "  cargo mcp new hello-mcp\n  cargo mcp new notes-server --http\n  \
         cd hello-mcp && cargo test && cargo run",
    )
}

fn dev() -> Command {
    examples(
        Command::new("dev")
            .about("Build and run this crate's server; rebuild and restart it when a file changes")
            .long_about(
                "Build and run the server of the crate in the current directory, watch the \
                 package's files, and rebuild and restart the server when one changes.\n\n\
                 Without --http, `cargo mcp dev` is itself a server over standard input and \
                 output: give it to a client as the command to run. Across a restart it \
                 replays the client's `initialize` to the new server and tells the client \
                 that the tools, prompts and resources changed; requests in flight at the \
                 restart get an error. With --http ADDR the server serves Streamable HTTP at \
                 ADDR and is restarted there. A failed build leaves the running server as it \
                 is.",
            )
            .arg(
                Arg::new("http")
                    .long("http")
                    .value_name("ADDR")
                    .help("Run the server with `--http ADDR` (its `serve()` reads the flag)"),
            )
            .arg(
                Arg::new("inspector")
                    .long("inspector")
                    .action(ArgAction::SetTrue)
                    .help(
                        "Also start the MCP Inspector connected to the server \
                         (`npx -y @modelcontextprotocol/inspector@2`, or the command in \
                         MCP_INSPECTOR)",
                    ),
            )
            .arg(package())
            .arg(bin())
            .arg(server_args("Arguments for the server, after `--`")),
        "  cargo mcp dev --inspector\n  cargo mcp dev --http 127.0.0.1:8000 --inspector\n  \
         cargo mcp dev -- --db notes.db",
    )
}

fn list() -> Command {
    examples(
        connection(
            Command::new("list")
                .about("List a server's tools, prompts, resources and resource templates")
                .arg(target(true)),
        ),
        "  cargo mcp list ./target/debug/quickstart\n  cargo mcp list http://127.0.0.1:8000/mcp --json",
    )
}

fn call() -> Command {
    examples(
        connection(
            Command::new("call")
                .about("Call a tool and print its result")
                .arg(target(true))
                .arg(
                    Arg::new("tool")
                        .value_name("TOOL")
                        .required(true)
                        .help("The tool's name"),
                )
                .arg(
                    Arg::new("arguments")
                        .value_name("KEY=VALUE")
                        .num_args(0..)
                        .help(
                            "The arguments: `KEY=VALUE` (read as the tool's schema says: a \
                             string stays text, anything else is read as JSON), or \
                             `KEY:=JSON` for JSON as written",
                        ),
                )
                .arg(
                    Arg::new("args-json")
                        .long("args")
                        .value_name("JSON")
                        .help("Every argument as one JSON object"),
                ),
        ),
        "  cargo mcp call ./target/debug/quickstart add a=2 b=3\n  \
         cargo mcp call . statistics numbers:='[1, 2, 3]' --json\n  \
         cargo mcp call http://127.0.0.1:8000/mcp greet name=Ada",
    )
}

fn read() -> Command {
    examples(
        connection(
            Command::new("read")
                .about("Read a resource and print its contents")
                .arg(target(true))
                .arg(
                    Arg::new("uri")
                        .value_name("URI")
                        .required(true)
                        .help("The resource's URI"),
                ),
        ),
        "  cargo mcp read ./target/debug/everything test://static-text",
    )
}

fn prompt() -> Command {
    examples(
        connection(
            Command::new("prompt")
                .about("Get a prompt and print its messages")
                .arg(target(true))
                .arg(
                    Arg::new("name")
                        .value_name("PROMPT")
                        .required(true)
                        .help("The prompt's name"),
                )
                .arg(
                    Arg::new("arguments")
                        .value_name("KEY=VALUE")
                        .num_args(0..)
                        .help("The prompt's arguments (always text)"),
                ),
        ),
        "  cargo mcp prompt ./target/debug/everything test_prompt_with_arguments arg1=a arg2=b\n  \
         cargo mcp prompt . code_review code='fn main() {}' --json",
    )
}

fn lint() -> Command {
    examples(
        connection(
            Command::new("lint")
                .about(
                    "Check every tool's name, description and schemas against every known client",
                )
                .long_about(
                    "Lists the server's tools and checks each one's name, description and \
                     JSON Schemas under the default profile and the profile of every client \
                     in mcp-runtime's client table (Claude, Gemini, Cursor…): an error means \
                     that client may refuse the tool, a warning that part of its meaning is \
                     only kept in words. Exits with 1 when there are errors.",
                )
                .arg(target(false)),
        ),
        "  cargo mcp lint\n  cargo mcp lint ./target/debug/openapi --json",
    )
}

fn install() -> Command {
    examples(
        Command::new("install")
            .about("Write a server into an MCP client's configuration file")
            .long_about(
                "Adds the server to the configuration file of an MCP client, at the place \
                 that client documents for this system, merging with what is there: other \
                 entries are kept, an entry of the same name is updated (its command or URL, \
                 arguments, variables and headers; fields of your own such as `trust` or \
                 `timeout` stay), and the old file is kept beside it as FILE.bak (numbered \
                 when there is one already). \
                 --dry-run prints the file that would be written and changes nothing.\n\n\
                 Files: claude-desktop claude_desktop_config.json in Claude's folder \
                 (macOS ~/Library/Application Support/Claude, Windows %APPDATA%\\Claude, \
                 elsewhere ~/.config/Claude); claude-code ~/.claude.json (--project: \
                 .mcp.json); cursor ~/.cursor/mcp.json (--project: .cursor/mcp.json); vscode \
                 the user profile's mcp.json (--project: .vscode/mcp.json); gemini-cli \
                 ~/.gemini/settings.json (--project: .gemini/settings.json).",
            )
            .arg(
                Arg::new("client")
                    .value_name("CLIENT")
                    .required(true)
                    .value_parser([
                        "claude-desktop",
                        "claude-code",
                        "cursor",
                        "vscode",
                        "gemini-cli",
                    ])
                    .help("The client whose configuration to change"),
            )
            .arg(target(false).help(
                "The server: `.` for the crate in the current directory (built in release \
                 mode first), a command, or a URL",
            ))
            .arg(
                Arg::new("name")
                    .long("name")
                    .value_name("NAME")
                    .help("The entry's name (default: the package's, the command's or the host's)"),
            )
            .arg(env(
                "An environment variable the client sets for the server",
            ))
            .arg(header("An HTTP header the client sends (URL targets)"))
            .arg(
                Arg::new("project")
                    .long("project")
                    .action(ArgAction::SetTrue)
                    .help(
                        "Write the project's file in the current directory instead of the user's",
                    ),
            )
            .arg(
                Arg::new("config")
                    .long("config")
                    .value_name("FILE")
                    .help("Write this file instead of the client's usual one"),
            )
            .arg(
                Arg::new("dry-run")
                    .long("dry-run")
                    .action(ArgAction::SetTrue)
                    .help("Print what would be written; change nothing"),
            )
            .arg(package())
            .arg(bin())
            .arg(server_args(
                "Arguments the client passes to the server, after `--`",
            )),
        "  cargo mcp install claude-desktop\n  \
         cargo mcp install cursor ./target/release/notes --env NOTES_DB=/data/notes.db\n  \
         cargo mcp install claude-code http://127.0.0.1:8000/mcp --name notes --project\n  \
         cargo mcp install vscode --dry-run -- --verbose",
    )
}
