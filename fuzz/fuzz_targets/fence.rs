//! The roots fence (`Roots::resolve` and `Roots::locate`): arbitrary roots and paths, against
//! a real directory tree with symbolic links that stay inside a root, lead out of it, dangle,
//! loop, or lead into another root, a root reached through a link, and a sibling whose name
//! extends a root's (`root_a_evil` beside `root_a`).
//!
//! Checked: nothing panics; a resolved path is absolute, has no `.` or `..` component, lies
//! (by `Path::starts_with`, component by component) inside the root it names, which is the
//! path on disk of one of the roots given; and with every symbolic link of its existing part
//! resolved again, here, it still lies inside that root. Nothing outside is ever returned.
//! Through the handles: whatever `locate(path).open_read()` opens is the very file (device and
//! inode) that the path names beneath the root once its links are resolved here, and that
//! lies inside the root; nothing outside is ever opened.

#![no_main]

use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mcp_runtime::{Root, Roots};

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    /// Which of the prepared roots are given, in order (one bit each).
    roots: u16,
    /// A root of the fuzzer's own, given first or last.
    extra_root: Option<(bool, &'a str)>,
    /// A prepared start for the path, or none.
    prefix: u8,
    path: &'a str,
}

struct Fixture {
    base: PathBuf,
    roots: Vec<String>,
    prefixes: Vec<String>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("mcp-fuzz-fence-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = |p: &str| std::fs::create_dir_all(base.join(p)).expect("create a directory");
        let file = |p: &str| std::fs::write(base.join(p), p).expect("write a file");
        let link = |to: &str, at: &str| symlink(to, base.join(at)).expect("make a link");
        dir("root_a/sub");
        dir("root_a_evil");
        dir("root_b");
        dir("outside");
        file("root_a/file.txt");
        file("root_a/sub/nested.txt");
        file("root_a_evil/secret.txt");
        file("root_b/b.txt");
        file("outside/secret.txt");
        link("sub", "root_a/link_in");
        link("../outside", "root_a/link_out");
        link("/etc", "root_a/link_abs_out");
        link("../nowhere", "root_a/dangling");
        link("loop", "root_a/loop");
        link("../root_b", "root_a/link_to_b");
        link("../root_a_evil", "root_a/link_evil");
        link("sub/../../outside", "root_a/link_dotdot");
        link("root_a", "link_root");
        let base = base.canonicalize().expect("the fixture exists");
        let b = base.display().to_string();
        let encoded: String = b
            .chars()
            .map(|c| {
                if c == '/' {
                    "/".into()
                } else {
                    format!("%{:02X}", c as u32 & 0xff)
                }
            })
            .collect();
        let roots = vec![
            format!("file://{b}/root_a"),
            format!("file://{b}/root_a/"),
            format!("file://localhost{b}/root_b"),
            format!("file://{b}/link_root"),
            format!("file://{encoded}/root%5Fa"),
            format!("file://{b}/./root_a"),
            format!("file://{b}/root_a/../outside"),
            format!("file://{b}/root_a/sub"),
            format!("file://{b}/missing"),
            format!("file://{b}/root_a/file.txt"),
            "https://example.com/root".into(),
            "file:relative/root".into(),
            format!("file://{b}//root_b"),
            format!("file://{b}/root_a/link_out"),
        ];
        let prefixes = vec![
            String::new(),
            format!("{b}/root_a/"),
            format!("file://{b}/root_a/"),
            format!("file://localhost{b}/root_b/"),
            format!("{b}/root_a_evil/"),
            format!("{b}/outside/"),
            format!("{b}/link_root/"),
            "sub/".into(),
            "link_in/".into(),
            "link_out/".into(),
            "link_to_b/".into(),
            "link_evil/".into(),
            "link_dotdot/".into(),
            "dangling/".into(),
            "loop/".into(),
            "link_abs_out/".into(),
        ];
        Fixture {
            base,
            roots,
            prefixes,
        }
    })
}

