//! The roots fence against hostile paths: every one refused, none resolving outside the root,
//! and the ordinary paths inside it allowed; and against races: folders swapped for links
//! that lead out while files are read, written and deleted through it (by the API and by the
//! files example over real pipes), hard links to files outside, and files replaced while the
//! user is asked.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mcp_runtime::{FenceError, FileKind, PathRefused, Root, Roots};
use mcp_tests::StdioServer;
use mcp_tests::files::{self, call_tool, call_tool_answering, confirm};
use serde_json::{Value, json};

struct Sandbox {
    base: PathBuf,
    root: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let base = std::env::temp_dir()
            .join(format!("mcp-fence-{name}-{}", std::process::id()))
            .canonicalize_or_create();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("root-evil")).unwrap();
        std::fs::write(root.join("inside.txt"), "inside").unwrap();
        std::fs::write(base.join("secret.txt"), "secret").unwrap();
        std::fs::write(base.join("root-evil/file"), "evil").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
            std::os::unix::fs::symlink(base.join("secret.txt"), root.join("secret-link")).unwrap();
            std::os::unix::fs::symlink(root.join("sub"), root.join("inner")).unwrap();
            std::os::unix::fs::symlink(base.join("missing/target"), root.join("dangling")).unwrap();
        }
        Sandbox { base, root }
    }

    fn roots(&self) -> Roots {
        Roots::new(vec![Root {
            uri: format!("file://{}", self.root.display()),
            name: Some("root".into()),
        }])
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

trait CanonicalizeOrCreate {
    fn canonicalize_or_create(self) -> PathBuf;
}

impl CanonicalizeOrCreate for PathBuf {
    fn canonicalize_or_create(self) -> PathBuf {
        std::fs::create_dir_all(&self).unwrap();
        self.canonicalize().unwrap()
    }
}

fn hostile_paths(root: &Path) -> Vec<String> {
    let r = root.display();
    let mut paths: Vec<String> = [
        "../secret.txt",
        "../../etc/passwd",
        "sub/../../secret.txt",
        "sub/./../../secret.txt",
        "inner/../../secret.txt",
        "/etc/passwd",
        "/",
        "/proc/self/root/etc/passwd",
        "escape/passwd",
        "escape",
        "secret-link",
        "dangling",
        "sub\\..\\..\\secret.txt",
        "..\\secret.txt",
        "C:\\Windows\\system32\\config",
        "C:/Windows/system32",
        "\\\\server\\share\\file",
        "%2e%2e/secret.txt",
        "%2E%2E%2Fsecret.txt",
        "..%2fsecret.txt",
        "sub%5c..%5c..%5csecret.txt",
        "%252e%252e/secret.txt",
        "inside.txt%00.png",
        "file:///etc/passwd",
        "file://evil.example/etc/passwd",
        "inside.txt\0.png",
        "sub/\n/x",
        "CON",
        "sub/nul.txt",
        "aux",
        "inside.txt::$DATA",
        "inside.txt.",
        "inside.txt ",
        "....//secret.txt",
        "",
        "..",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    paths.extend([
        format!("{r}/../secret.txt"),
        format!("{r}-evil/file"),
        format!("file://{r}/../secret.txt"),
        format!("file://{r}/%2e%2e/secret.txt"),
        format!("file://{r}/sub/%2E%2E/%2E%2E/secret.txt"),
        format!("file://{r}-evil/file"),
        format!("file://{r}/escape/hosts"),
        // A query or fragment is no part of a file's name.
        format!("file://{r}/inside.txt?x=1"),
        format!("file://{r}/inside.txt#top"),
    ]);
    paths
}

#[test]
fn every_hostile_path_is_refused() {
    let sandbox = Sandbox::new("hostile");
    let roots = sandbox.roots();
    let hostile = hostile_paths(&sandbox.root);
    assert!(hostile.len() >= 30, "the suite has {} paths", hostile.len());
    for path in &hostile {
        match roots.resolve(path) {
            Ok(resolved) => panic!("{path:?} was allowed as {}", resolved.display()),
            Err(PathRefused { roots, reason, .. }) => {
                assert!(!reason.is_empty());
                assert_eq!(roots, [sandbox.root.display().to_string()], "{path:?}");
            }
        }
    }
    // Nothing outside the root changed.
    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("secret.txt")).unwrap(),
        "secret"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("root-evil/file")).unwrap(),
        "evil"
    );
}

