//! Agent Skills served as the `io.modelcontextprotocol/skills` extension (SEP-2640): a folder
//! per skill holding its `SKILL.md` (YAML frontmatter with at least `name` and `description`,
//! then instructions) and any files beside it, served as `skill://<name>/<path>` resources,
//! listed by `skills/list`, fetched one by one with `skills/get`, and browsed with
//! `resources/directory/read`.
//!
//! ```
//! use mcp_runtime::Skills;
//!
//! let skills = Skills::new()
//!     .file(
//!         "pdf-forms/SKILL.md",
//!         "---\nname: pdf-forms\ndescription: Fill PDF forms\n---\nRead references/FIELDS.md first.\n",
//!     )
//!     .file("pdf-forms/references/FIELDS.md", "# Fields\n");
//! let server = mcp_runtime::server!().auto_register(false).skills(skills).build().unwrap();
//! # let _ = server;
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The extension's identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files one skill may have, and their most bytes in all (the extension's limits).
const MAX_FILES: usize = 512;
const MAX_BYTES: usize = 16 * 1024 * 1024;

/// The MIME type of a directory in `resources/directory/read`.
pub(crate) const DIRECTORY: &str = "inode/directory";

/// Skills to serve: files by their path, `<skill>/<path within the skill>`. Checked when the
/// server is built.
#[derive(Clone, Debug, Default)]
pub struct Skills {
    files: BTreeMap<String, Vec<u8>>,
}

impl Skills {
    /// No skills yet.
    pub fn new() -> Skills {
        Skills::default()
    }

    /// Adds a file at `path`: `<skill name>/SKILL.md`, or `<skill name>/<any path>` beside
    /// it. Embed files at build time with `include_str!` or `include_bytes!`.
    pub fn file(mut self, path: &str, content: impl Into<Vec<u8>>) -> Skills {
        self.files
            .insert(path.trim_start_matches('/').to_owned(), content.into());
        self
    }

    /// Every skill under `root`: each folder directly under it is one skill, holding its
    /// `SKILL.md` and every file beneath it (symbolic links are not followed, and hidden
    /// files and folders, whose names begin with `.`, are left out). A file directly in
    /// `root`, or a folder without a `SKILL.md`, fails the server's build.
    pub fn from_dir(root: impl AsRef<Path>) -> std::io::Result<Skills> {
        fn walk(dir: &Path, prefix: &str, skills: &mut Skills) -> std::io::Result<()> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                let name = entry.file_name().to_string_lossy().into_owned();
                // Hidden files (`.git`, `.env`, `.DS_Store`) are no part of a skill.
                if name.starts_with('.') {
                    continue;
                }
                let path = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    walk(&entry.path(), &path, skills)?;
                } else if kind.is_file() {
                    skills.files.insert(path, std::fs::read(entry.path())?);
                }
            }
            Ok(())
        }
        let mut skills = Skills::new();
        walk(root.as_ref(), "", &mut skills)?;
        Ok(skills)
    }

    /// The skills, checked: every skill has a `SKILL.md` whose frontmatter names it, within
    /// the extension's limits; files outside any skill are refused.
    pub(crate) fn build(self) -> Result<SkillSet, String> {
        let mut by_skill: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
        for (path, content) in self.files {
            let (skill, rest) = path
                .split_once('/')
                .filter(|(_, rest)| !rest.is_empty())
                .ok_or_else(|| {
                    format!("`{path}` is not in a skill's folder (`<skill>/SKILL.md`)")
                })?;
            if rest
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
            {
                return Err(format!("`{path}` is not a plain relative path"));
            }
            by_skill
                .entry(skill.to_owned())
                .or_default()
                .insert(rest.to_owned(), content);
        }
        let mut skills = Vec::new();
        for (name, files) in by_skill {
            skills.push(Skill::new(name, files)?);
        }
        Ok(SkillSet { skills })
    }
}

/// One skill, checked, with its `skills/list` entry.
#[derive(Debug)]
pub(crate) struct Skill {
    pub name: String,
    files: BTreeMap<String, Vec<u8>>,
    /// Its `skills/list` entry.
    pub entry: Value,
    /// The same, serialised once for the lists.
    pub entry_raw: Box<serde_json::value::RawValue>,
    /// The `resources/list` entry of its `SKILL.md`, serialised once.
    pub manifest_raw: Box<serde_json::value::RawValue>,
}

