//! Portable skills: `skills/<dir>/SKILL.md` (MAN-5).
//!
//! Only immediate children of `skills/` are skills; nothing is searched recursively. A child
//! without `SKILL.md` is ignored. A bad skill is skipped at its own boundary (findings carry the
//! component `skill:<dir>`) and its valid siblings still load.

use crate::diag::{CheckId, Diagnostic};
use crate::located::{Dialect, Limits, Node, Value, yaml};
use crate::pkgfs::{Entry, MANIFEST_LIMIT, PackageRoot, ReadError};

/// A skill that would load.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The directory name under `skills/` (equal to `name`).
    pub dir: String,
    /// The skill name.
    pub name: String,
    /// What the skill does (1–1024 characters).
    pub description: String,
    /// `license`, if given.
    pub license: Option<String>,
    /// `compatibility`, if given.
    pub compatibility: Option<String>,
    /// `metadata` (string to string), in order.
    pub metadata: Vec<(String, String)>,
    /// `allowed-tools`, if given.
    pub allowed_tools: Option<String>,
}

/// Whether `name` satisfies the Agent Skills name rule: 1–64 characters, lowercase
/// alphanumeric words joined by single hyphens.
pub fn valid_skill_name(name: &str) -> bool {
    let len = name.chars().count();
    (1..=64).contains(&len)
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// Reads every skill of the package at `root`.
pub fn read(root: &PackageRoot, out: &mut Vec<Diagnostic>) -> Vec<Skill> {
    let mut skills = Vec::new();
    match root.resolve("skills") {
        Err(ReadError::Missing) => return skills,
        Ok(Entry::Dir(_)) => {}
        Ok(_) | Err(_) => {
            out.push(
                Diagnostic::error(
                    CheckId::Skills,
                    "skills",
                    crate::located::Pos::START,
                    "skills must be an in-root directory; no skill is loaded",
                )
                .component("skills"),
            );
            return skills;
        }
    }
    let children = match root.list_dir("skills") {
        Ok(c) => c,
        Err(e) => {
            out.push(
                Diagnostic::error(
                    CheckId::Skills,
                    "skills",
                    crate::located::Pos::START,
                    format!("cannot list skills: {e}"),
                )
                .component("skills"),
            );
            return skills;
        }
    };
    for dir in children {
        let rel_dir = format!("skills/{dir}");
        let file = format!("{rel_dir}/SKILL.md");
        let component = format!("skill:{dir}");
        match root.resolve(&rel_dir) {
            Ok(Entry::Dir(_)) => {}
            Ok(_) | Err(ReadError::Missing) => continue,
            Err(e) => {
                out.push(
                    Diagnostic::error(
                        CheckId::Skills,
                        &rel_dir,
                        crate::located::Pos::START,
                        format!("skill directory {e}; skipped"),
                    )
                    .component(component),
                );
                continue;
            }
        }
        if !root.exists(&file) {
            if let Some(nested) = find_nested_skill(root, &rel_dir) {
                out.push(
                    Diagnostic::info(
                        CheckId::Skills,
                        &nested,
                        crate::located::Pos::START,
                        format!("{nested} is not a skill: skills are only the immediate children of skills/, and {rel_dir} has no SKILL.md"),
                    )
                    .component(component)
                    .hint(format!("Move it to skills/<name>/SKILL.md if it should load; files under {rel_dir}/ are only reference material.")),
                );
            }
            continue;
        }
        if let Some(skill) = read_skill(root, &dir, &file, &component, out) {
            skills.push(skill);
        }
    }
    skills
}

/// Looks for a `SKILL.md` nested below a skill directory (at most four levels down), to explain
/// that it is not discovered.
fn find_nested_skill(root: &PackageRoot, rel_dir: &str) -> Option<String> {
    let mut queue = vec![(rel_dir.to_string(), 0)];
    while let Some((dir, depth)) = queue.pop() {
        if depth >= 4 {
            continue;
        }
        let Ok(names) = root.list_dir(&dir) else {
            continue;
        };
        for name in names {
            let path = format!("{dir}/{name}");
            if name == "SKILL.md" && depth > 0 {
                return Some(path);
            }
            if matches!(root.resolve(&path), Ok(Entry::Dir(_))) {
                queue.push((path, depth + 1));
            }
        }
    }
    None
}

fn read_skill(
    root: &PackageRoot,
    dir: &str,
    file: &str,
    component: &str,
    out: &mut Vec<Diagnostic>,
) -> Option<Skill> {
    let fail = |out: &mut Vec<Diagnostic>, diag: Diagnostic| {
        out.push(diag.component(component));
        None
    };
    let err = |pos, msg: String| {
        Diagnostic::error(CheckId::Skills, file, pos, format!("{msg}; skill skipped"))
    };
    let text = match root.read_text(file, MANIFEST_LIMIT) {
        Ok(t) => t,
        Err(e) => {
            return fail(
                out,
                err(
                    e.pos(),
                    format!("SKILL.md must be a regular in-root file; it {e}"),
                ),
            );
        }
    };
    let frontmatter = match extract_frontmatter(&text) {
        Ok(f) => f,
        Err(reason) => {
            return fail(
                out,
                err(crate::located::Pos::START, format!("invalid SKILL.md: {reason}"))
                    .hint("Start SKILL.md with a line `---`, the YAML fields (name, description), and a closing `---` line."),
            );
        }
    };
    let parsed = match yaml::parse(&frontmatter, Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            return fail(
                out,
                err(
                    e.pos,
                    format!("invalid SKILL.md: invalid YAML frontmatter: {}", e.message),
                ),
            );
        }
    };
    let fm = parsed.root;
    let Some(_) = fm.as_map() else {
        return fail(
            out,
            err(
                fm.pos,
                format!(
                    "invalid SKILL.md: YAML frontmatter must be an object, not {}",
                    fm.type_name(Dialect::Yaml)
                ),
            )
            .value(fm.snippet()),
        );
    };
    let mut bad = Vec::new();
    let name = match fm.get("name").map(|e| &e.value) {
        Some(Node {
            value: Value::Str(n),
            ..
        }) if n == dir && valid_skill_name(n) => Some(n.clone()),
        Some(node) => {
            bad.push(
                err(node.pos, format!("name must match the directory `{dir}` and satisfy Agent Skills constraints"))
                    .value(node.snippet())
                    .hint("Use 1-64 characters: lowercase letters and digits in words joined by single hyphens, the same as the directory name."),
            );
            None
        }
        None => {
            bad.push(
                err(fm.pos, "name is missing from the frontmatter".into())
                    .hint(format!("Add `name: {dir}`.")),
            );
            None
        }
    };
    let description = match fm.get("description").map(|e| &e.value) {
        Some(Node {
            value: Value::Str(d),
            ..
        }) if (1..=1024).contains(&d.chars().count()) => Some(d.clone()),
        Some(node) => {
            bad.push(
                err(
                    node.pos,
                    "description must be a non-empty string of at most 1024 characters".into(),
                )
                .value(node.snippet()),
            );
            None
        }
        None => {
            bad.push(
                err(fm.pos, "description is missing from the frontmatter".into())
                    .hint("Add `description:` saying what the skill does and when to use it."),
            );
            None
        }
    };
    let optional_string =
        |key: &str, max: Option<usize>, bad: &mut Vec<Diagnostic>| -> Option<String> {
            let node = &fm.get(key)?.value;
            match &node.value {
                Value::Str(s) if max.is_none_or(|m| (1..=m).contains(&s.chars().count())) => {
                    Some(s.clone())
                }
                _ => {
                    let what = match max {
                        Some(m) => format!("{key} must be a string of 1 to {m} characters"),
                        None => format!("{key} must be a string"),
                    };
                    bad.push(err(node.pos, what).value(node.snippet()));
                    None
                }
            }
        };
    let license = optional_string("license", None, &mut bad);
    let compatibility = optional_string("compatibility", Some(500), &mut bad);
    let allowed_tools = optional_string("allowed-tools", None, &mut bad);
    let metadata = read_metadata(&fm, file, &mut bad);
    if !bad.is_empty() {
        out.extend(bad.into_iter().map(|d| d.component(component)));
        return None;
    }
    Some(Skill {
        dir: dir.to_string(),
        name: name?,
        description: description?,
        license,
        compatibility,
        metadata,
        allowed_tools,
    })
}