#[test]
fn ordinary_paths_inside_the_root_are_allowed() {
    let sandbox = Sandbox::new("ordinary");
    let roots = sandbox.roots();
    let r = sandbox.root.display();
    for (path, relative) in [
        ("inside.txt", "inside.txt"),
        ("./inside.txt", "inside.txt"),
        ("sub", "sub"),
        ("sub/new-file.txt", "sub/new-file.txt"),
        ("sub/deeper/not-yet.txt", "sub/deeper/not-yet.txt"),
        ("inner/x.txt", "sub/x.txt"),
        ("a b.txt", "a b.txt"),
        ("notes%20v2.txt", "notes%20v2.txt"),
        ("~/.profile", "~/.profile"),
        (&format!("{r}/inside.txt"), "inside.txt"),
        (&format!("file://{r}/sub"), "sub"),
        (&format!("file://{r}/a%20b.txt"), "a b.txt"),
        (&format!("file://{r}/why%3F%23.txt"), "why?#.txt"),
        ("why?#.txt", "why?#.txt"),
        (&format!("file://localhost{r}/inside.txt"), "inside.txt"),
    ] {
        let resolved = roots
            .resolve(path)
            .unwrap_or_else(|e| panic!("{path:?} was refused: {e}"));
        assert!(
            resolved.starts_with(&sandbox.root),
            "{path:?} → {}",
            resolved.display()
        );
        assert_eq!(resolved.relative(), Path::new(relative), "{path:?}");
    }
}

#[test]
fn with_no_file_roots_everything_is_refused() {
    let roots = Roots::new(vec![Root {
        uri: "https://example.com/".into(),
        name: None,
    }]);
    let e = roots.resolve("anything.txt").unwrap_err();
    assert!(e.to_string().contains("no file roots"), "{e}");
}

#[test]
fn a_refusal_names_the_roots_and_converts_to_a_tool_error_with_meta() {
    let sandbox = Sandbox::new("refusal");
    let e = sandbox.roots().resolve("../secret.txt").unwrap_err();
    assert!(e.to_string().contains(&sandbox.root.display().to_string()));
    let tool_error = mcp_runtime::ToolError::from(e);
    let result = tool_error.into_result();
    assert!(result.is_error);
    assert_eq!(
        result.meta.unwrap()["mcp-runtime/error"]["code"],
        "path_outside_roots"
    );
}

// ---------------------------------------------------------------------------------------------
// Races: a directory inside the root swapped for a symbolic link that leads out, while tools
// work through the fence.
// ---------------------------------------------------------------------------------------------

/// How many reads and writes each race runs.
const RACE_ROUNDS: usize = 3_000;

/// What a race saw.
#[derive(Default, Debug)]
struct Tally {
    inside: usize,
    outside: usize,
    refused: usize,
    missing: usize,
}

impl Tally {
    fn count_error(&mut self, error: &FenceError) {
        match error {
            FenceError::Refused(refused) => {
                assert_eq!(refused.roots.len(), 1, "{refused}");
                self.refused += 1;
            }
            FenceError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
                self.missing += 1;
            }
            other => panic!("unexpected error: {other}"),
        }
    }

    /// A tool error: refused by the fence, or the file missing mid-swap.
    fn count_result_error(&mut self, result: &Value) {
        if error_code(result) == "path_outside_roots" {
            self.refused += 1;
        } else {
            assert!(
                result_text(result).contains("No such file"),
                "unexpected error: {result}"
            );
            self.missing += 1;
        }
    }

    /// Both sides of the swap were seen: the file inside, and the link refused.
    fn raced(&self) -> bool {
        self.inside > 0 && self.refused > 0
    }
}