impl Skill {
    fn new(name: String, files: BTreeMap<String, Vec<u8>>) -> Result<Skill, String> {
        if !valid_name(&name) {
            return Err(format!(
                "the skill name `{name}` breaks the Agent Skills rules: 1 to 64 lowercase letters, digits and hyphens, no hyphen first, last or twice in a row"
            ));
        }
        let manifest = files
            .get("SKILL.md")
            .ok_or_else(|| format!("the skill `{name}` has no SKILL.md"))?;
        let text =
            std::str::from_utf8(manifest).map_err(|_| format!("{name}/SKILL.md is not UTF-8"))?;
        let frontmatter = frontmatter(text).map_err(|e| format!("{name}/SKILL.md: {e}"))?;
        for field in ["name", "description"] {
            if frontmatter
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(format!(
                    "{name}/SKILL.md: the frontmatter needs a `{field}`"
                ));
            }
        }
        if frontmatter["name"] != name.as_str() {
            return Err(format!(
                "{name}/SKILL.md names the skill `{}`: the folder and the frontmatter's `name` must agree",
                frontmatter["name"].as_str().unwrap_or_default()
            ));
        }
        let total: usize = files.values().map(Vec::len).sum();
        if files.len() > MAX_FILES || total > MAX_BYTES {
            return Err(format!(
                "the skill `{name}` has {} files of {total} bytes; at most {MAX_FILES} files of {MAX_BYTES} bytes are served",
                files.len()
            ));
        }
        let resources: Vec<Value> = files
            .iter()
            .map(|(path, content)| {
                json!({
                    "uri": file_uri(&name, path),
                    "digest": digest(content),
                    "size": content.len(),
                })
            })
            .collect();
        let entry = json!({
            "uri": file_uri(&name, "SKILL.md"),
            "frontmatter": frontmatter,
            "resources": resources,
        });
        let raw = |value: &Value| {
            serde_json::value::to_raw_value(value).expect("a JSON value serialises")
        };
        let manifest_raw = raw(&json!({
            "uri": file_uri(&name, "SKILL.md"),
            "name": name,
            "description": frontmatter["description"],
            "mimeType": "text/markdown",
            "size": files["SKILL.md"].len(),
        }));
        Ok(Skill {
            entry_raw: raw(&entry),
            manifest_raw,
            name,
            files,
            entry,
        })
    }
}

/// The checked skills of a server.
#[derive(Debug, Default)]
pub(crate) struct SkillSet {
    pub skills: Vec<Skill>,
}

/// What a `skill://` URI names.
pub(crate) enum Found<'a> {
    File { path: &'a str, content: &'a [u8] },
    Directory(Vec<Value>),
}

impl SkillSet {
    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn by_manifest(&self, uri: &str) -> Option<&Skill> {
        let name = uri.strip_prefix("skill://")?.strip_suffix("/SKILL.md")?;
        self.skills.iter().find(|s| s.name == name)
    }

    /// The file or directory at a `skill://` URI.
    pub(crate) fn find(&self, uri: &str) -> Option<Found<'_>> {
        let rest = uri.strip_prefix("skill://")?.trim_end_matches('/');
        let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
        let skill = self.skills.iter().find(|s| s.name == name)?;
        if let Some((path, content)) = skill.files.get_key_value(path) {
            return Some(Found::File { path, content });
        }
        // A directory: the skill's folder, or a folder holding some of its files.
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let mut children: BTreeMap<String, Value> = BTreeMap::new();
        for (file, content) in &skill.files {
            let Some(below) = file.strip_prefix(&prefix) else {
                continue;
            };
            match below.split_once('/') {
                Some((folder, _)) => {
                    children
                        .entry(format!("{prefix}{folder}"))
                        .or_insert_with(|| {
                            json!({
                                "uri": file_uri(name, &format!("{prefix}{folder}")),
                                "name": folder,
                                "mimeType": DIRECTORY,
                            })
                        });
                }
                None => {
                    children.insert(
                        file.clone(),
                        json!({
                            "uri": file_uri(name, file),
                            "name": below,
                            "mimeType": mime_type(file, content),
                            "size": content.len(),
                        }),
                    );
                }
            }
        }
        (!children.is_empty()).then(|| Found::Directory(children.into_values().collect()))
    }
}

fn file_uri(skill: &str, path: &str) -> String {
    if path.is_empty() {
        format!("skill://{skill}")
    } else {
        format!("skill://{skill}/{path}")
    }
}