fuzz_target!(|input: Input<'_>| {
    let fixture = fixture();
    let mut uris: Vec<String> = fixture
        .roots
        .iter()
        .enumerate()
        .filter(|(i, _)| input.roots & (1 << i) != 0)
        .map(|(_, r)| r.clone())
        .collect();
    match input.extra_root {
        Some((true, extra)) => uris.insert(0, extra.to_owned()),
        Some((false, extra)) => uris.push(extra.to_owned()),
        None => {}
    }
    let prefix = &fixture.prefixes[usize::from(input.prefix) % fixture.prefixes.len()];
    let path = format!("{prefix}{}", input.path);
    let roots = Roots::new(
        uris.iter()
            .map(|uri| Root {
                uri: uri.clone(),
                name: None,
            })
            .collect(),
    );
    check_handles(&roots, &path, &uris, fixture);
    let Ok(resolved) = roots.resolve(&path) else {
        return;
    };
    let place = resolved.as_path();
    let root = resolved.root();
    let context = || {
        format!(
            "{path:?} in {uris:?} resolved to {place:?} under {root:?} (fixture {:?})",
            fixture.base
        )
    };
    assert!(place.is_absolute(), "not absolute: {}", context());
    assert!(
        place
            .components()
            .all(|c| !matches!(c, Component::CurDir | Component::ParentDir)),
        "not normalised: {}",
        context()
    );
    assert!(place.starts_with(root), "outside its root: {}", context());
    let allowed: Vec<PathBuf> = uris.iter().filter_map(|u| root_on_disk(u)).collect();
    assert!(
        allowed.iter().any(|r| r == root),
        "{root:?} is none of the roots given, {allowed:?}: {}",
        context()
    );
    let real = resolve_links(place)
        .unwrap_or_else(|e| panic!("cannot resolve again ({e}): {}", context()));
    assert!(
        real.starts_with(root),
        "a link leads to {real:?}, outside: {}",
        context()
    );
});

/// What the handles open lies inside the root, and is the file the path names there.
fn check_handles(roots: &Roots, path: &str, uris: &[String], fixture: &Fixture) {
    let Ok(file) = roots.locate(path) else {
        return;
    };
    let Ok(opened) = file.open_read() else {
        return;
    };
    let root = file.root();
    let context = || {
        format!(
            "{path:?} in {uris:?} opened {:?} under {root:?} (fixture {:?})",
            file.relative(),
            fixture.base
        )
    };
    let allowed: Vec<PathBuf> = uris.iter().filter_map(|u| root_on_disk(u)).collect();
    assert!(
        allowed.iter().any(|r| r == root),
        "{root:?} is none of the roots given, {allowed:?}: {}",
        context()
    );
    let real = resolve_links(&root.join(file.relative()))
        .unwrap_or_else(|e| panic!("cannot resolve what was opened ({e}): {}", context()));
    assert!(
        real.starts_with(root),
        "opened {real:?}, outside: {}",
        context()
    );
    let opened = opened.metadata().expect("the opened file has metadata");
    let named = std::fs::metadata(&real).expect("the named file has metadata");
    assert_eq!(
        (opened.dev(), opened.ino()),
        (named.dev(), named.ino()),
        "opened another file than {real:?}: {}",
        context()
    );
}

/// Where a `file://` root is on disk: decoded strictly (`%` and two hex digits), made
/// absolute and normalised, links resolved when it exists.
fn root_on_disk(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = String::from_utf8(decode(rest)?).ok()?;
    if !decoded.starts_with('/') || decoded.split('/').any(|c| c == "..") {
        return None;
    }
    let lexical: PathBuf = Path::new(&decoded)
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    Some(lexical.canonicalize().unwrap_or(lexical))
}

fn decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The path with every link of its longest existing prefix resolved.
fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let mut out = real;
                out.extend(rest.iter().rev());
                return Ok(out);
            }
            Err(e) => match (
                existing.file_name().map(ToOwned::to_owned),
                existing.parent(),
            ) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => return Err(e),
            },
        }
    }
}