/// The frontmatter's `metadata`: string keys to string values (anything else is reported in
/// `bad`).
fn read_metadata(fm: &Node, file: &str, bad: &mut Vec<Diagnostic>) -> Vec<(String, String)> {
    let Some(entry) = fm.get("metadata") else {
        return Vec::new();
    };
    match entry.value.as_map() {
        Some(pairs) if pairs.iter().all(|p| p.value.as_str().is_some()) => pairs
            .iter()
            .map(|p| {
                (
                    p.key.clone(),
                    p.value.as_str().unwrap_or_default().to_string(),
                )
            })
            .collect(),
        _ => {
            bad.push(
                Diagnostic::error(
                    CheckId::Skills,
                    file,
                    entry.value.pos,
                    "metadata must map string keys to string values; skill skipped",
                )
                .value(entry.value.snippet()),
            );
            Vec::new()
        }
    }
}

/// The YAML text of a `---` frontmatter block, padded so that positions match the file: the
/// opening line becomes a comment and everything from the closing line on is dropped.
fn extract_frontmatter(text: &str) -> Result<String, &'static str> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or("missing YAML frontmatter")?;
    if first.trim_end() != "---" {
        return Err("missing YAML frontmatter");
    }
    let mut body = String::from("#\n");
    for line in lines {
        if line.trim_end() == "---" && line.ends_with('\n') {
            return Ok(body);
        }
        body.push_str(line);
    }
    Err("unterminated YAML frontmatter (no closing `---` line)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "summarize", "pdf-tools", "a1-b2"] {
            assert!(valid_skill_name(good), "{good}");
        }
        for bad in ["", "A", "a--b", "-a", "a-", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!valid_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn frontmatter_positions_match_the_file() {
        let fm = extract_frontmatter("---\nname: x\ndescription: y\n---\nbody\n").unwrap();
        let parsed = yaml::parse(&fm, Limits::default()).unwrap();
        assert_eq!(parsed.root.get("description").unwrap().key_pos.line, 3);
        assert!(extract_frontmatter("name: x\n").is_err());
        assert!(extract_frontmatter("---\nname: x\n---").is_err());
    }
}
