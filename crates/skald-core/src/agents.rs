//! Agents and skills: what each agent is told, assembled from the files shipped with Skald
//! (`agents/`, `skills/` in the repository, compiled in) and the user's own same-named
//! folders in the data directory, which win.
//!
//! An agent is `agents/<id>/meta.json` (name, description, type chat|task|system,
//! instructions, model, strength) and `agents/<id>/AGENT.md`, whose directives are
//! expanded: `<!-- INCLUDE path -->` (a file under `agents/`), `<!-- AGENTS_LIST -->` (the
//! task agents one can delegate to) and `<!-- MCP_LIST -->` (the MCP servers). A skill is
//! `skills/<name>/SKILL.md` with `name` and `description` in its front matter; the index of
//! skills is appended to every agent's prompt and the agent reads a skill when it needs it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The files shipped with Skald, as (path under the repository, contents).
const BUNDLED: &[(&str, &str)] = &[
    (
        "agents/_common/working-rules.md",
        include_str!("../../../agents/_common/working-rules.md"),
    ),
    (
        "agents/main/meta.json",
        include_str!("../../../agents/main/meta.json"),
    ),
    (
        "agents/main/AGENT.md",
        include_str!("../../../agents/main/AGENT.md"),
    ),
    (
        "agents/software-engineer/meta.json",
        include_str!("../../../agents/software-engineer/meta.json"),
    ),
    (
        "agents/software-engineer/AGENT.md",
        include_str!("../../../agents/software-engineer/AGENT.md"),
    ),
    (
        "agents/researcher/meta.json",
        include_str!("../../../agents/researcher/meta.json"),
    ),
    (
        "agents/researcher/AGENT.md",
        include_str!("../../../agents/researcher/AGENT.md"),
    ),
    (
        "skills/code-review/SKILL.md",
        include_str!("../../../skills/code-review/SKILL.md"),
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// Talks with the user.
    Chat,
    /// Does one delegated job.
    Task,
    /// Internal; never offered to the user or as a delegate.
    System,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMeta {
    pub name: String,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: AgentKind,
    /// How to call this agent well, shown to agents that may delegate to it.
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub strength: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Agent {
    pub id: String,
    pub meta: AgentMeta,
    prompt: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Where the agent can read it.
    pub path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("no agent `{0}`; agents: {1}")]
    Unknown(String, String),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

/// Every agent and skill, loaded once.
#[derive(Debug, Clone)]
pub struct Library {
    agents: BTreeMap<String, Agent>,
    /// Files under `agents/` by relative path, for `<!-- INCLUDE -->`.
    files: BTreeMap<String, String>,
    skills: Vec<Skill>,
}

impl Library {
    /// Loads the bundled agents and skills overlaid with `<data dir>/agents` and
    /// `<data dir>/skills`. Bundled skills are written to `<data dir>/bundled/skills` so
    /// that agents can read them with their file tools.
    pub fn load(data_dir: &Path) -> Result<Library, AgentError> {
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        let mut skill_files: BTreeMap<String, (String, PathBuf)> = BTreeMap::new();
        let mut wrote = false;
        for (path, text) in BUNDLED {
            if let Some(rel) = path.strip_prefix("agents/") {
                files.insert(rel.to_string(), (*text).to_string());
            } else if let Some(rel) = path.strip_prefix("skills/") {
                let on_disk = data_dir.join("bundled/skills").join(rel);
                wrote |= materialize(&on_disk, text)?;
                skill_files.insert(rel.to_string(), ((*text).to_string(), on_disk));
            }
        }
        if wrote {
            // Like everything in the data directory: the user's alone.
            keep_tree_private(&data_dir.join("bundled"));
        }
        overlay(&data_dir.join("agents"), &mut |rel, text, _| {
            files.insert(rel, text);
        });
        overlay(&data_dir.join("skills"), &mut |rel, text, path| {
            skill_files.insert(rel, (text, path));
        });

        let mut agents = BTreeMap::new();
        for (rel, text) in &files {
            let Some(id) = rel.strip_suffix("/meta.json") else {
                continue;
            };
            if id.starts_with('_') || id.contains('/') {
                continue;
            }
            let meta: AgentMeta = serde_json::from_str(text).map_err(|e| AgentError::Invalid {
                path: format!("agents/{rel}"),
                message: e.to_string(),
            })?;
            let prompt = files
                .get(&format!("{id}/AGENT.md"))
                .cloned()
                .ok_or_else(|| AgentError::Invalid {
                    path: format!("agents/{id}"),
                    message: "has meta.json but no AGENT.md".to_string(),
                })?;
            agents.insert(
                id.to_string(),
                Agent {
                    id: id.to_string(),
                    meta,
                    prompt,
                },
            );
        }
        let mut skills = Vec::new();
        for (rel, (text, path)) in skill_files {
            if !rel.ends_with("/SKILL.md") {
                continue;
            }
            let (name, description) = front_matter(&text).ok_or_else(|| AgentError::Invalid {
                path: format!("skills/{rel}"),
                message: "needs front matter with `name` and `description`".to_string(),
            })?;
            skills.push(Skill {
                name,
                description,
                path,
            });
        }
        Ok(Library {
            agents,
            files,
            skills,
        })
    }

    pub fn agents(&self) -> impl Iterator<Item = &Agent> {
        self.agents.values()
    }

    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The folders skills live in: agents may always read them.
    pub fn skill_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .skills
            .iter()
            .filter_map(|s| s.path.parent()?.parent().map(Path::to_path_buf))
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    pub fn get(&self, id: &str) -> Result<&Agent, AgentError> {
        self.agents.get(id).ok_or_else(|| {
            AgentError::Unknown(
                id.to_string(),
                self.agents.keys().cloned().collect::<Vec<_>>().join(", "),
            )
        })
    }

    /// The static part of an agent's system prompt: its AGENT.md with directives expanded,
    /// then the index of skills. It changes only when files change, so providers can cache
    /// it.
    pub fn system_prompt(&self, id: &str, mcp_list: &str) -> Result<String, AgentError> {
        let agent = self.get(id)?;
        let mut out = self.expand(&agent.prompt, id, mcp_list, 0);
        if !self.skills.is_empty() {
            out.push_str(
                "\n\n## Skills\n\nBefore a task that a skill covers, read its SKILL.md with \
                 read_file and follow it.\n\n",
            );
            for s in &self.skills {
                out.push_str(&format!(
                    "- {}: {} ({})\n",
                    s.name,
                    s.description,
                    s.path.display()
                ));
            }
        }
        Ok(out)
    }

    fn expand(&self, text: &str, self_id: &str, mcp_list: &str, depth: usize) -> String {
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            let t = line.trim();
            if let Some(path) = t
                .strip_prefix("<!-- INCLUDE ")
                .and_then(|r| r.strip_suffix("-->"))
                .map(str::trim)
            {
                match self.files.get(path) {
                    Some(inc) if depth < 4 => {
                        out.push_str(self.expand(inc, self_id, mcp_list, depth + 1).trim_end());
                    }
                    _ => {
                        tracing::warn!(path, "agent prompt includes a missing file");
                        out.push_str(&format!("(missing include: {path})"));
                    }
                }
            } else if t == "<!-- AGENTS_LIST -->" {
                out.push_str(&self.agents_list(self_id));
            } else if t == "<!-- MCP_LIST -->" {
                out.push_str(mcp_list);
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    }

    fn agents_list(&self, self_id: &str) -> String {
        let lines: Vec<String> = self
            .agents
            .values()
            .filter(|a| a.meta.kind == AgentKind::Task && a.id != self_id)
            .map(|a| {
                let how = a
                    .meta
                    .instructions
                    .as_deref()
                    .map(|i| format!(" How to call it: {i}"))
                    .unwrap_or_default();
                format!(
                    "- `{}` ({}): {}{how}",
                    a.id, a.meta.name, a.meta.description
                )
            })
            .collect();
        if lines.is_empty() {
            "No task agents are available.".to_string()
        } else {
            lines.join("\n")
        }
    }
}

/// Writes a bundled file where agents can read it, when it is missing or outdated.
/// Writes a bundled file unless it is there already; whether it wrote.
fn materialize(path: &Path, text: &str) -> Result<bool, AgentError> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(false);
    }
    skald_base::atomic::write_atomic(path, text.as_bytes()).map_err(|e| AgentError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(true)
}

/// `crate::paths::keep_private` for a folder and everything in it.
fn keep_tree_private(root: &Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        crate::paths::keep_private(&dir);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                crate::paths::keep_private(&path);
            }
        }
    }
}