/// The raced file, relative to the root.
const RACED: &str = "swap/file.txt";

/// A root holding `swap/file.txt` ("inside") and, beside the root, `outside/file.txt`
/// ("outside"), with a thread that keeps swapping `swap` for a link to `outside` and back.
struct Race {
    sandbox: Sandbox,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    swapper: Option<std::thread::JoinHandle<()>>,
}

impl Race {
    fn new(name: &str) -> Race {
        let sandbox = Sandbox::new(name);
        std::fs::create_dir_all(sandbox.root.join("swap")).unwrap();
        std::fs::create_dir_all(sandbox.base.join("outside")).unwrap();
        std::fs::write(sandbox.root.join("swap/file.txt"), "inside").unwrap();
        std::fs::write(sandbox.base.join("outside/file.txt"), "outside").unwrap();
        Race {
            sandbox,
            stop: Arc::new(AtomicBool::new(false)),
            swaps: Arc::new(AtomicU64::new(0)),
            swapper: None,
        }
    }

    fn outside(&self) -> PathBuf {
        self.sandbox.base.join("outside/file.txt")
    }

    /// Starts swapping: what an attacker with write access inside the root can do.
    fn start(&mut self) {
        let swap = self.sandbox.root.join("swap");
        let parked = self.sandbox.root.join("parked");
        let link = self.sandbox.root.join("link");
        std::os::unix::fs::symlink(self.sandbox.base.join("outside"), &link).unwrap();
        let stop = Arc::clone(&self.stop);
        let swaps = Arc::clone(&self.swaps);
        self.swapper = Some(std::thread::spawn(move || {
            // Renames only, so that `swap` is missing for as short a time as can be.
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&swap, &parked).unwrap();
                std::fs::rename(&link, &swap).unwrap();
                std::fs::rename(&swap, &link).unwrap();
                std::fs::rename(&parked, &swap).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        }));
        // The race means something only once the swapper is at work.
        while self.swaps.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
    }

    /// Stops swapping, leaving `swap` a directory again.
    fn stop(&mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(swapper) = self.swapper.take() {
            let finished = swapper.join();
            // A test that already failed reports its own failure, not the swapper's.
            assert!(
                finished.is_ok() || std::thread::panicking(),
                "the swapper failed"
            );
        }
        self.swaps.load(Ordering::Relaxed)
    }

    /// Runs `round` while the swapper swaps: [`RACE_ROUNDS`] times, and on until both sides
    /// of the swap were seen (the race means nothing otherwise), ten times as many at most.
    fn run(&mut self, what: &str, mut round: impl FnMut(usize, &mut Tally)) -> Tally {
        self.start();
        let mut tally = Tally::default();
        let mut rounds = 0;
        while rounds < RACE_ROUNDS || (!tally.raced() && rounds < 10 * RACE_ROUNDS) {
            round(rounds, &mut tally);
            rounds += 1;
        }
        let swaps = self.stop();
        println!("{rounds} {what} over {swaps} swaps: {tally:?}");
        assert!(
            tally.raced(),
            "the swap was never seen by the {what}: {tally:?}"
        );
        tally
    }
}

/// Puts the outside file back after a write landed there, and says whether one had.
fn outside_was_written(outside: &Path) -> bool {
    let text = std::fs::read_to_string(outside).unwrap_or_default();
    if text == "outside" {
        return false;
    }
    std::fs::write(outside, "outside").unwrap();
    true
}

