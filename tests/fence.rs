//! The roots fence against hostile paths: every one refused, none resolving outside the root,
//! and the ordinary paths inside it allowed.

use std::path::{Path, PathBuf};

use mcp_runtime::{PathRefused, Root, Roots};

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