/// Calls `add(relative path, text, path)` for every file under `root` (two levels: the
/// `<id>/file` layout), ignoring what cannot be read.
fn overlay(root: &Path, add: &mut dyn FnMut(String, String, PathBuf)) {
    let Ok(dirs) = std::fs::read_dir(root) else {
        return;
    };
    for dir in dirs.flatten() {
        let Ok(entries) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for f in entries.flatten() {
            let path = f.path();
            if !path.is_file() {
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => add(
                    format!(
                        "{}/{}",
                        dir.file_name().to_string_lossy(),
                        f.file_name().to_string_lossy()
                    ),
                    text,
                    path,
                ),
                Err(e) => tracing::warn!(path = %path.display(), %e, "cannot read"),
            }
        }
    }
}

/// `name` and `description` from a `---` front matter block.
pub(crate) fn front_matter(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix("---")?;
    let end = rest.find("\n---")?;
    let (mut name, mut description) = (None, None);
    for line in rest[..end].lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().trim_matches('"').to_string();
            match k.trim() {
                "name" => name = Some(v),
                "description" => description = Some(v),
                _ => {}
            }
        }
    }
    Some((name?, description?))
}

/// The short dynamic tail that ends the context: time rounded down to 15 minutes (so it
/// changes rarely), the OS and the working directory.
pub fn dynamic_tail(now: std::time::SystemTime, working_dir: &Path) -> String {
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let secs = secs - secs % (15 * 60);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "Current time: {y:04}-{m:02}-{d:02} {:02}:{:02} UTC. OS: {}. Working directory: {}.",
        rem / 3600,
        (rem % 3600) / 60,
        std::env::consts::OS,
        working_dir.display()
    )
}

/// Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_agents_load_and_expand() {
        let data = tempfile::tempdir().unwrap();
        let lib = Library::load(data.path()).unwrap();
        let ids: Vec<&str> = lib.agents().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["main", "researcher", "software-engineer"]);
        let prompt = lib
            .system_prompt("main", "No MCP servers are configured.")
            .unwrap();
        assert!(prompt.contains("## How you work"), "include expanded");
        assert!(prompt.contains("- `software-engineer` (Software engineer):"));
        assert!(prompt.contains("How to call it:"));
        assert!(prompt.contains("No MCP servers are configured."));
        assert!(!prompt.contains("<!--"), "every directive is expanded");
        assert!(prompt.contains("- code-review: Review a change"));
        // The skill is on disk where the agent can read it.
        let skill = &lib.skills()[0];
        assert!(
            std::fs::read_to_string(&skill.path)
                .unwrap()
                .contains("# Code review")
        );
        // A task agent does not list itself.
        let se = lib.system_prompt("software-engineer", "").unwrap();
        assert!(!se.contains("- `software-engineer`"));
    }

    #[test]
    fn user_folders_override_and_add() {
        let data = tempfile::tempdir().unwrap();
        let mine = data.path().join("agents/main");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(
            mine.join("AGENT.md"),
            "Be terse.\n<!-- INCLUDE _common/working-rules.md -->\n",
        )
        .unwrap();
        let extra = data.path().join("agents/writer");
        std::fs::create_dir_all(&extra).unwrap();
        std::fs::write(
            extra.join("meta.json"),
            r#"{"name": "Writer", "description": "Writes prose.", "type": "task"}"#,
        )
        .unwrap();
        std::fs::write(extra.join("AGENT.md"), "You write.").unwrap();
        let lib = Library::load(data.path()).unwrap();
        let main = lib.system_prompt("main", "").unwrap();
        assert!(main.starts_with("Be terse.\n## How you work"), "{main}");
        assert!(lib.get("writer").is_ok());
        let err = lib.get("nobody").unwrap_err();
        assert!(
            err.to_string()
                .contains("main, researcher, software-engineer, writer"),
            "{err}"
        );
    }

    #[test]
    fn broken_meta_is_reported_with_its_path() {
        let data = tempfile::tempdir().unwrap();
        let bad = data.path().join("agents/broken");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("meta.json"), "{ not json").unwrap();
        let err = Library::load(data.path()).unwrap_err();
        assert!(
            err.to_string().starts_with("agents/broken/meta.json:"),
            "{err}"
        );
    }

    #[test]
    fn dynamic_tail_rounds_to_a_quarter_hour() {
        // 2026-11-30 03:14:59 UTC
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_008_499);
        let tail = dynamic_tail(t, Path::new("/w"));
        assert!(
            tail.starts_with("Current time: 2026-11-30 03:00 UTC."),
            "{tail}"
        );
        assert!(tail.ends_with("Working directory: /w."));
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }
}