impl Drop for Race {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The files example over real pipes, with the sandbox's root as the client's only root.
fn files_server(sandbox: &Sandbox) -> StdioServer {
    files::start(&[&sandbox.root])
}

fn result_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

fn error_code(result: &Value) -> Value {
    result["_meta"]["mcp-runtime/error"]["code"].clone()
}

#[test]
fn the_files_example_never_reads_through_a_directory_swapped_for_a_link_out() {
    let mut race = Race::new("e2e-read-race");
    let mut server = files_server(&race.sandbox);
    let tally = race.run("reads through the files example", |round, tally| {
        let result = call_tool(
            &mut server,
            10 + round as i64,
            "read_file",
            json!({"path": RACED}),
        );
        match (is_error(&result), result_text(&result).as_str()) {
            (false, "inside") => tally.inside += 1,
            (false, "outside") => tally.outside += 1,
            (true, _) => tally.count_result_error(&result),
            other => panic!("unexpected result {other:?}: {result}"),
        }
    });
    assert_eq!(
        tally.outside, 0,
        "reads that returned the file outside the root"
    );
}

#[test]
fn the_files_example_never_writes_through_a_directory_swapped_for_a_link_out() {
    let mut race = Race::new("e2e-write-race");
    let mut server = files_server(&race.sandbox);
    let outside = race.outside();
    let tally = race.run("writes through the files example", |round, tally| {
        let result = call_tool(
            &mut server,
            10 + round as i64,
            "write_file",
            json!({"path": RACED, "content": format!("write {round}")}),
        );
        if outside_was_written(&outside) {
            tally.outside += 1;
        } else if is_error(&result) {
            tally.count_result_error(&result);
        } else {
            tally.inside += 1;
        }
    });
    assert_eq!(tally.outside, 0, "writes that landed outside the root");
}

#[test]
fn a_directory_swapped_for_a_link_out_during_the_delete_confirmation_deletes_nothing_outside() {
    let sandbox = Sandbox::new("e2e-delete-swap");
    std::fs::create_dir_all(sandbox.root.join("box")).unwrap();
    std::fs::create_dir_all(sandbox.base.join("outside")).unwrap();
    std::fs::write(sandbox.root.join("box/victim.txt"), "inside").unwrap();
    std::fs::write(sandbox.base.join("outside/victim.txt"), "outside").unwrap();
    let mut server = files_server(&sandbox);
    let result = call_tool_answering(
        &mut server,
        2,
        "delete_file",
        json!({"path": "box/victim.txt"}),
        |question| {
            // While the user reads the question, `box` becomes a link to the outside folder.
            assert!(
                question["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("box/victim.txt"),
                "{question}"
            );
            std::fs::rename(sandbox.root.join("box"), sandbox.root.join("box-moved")).unwrap();
            std::os::unix::fs::symlink(sandbox.base.join("outside"), sandbox.root.join("box"))
                .unwrap();
            confirm()
        },
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("outside/victim.txt")).ok(),
        Some("outside".into()),
        "the file outside the root survives: {result}"
    );
    // The file the user confirmed is the one deleted, wherever its folder now is.
    assert!(!is_error(&result), "{result}");
    assert!(
        !sandbox.root.join("box-moved/victim.txt").exists(),
        "{result}"
    );
}

#[test]
fn a_file_replaced_during_the_delete_confirmation_is_kept() {
    let sandbox = Sandbox::new("e2e-delete-replaced");
    std::fs::write(sandbox.root.join("victim.txt"), "shown to the user").unwrap();
    let mut server = files_server(&sandbox);
    let result = call_tool_answering(
        &mut server,
        2,
        "delete_file",
        json!({"path": "victim.txt"}),
        |_| {
            std::fs::rename(
                sandbox.root.join("victim.txt"),
                sandbox.root.join("victim-old.txt"),
            )
            .unwrap();
            std::fs::write(sandbox.root.join("victim.txt"), "never shown").unwrap();
            confirm()
        },
    );
    assert!(is_error(&result), "{result}");
    assert_eq!(error_code(&result), "file_changed", "{result}");
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("victim.txt")).unwrap(),
        "never shown"
    );
}