/// `sha256:` and the SHA-256 of the bytes in lowercase hexadecimal.
fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// The MIME type a file is served with, from its extension (and whether it is text).
pub(crate) fn mime_type(path: &str, content: &[u8]) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    match extension {
        "md" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "yaml" | "yml" => "application/yaml",
        "html" => "text/html",
        _ if std::str::from_utf8(content).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// The Agent Skills naming rules.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The YAML frontmatter of a `SKILL.md`, as JSON: a subset of YAML, scalars (text, numbers,
/// booleans, null; quoted or not) and maps of them one level deep (`metadata:`), which is
/// what the Agent Skills specification describes. Anything else is refused, rather than read
/// otherwise than a YAML parser would.
fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("it must begin with a `---` line opening the YAML frontmatter")?;
    let end = body
        .lines()
        .position(|line| line.trim_end() == "---")
        .ok_or("the frontmatter has no closing `---` line")?;
    let mut map = Map::new();
    let mut open: Option<(String, Map<String, Value>)> = None;
    // The indentation of the open map's keys: a deeper one is a map within it, not read.
    let mut indent: Option<usize> = None;
    for line in body.lines().take(end) {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let depth = line.len() - line.trim_start().len();
        let nested = depth > 0;
        if nested && *indent.get_or_insert(depth) != depth {
            return Err(format!(
                "`{}`: only one level of maps is read in a skill's frontmatter",
                line.trim()
            ));
        }
        if !nested {
            indent = None;
        }
        let (key, value) = line
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("`{}` is not `key: value`", line.trim()))?;
        let (key, value) = (key.trim(), value.trim());
        if nested {
            let (_, inner) = open
                .as_mut()
                .ok_or_else(|| format!("`{key}` is indented under no key"))?;
            inner.insert(key.to_owned(), scalar(value)?);
            continue;
        }
        if let Some((name, inner)) = open.take() {
            map.insert(name, Value::Object(inner));
        }
        if value.is_empty() {
            open = Some((key.to_owned(), Map::new()));
        } else {
            map.insert(key.to_owned(), scalar(value)?);
        }
    }
    if let Some((name, inner)) = open {
        map.insert(name, Value::Object(inner));
    }
    Ok(map)
}

fn scalar(value: &str) -> Result<Value, String> {
    // A comment after a plain value is not part of it.
    let value = match value.find(" #") {
        Some(at) if !value.starts_with(['"', '\'']) => value[..at].trim_end(),
        _ => value,
    };
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            let inner = inner
                .strip_suffix(quote)
                .ok_or_else(|| format!("`{value}` opens a quote it does not close"))?;
            if quote == '"' && inner.contains('\\') {
                return Err(format!(
                    "`{value}`: escapes are not read; write the text plainly"
                ));
            }
            return Ok(Value::String(inner.replace("''", "'")));
        }
    }
    if value.starts_with(['[', '{', '|', '>', '&', '*', '!']) {
        return Err(format!(
            "`{value}`: only plain, quoted and numeric values are read in a skill's frontmatter"
        ));
    }
    Ok(match value {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "~" | "Null" | "NULL" => Value::Null,
        _ => match value.parse::<i64>() {
            Ok(n) => n.into(),
            Err(_) => match value.parse::<f64>() {
                Ok(x) if x.is_finite() && value.chars().any(|c| c.is_ascii_digit()) => x.into(),
                _ => Value::String(value.to_owned()),
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_reads_scalars_and_one_level_of_maps() {
        let read = frontmatter(
            "---\nname: pdf\ndescription: \"Fill: forms\"\nversion: 2\nbeta: true\nmetadata:\n  author: ada\n  level: 1.5\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(read),
            json!({"name": "pdf", "description": "Fill: forms", "version": 2, "beta": true,
                   "metadata": {"author": "ada", "level": 1.5}})
        );
        assert_eq!(
            frontmatter("---\nname: x # the name\n---\n").unwrap()["name"],
            "x"
        );
        assert!(frontmatter("---\nmetadata:\n  a:\n    b: 1\n---\n").is_err());
        assert!(frontmatter("name: x\n").is_err());
        assert!(frontmatter("---\nname: [a, b]\n---\n").is_err());
        assert!(frontmatter("---\nname: x\n").is_err());
    }

    #[test]
    fn skills_are_checked_and_their_entries_carry_every_file_with_its_digest() {
        let set = Skills::new()
            .file("a-b/SKILL.md", "---\nname: a-b\ndescription: d\n---\n")
            .file("a-b/ref/x.txt", "x")
            .build()
            .unwrap();
        let entry = &set.skills[0].entry;
        assert_eq!(entry["uri"], "skill://a-b/SKILL.md");
        assert_eq!(entry["resources"][1]["uri"], "skill://a-b/ref/x.txt");
        assert_eq!(
            entry["resources"][1]["digest"],
            "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
        let Some(Found::Directory(children)) = set.find("skill://a-b") else {
            panic!("a directory")
        };
        assert_eq!(children[1]["mimeType"], DIRECTORY);
        assert!(matches!(
            set.find("skill://a-b/ref/x.txt"),
            Some(Found::File { .. })
        ));
        for (files, problem) in [
            (
                vec![("Bad/SKILL.md", "---\nname: Bad\ndescription: d\n---\n")],
                "breaks the Agent Skills rules",
            ),
            (vec![("a/notes.md", "x")], "has no SKILL.md"),
            (
                vec![("a/SKILL.md", "---\nname: b\ndescription: d\n---\n")],
                "must agree",
            ),
            (
                vec![("a/SKILL.md", "---\nname: a\n---\n")],
                "needs a `description`",
            ),
            (vec![("loose.md", "x")], "is not in a skill's folder"),
            (vec![("a/../x", "x")], "not a plain relative path"),
        ] {
            let mut skills = Skills::new();
            for (path, content) in files {
                skills = skills.file(path, content);
            }
            let refused = skills.build().unwrap_err();
            assert!(refused.contains(problem), "{refused}");
        }
    }
}