#[test]
fn the_files_example_refuses_to_write_or_delete_a_file_with_another_hard_link() {
    let sandbox = Sandbox::new("e2e-hard-link");
    std::fs::hard_link(
        sandbox.base.join("secret.txt"),
        sandbox.root.join("linked.txt"),
    )
    .unwrap();
    let mut server = files_server(&sandbox);

    let written = call_tool(
        &mut server,
        2,
        "write_file",
        json!({"path": "linked.txt", "content": "overwritten"}),
    );
    assert!(is_error(&written), "{written}");
    assert_eq!(error_code(&written), "file_has_other_links", "{written}");
    assert!(result_text(&written).contains("linked.txt"), "{written}");

    let mut asked = false;
    let deleted = call_tool_answering(
        &mut server,
        3,
        "delete_file",
        json!({"path": "linked.txt"}),
        |_| {
            asked = true;
            confirm()
        },
    );
    assert!(is_error(&deleted), "{deleted}");
    assert_eq!(error_code(&deleted), "file_has_other_links", "{deleted}");
    assert!(
        !asked,
        "the user is not asked about a file that will not be deleted"
    );

    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(sandbox.root.join("linked.txt").exists());
}

#[test]
fn a_folder_swapped_for_a_link_out_is_never_read_through() {
    let mut race = Race::new("api-read-race");
    let roots = race.sandbox.roots();
    let tally = race.run("reads through the handles", |_, tally| {
        let read = roots.locate(RACED).and_then(|file| {
            let mut text = String::new();
            file.open_read()?
                .read_to_string(&mut text)
                .map_err(|error| FenceError::Io {
                    path: RACED.into(),
                    error,
                })?;
            Ok(text)
        });
        match read.as_deref() {
            Ok("inside") => tally.inside += 1,
            Ok("outside") => tally.outside += 1,
            Ok(other) => panic!("read {other:?}"),
            Err(error) => tally.count_error(error),
        }
    });
    assert_eq!(tally.outside, 0, "reads of the file outside the root");
}

#[test]
fn a_folder_swapped_for_a_link_out_is_never_written_through() {
    let mut race = Race::new("api-write-race");
    let roots = race.sandbox.roots();
    let outside = race.outside();
    let tally = race.run("writes through the handles", |round, tally| {
        let written = roots.locate(RACED).and_then(|file| {
            file.create()?
                .write_all(format!("write {round}").as_bytes())
                .map_err(|error| FenceError::Io {
                    path: RACED.into(),
                    error,
                })
        });
        if outside_was_written(&outside) {
            tally.outside += 1;
        } else {
            match written {
                Ok(()) => tally.inside += 1,
                Err(error) => tally.count_error(&error),
            }
        }
    });
    assert_eq!(tally.outside, 0, "writes that landed outside the root");
}

#[test]
fn every_hostile_path_is_refused_by_the_handles_too() {
    let sandbox = Sandbox::new("hostile-handles");
    let roots = sandbox.roots();
    for path in &hostile_paths(&sandbox.root) {
        let read = roots
            .locate(path)
            .and_then(|file| file.open_read().map(drop));
        let write = roots.locate(path).and_then(|file| file.create().map(drop));
        let mut outcomes = vec![("read", read), ("write", write)];
        // Removing a link that lies in the root removes the link itself (tried below).
        let a_link_in_the_root = roots
            .locate(path)
            .and_then(|file| file.symlink_metadata())
            .is_ok_and(|info| info.kind() == FileKind::Symlink);
        if !a_link_in_the_root {
            outcomes.push(("remove", roots.locate(path).and_then(|f| f.remove_file())));
        }
        for (what, outcome) in outcomes {
            match outcome {
                Err(FenceError::Refused(refused)) => {
                    assert_eq!(refused.roots, [sandbox.root.display().to_string()]);
                }
                Err(other) => panic!("{what} {path:?}: refused for another reason: {other}"),
                Ok(()) => panic!("{what} {path:?}: allowed"),
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("secret.txt")).unwrap(),
        "secret"
    );
    // A link that leads out is removed as a link; what it points to stays.
    roots.locate("secret-link").unwrap().remove_file().unwrap();
    assert!(!sandbox.root.join("secret-link").is_symlink());
    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("secret.txt")).unwrap(),
        "secret"
    );
}

#[test]
fn a_relative_link_that_stays_inside_is_followed_and_an_absolute_one_is_refused() {
    let sandbox = Sandbox::new("links-inside");
    std::fs::write(sandbox.root.join("sub/x.txt"), "x").unwrap();
    std::os::unix::fs::symlink("sub", sandbox.root.join("relative")).unwrap();
    let roots = sandbox.roots();
    let mut text = String::new();
    roots
        .locate("relative/x.txt")
        .unwrap()
        .open_read()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "x");
    // `inner` points at the same folder by its absolute path: the kernel's rule for opening
    // beneath a directory refuses every absolute link, wherever it points.
    let refused = roots
        .locate("inner/x.txt")
        .unwrap()
        .open_read()
        .unwrap_err();
    assert!(matches!(refused, FenceError::Refused(_)), "{refused}");
}

#[test]
fn a_file_with_another_hard_link_is_read_but_never_written_or_removed() {
    let sandbox = Sandbox::new("hard-link-api");
    std::fs::hard_link(
        sandbox.base.join("secret.txt"),
        sandbox.root.join("linked.txt"),
    )
    .unwrap();
    let roots = sandbox.roots();
    let linked = roots.locate("linked.txt").unwrap();

    let written = linked.create().unwrap_err();
    assert!(
        matches!(written, FenceError::OtherLinks { links: 2, .. }),
        "{written}"
    );
    assert_eq!(written.code(), Some("file_has_other_links"));
    let removed = linked.remove_file().unwrap_err();
    assert!(
        matches!(removed, FenceError::OtherLinks { .. }),
        "{removed}"
    );
    let result = mcp_runtime::ToolError::from(removed).into_result();
    let meta = result.meta.unwrap();
    assert_eq!(meta["mcp-runtime/error"]["code"], "file_has_other_links");
    assert_eq!(meta["mcp-runtime/error"]["path"], "linked.txt");

    // Reading is allowed: whoever made the link could read the file already.
    let mut text = String::new();
    linked
        .open_read()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "secret");

    assert_eq!(
        std::fs::read_to_string(sandbox.base.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(sandbox.root.join("linked.txt").exists());
}

#[test]
fn a_folder_swapped_for_a_link_out_while_held_does_not_redirect_the_removal() {
    let sandbox = Sandbox::new("held-folder");
    std::fs::create_dir_all(sandbox.root.join("box")).unwrap();
    std::fs::create_dir_all(sandbox.base.join("outside")).unwrap();
    std::fs::write(sandbox.root.join("box/victim.txt"), "inside").unwrap();
    std::fs::write(sandbox.base.join("outside/victim.txt"), "outside").unwrap();
    let (folder, name) = sandbox
        .roots()
        .locate("box/victim.txt")
        .unwrap()
        .open_parent()
        .unwrap();
    let identity = folder.removable(&name).unwrap().identity();

    // While a user is asked: `box` becomes a link to the outside folder.
    std::fs::rename(sandbox.root.join("box"), sandbox.root.join("box-moved")).unwrap();
    std::os::unix::fs::symlink(sandbox.base.join("outside"), sandbox.root.join("box")).unwrap();

    folder.remove_file_if_same(&name, identity).unwrap();
    assert!(sandbox.base.join("outside/victim.txt").exists());
    assert!(!sandbox.root.join("box-moved/victim.txt").exists());
}

#[test]
fn a_file_put_in_the_place_of_the_one_checked_is_not_removed() {
    let sandbox = Sandbox::new("replaced-file");
    std::fs::write(sandbox.root.join("victim.txt"), "checked").unwrap();
    let (folder, name) = sandbox
        .roots()
        .locate("victim.txt")
        .unwrap()
        .open_parent()
        .unwrap();
    let identity = folder.removable(&name).unwrap().identity();
    std::fs::rename(
        sandbox.root.join("victim.txt"),
        sandbox.root.join("victim-old.txt"),
    )
    .unwrap();
    std::fs::write(sandbox.root.join("victim.txt"), "never checked").unwrap();

    let refused = folder.remove_file_if_same(&name, identity).unwrap_err();
    assert!(matches!(refused, FenceError::Changed { .. }), "{refused}");
    assert_eq!(refused.code(), Some("file_changed"));
    assert!(sandbox.root.join("victim.txt").exists());
    assert!(sandbox.root.join("victim-old.txt").exists());
}

/// Deletes the file at `path` and puts another there with `contents`, born later but with the
/// old one's inode number: the case that device and inode alone cannot tell apart. ext4 gives
/// a new file the lowest free inode number of the folder's group, so files are created beside
/// it until one gets the freed number (others may have freed lower ones meanwhile); that one
/// takes the name. Returns whether the number was reused.
#[cfg(unix)]
fn recreate_in_the_same_inode(path: &Path, contents: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let old = std::fs::symlink_metadata(path).unwrap();
    // File times come from a clock that ticks every few milliseconds: let it tick, so that
    // the new file is born after the old one.
    if let Ok(born) = old.created() {
        let later = born + std::time::Duration::from_millis(50);
        while std::time::SystemTime::now() < later {
            std::thread::yield_now();
        }
    }
    std::fs::remove_file(path).unwrap();
    let folder = path.parent().unwrap();
    let mut others = Vec::new();
    let mut reused = false;
    for n in 0..10_000 {
        let candidate = folder.join(format!(".new-{n}"));
        std::fs::write(&candidate, contents).unwrap();
        let new = std::fs::symlink_metadata(&candidate).unwrap();
        if (new.dev(), new.ino()) == (old.dev(), old.ino()) {
            std::fs::rename(&candidate, path).unwrap();
            reused = true;
            break;
        }
        others.push(candidate);
    }
    if !reused {
        std::fs::write(path, contents).unwrap();
    }
    for other in others {
        std::fs::remove_file(other).unwrap();
    }
    reused
}

#[cfg(unix)]
#[test]
fn a_file_deleted_and_created_again_in_the_same_inode_is_not_removed() {
    let sandbox = Sandbox::new("recreated-file");
    let victim = sandbox.root.join("victim.txt");
    std::fs::write(&victim, "checked").unwrap();
    let (folder, name) = sandbox
        .roots()
        .locate("victim.txt")
        .unwrap()
        .open_parent()
        .unwrap();
    let identity = folder.removable(&name).unwrap().identity();
    if !recreate_in_the_same_inode(&victim, "never checked") {
        // Another inode is refused by device and inode alone: nothing here to test.
        eprintln!("skipped: this file system gave the new file another inode");
        return;
    }

    let refused = folder.remove_file_if_same(&name, identity).unwrap_err();
    assert!(matches!(refused, FenceError::Changed { .. }), "{refused}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "never checked");
}

#[cfg(unix)]
#[test]
fn a_file_deleted_and_created_again_during_the_delete_confirmation_is_kept() {
    let sandbox = Sandbox::new("e2e-delete-recreated");
    let victim = sandbox.root.join("victim.txt");
    std::fs::write(&victim, "shown to the user").unwrap();
    let mut server = files_server(&sandbox);
    let mut reused = false;
    let result = call_tool_answering(
        &mut server,
        2,
        "delete_file",
        json!({"path": "victim.txt"}),
        |_| {
            reused = recreate_in_the_same_inode(&victim, "never shown");
            confirm()
        },
    );
    if !reused {
        eprintln!("skipped: this file system gave the new file another inode");
        return;
    }
    assert!(is_error(&result), "{result}");
    assert_eq!(error_code(&result), "file_changed", "{result}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "never shown");
}

#[test]
fn a_folder_swapped_for_a_link_after_it_was_listed_is_not_entered() {
    let sandbox = Sandbox::new("listed-folder");
    std::fs::create_dir_all(sandbox.root.join("other")).unwrap();
    let root = sandbox.roots().open_dir(".").unwrap();
    let entries: Vec<_> = root.entries().unwrap().map(Result::unwrap).collect();
    let sub = entries.iter().find(|e| e.name() == "sub").unwrap();
    assert_eq!(sub.info().kind(), FileKind::Directory);

    std::fs::rename(sandbox.root.join("sub"), sandbox.root.join("sub-moved")).unwrap();
    std::os::unix::fs::symlink("other", sandbox.root.join("sub")).unwrap();

    let refused = sub.open_dir().unwrap_err();
    assert!(matches!(refused, FenceError::Changed { .. }), "{refused}");
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let sandbox = Sandbox::new("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(sandbox.root.join("pipe"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let pipe = sandbox.roots().locate("pipe").unwrap();
    let read = pipe.open_read().unwrap_err();
    assert!(
        matches!(
            read,
            FenceError::WrongKind {
                found: FileKind::Other,
                ..
            }
        ),
        "{read}"
    );
    // Nobody reads the FIFO: a blocking open for writing would wait for ever.
    assert!(pipe.create().is_err());
}

/// A stateless (2026-07-28) `tools/call`, with the answers and state of earlier rounds.
fn stateless_call(server: &mut StdioServer, id: i64, arguments: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": "delete_file",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "fence-e2e", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}, "elicitation": {"form": {}}},
        },
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    server.request(id, "tools/call", params);
    server.response(id)["result"].clone()
}

fn only_input_request(result: &Value) -> (String, Value) {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{result}");
    let (key, request) = requests.iter().next().unwrap();
    (key.clone(), request.clone())
}

#[test]
fn in_the_stateless_era_a_confirmation_answers_only_for_the_file_it_was_asked_about() {
    let sandbox = Sandbox::new("stateless-delete");
    std::fs::write(sandbox.root.join("victim.txt"), "shown to the user").unwrap();
    let mut server = StdioServer::spawn(files::binary());
    let arguments = json!({"path": "victim.txt"});
    let confirm = confirm();

    let first = stateless_call(&mut server, 1, arguments.clone(), json!({}));
    let (roots_key, request) = only_input_request(&first);
    assert_eq!(request["method"], "roots/list");
    let roots = json!({"roots": [{"uri": format!("file://{}", sandbox.root.display())}]});
    let second = stateless_call(
        &mut server,
        2,
        arguments.clone(),
        json!({"inputResponses": {roots_key: roots}, "requestState": first["requestState"]}),
    );
    let (asked_key, request) = only_input_request(&second);
    assert_eq!(request["method"], "elicitation/create");

    // Between the rounds, another file takes the name of the one the user is looking at.
    std::fs::rename(
        sandbox.root.join("victim.txt"),
        sandbox.root.join("victim-old.txt"),
    )
    .unwrap();
    std::fs::write(sandbox.root.join("victim.txt"), "never shown").unwrap();

    let third = stateless_call(
        &mut server,
        3,
        arguments.clone(),
        json!({"inputResponses": {asked_key.clone(): confirm.clone()}, "requestState": second["requestState"]}),
    );
    // The answer was about the other file: the user is asked again, and nothing is deleted.
    let (asked_again, request) = only_input_request(&third);
    assert_eq!(request["method"], "elicitation/create");
    assert_ne!(asked_again, asked_key);
    assert!(sandbox.root.join("victim.txt").exists());
    assert!(sandbox.root.join("victim-old.txt").exists());

    let fourth = stateless_call(
        &mut server,
        4,
        arguments,
        json!({"inputResponses": {asked_again: confirm}, "requestState": third["requestState"]}),
    );
    assert_eq!(fourth["resultType"], "complete", "{fourth}");
    assert_eq!(result_text(&fourth), "deleted victim.txt");
    assert!(!sandbox.root.join("victim.txt").exists());
    assert!(sandbox.root.join("victim-old.txt").exists());
}
