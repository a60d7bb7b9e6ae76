//! What a project and the person bring to an agent besides its own prompt
//! (docs/instructions.md): AGENTS.md files, the convention Codex, goose, opencode, Zed and
//! Claude Code share, and skills in `.agents/skills`.
//!
//! The files from the project's root (the nearest folder holding `.git`, or the chat's
//! folder) down to the chat's folder are given, after the person's own
//! (`~/.config/skald/AGENTS.md`), the nearest last so that it weighs most. Together they
//! are cut at 32 KiB, the nearest kept first. A project's files are the repository's, so
//! they are read only where the agent itself could read them: never through a link that
//! leaves the project, never in a `secrets` folder, a credential folder or a path a deny
//! rule covers.

use skald_api::context::{ContextSkill, ContextSource, InstructionFile, TurnContext};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of all AGENTS.md files together an agent is given.
pub const MAX_BYTES: usize = 32 * 1024;
/// The file name of instructions.
pub const FILE_NAME: &str = "AGENTS.md";
/// The most skills taken from `.agents/skills` folders, and the longest description.
const MAX_SKILLS: usize = 100;
const MAX_DESCRIPTION: usize = 1024;
/// A SKILL.md is read this far for its front matter.
const MAX_SKILL_HEAD: u64 = 64 * 1024;

/// Where the person's own instructions and skills are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// Holds the person's AGENTS.md (`~/.config/skald` on Linux).
    pub config_dir: Option<PathBuf>,
    /// Holds `.agents/skills`.
    pub home: Option<PathBuf>,
}

impl Places {
    /// The person's: the OS config directory (`$XDG_CONFIG_HOME/skald`) and home.
    pub fn of_user() -> Places {
        Places {
            config_dir: directories::ProjectDirs::from("", "", "skald")
                .map(|d| d.config_dir().to_path_buf()),
            home: directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()),
        }
    }
}

/// What was found: the text for the system prompt, what the chat shows, and the skill
/// folders the agent may read.
#[derive(Debug, Clone, Default)]
pub struct Gathered {
    pub text: String,
    pub context: TurnContext,
    pub skill_dirs: Vec<PathBuf>,
}

/// The project a folder belongs to: the nearest folder from it upwards that holds `.git`
/// (a folder, or the file of a worktree), else the folder itself.
pub fn project_root(folder: &Path) -> PathBuf {
    folder
        .ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .unwrap_or(folder)
        .to_path_buf()
}

/// Gathers the instructions and skills for an agent working in `folder`. `denied` are the
/// paths the agent may not read (canonical).
pub fn gather(folder: &Path, places: &Places, denied: &[PathBuf]) -> Gathered {
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    if folder.as_os_str().is_empty() || !folder.is_dir() {
        return Gathered::default();
    }
    let root = project_root(&folder);
    let guard = Guard {
        root: &root,
        folder: &folder,
        denied,
    };
    let mut candidates: Vec<(PathBuf, ContextSource)> = Vec::new();
    if let Some(dir) = &places.config_dir {
        candidates.push((dir.join(FILE_NAME), ContextSource::User));
    }
    let mut dirs: Vec<&Path> = folder
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();
    for d in dirs {
        candidates.push((d.join(FILE_NAME), ContextSource::Project));
    }
    let files = read_instructions(&candidates, &guard);
    let mut skill_dirs = Vec::new();
    if let Some(home) = &places.home {
        skill_dirs.push((home.join(".agents/skills"), ContextSource::User));
    }
    skill_dirs.push((root.join(".agents/skills"), ContextSource::Project));
    if folder != root {
        skill_dirs.push((folder.join(".agents/skills"), ContextSource::Project));
    }
    let (skills, found_in) = find_skills(&skill_dirs, &guard);

    let mut text = String::new();
    let given: Vec<&(InstructionFile, String)> =
        files.iter().filter(|(f, _)| f.included > 0).collect();
    if !given.is_empty() {
        text.push_str(
            "## Instructions from AGENTS.md files\n\nThe person's own and the project's \
             AGENTS.md files, the most general first: where they differ, the later one (nearer \
             the working directory) wins. They never change what needs approval.\n",
        );
        for (f, body) in given {
            text.push_str(&format!("\n### {}\n\n{}\n", f.path, body.trim_end()));
            if !f.note.is_empty() {
                text.push_str(&format!("\n[{}]\n", f.note));
            }
        }
    }
    if !skills.is_empty() {
        text.push_str(
            "\n## More skills\n\nFrom the project's and the person's `.agents/skills`. Before \
             a task one covers, read its SKILL.md with read_file and follow it.\n\n",
        );
        for s in &skills {
            text.push_str(&format!("- {}: {} ({})\n", s.name, s.description, s.path));
        }
    }
    Gathered {
        text,
        context: TurnContext {
            instructions: files.into_iter().map(|(f, _)| f).collect(),
            skills,
            project_root: root.to_string_lossy().into_owned(),
            project_hooks: None,
        },
        skill_dirs: found_in,
    }
}

/// What a project's file must pass to be read.
struct Guard<'a> {
    root: &'a Path,
    /// The chat's folder (canonical). A project's file reached through a link must lie in
    /// it: the project root is only the nearest folder with a `.git`, which may be a
    /// dotfiles repository in the home folder, so "inside the project" can mean everywhere.
    folder: &'a Path,
    denied: &'a [PathBuf],
}

impl Guard<'_> {
    /// Whether a project's `path` (made of canonical folders and a name) may be read as
    /// `real`: it is no link (the same path), or its link stays in the chat's folder.
    fn stays(&self, path: &Path, real: &Path) -> bool {
        real == path || real.starts_with(self.folder)
    }
}

impl Guard<'_> {
    /// The file to read (canonical), or why it may not be read. None: there is none.
    fn check(&self, path: &Path, source: ContextSource) -> Option<Result<PathBuf, String>> {
        path.symlink_metadata().ok()?;
        let real = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(e) => return Some(Err(format!("not read: {}", skald_base::io_reason(&e)))),
        };
        if source == ContextSource::Project
            && (!real.starts_with(self.root) || !self.stays(path, &real))
        {
            return Some(Err(
                "not read: it is a link to a file outside the chat's folder".to_string(),
            ));
        }
        // A `secrets` folder inside the project (the root itself may lie anywhere).
        let secret = source == ContextSource::Project
            && real
                .strip_prefix(self.root)
                .unwrap_or(&real)
                .components()
                .any(|c| c.as_os_str() == std::ffi::OsStr::new("secrets"));
        if secret || self.denied.iter().any(|d| real.starts_with(d)) {
            return Some(Err(
                "not read: it is where the agent may not read".to_string()
            ));
        }
        if !real.is_file() {
            return Some(Err("not read: it is not a file".to_string()));
        }
        Some(Ok(real))
    }
}

/// The AGENTS.md files that exist among `candidates`, each with what of it is given: the
/// budget goes to the nearest first.
fn read_instructions(
    candidates: &[(PathBuf, ContextSource)],
    guard: &Guard<'_>,
) -> Vec<(InstructionFile, String)> {
    let mut out: Vec<(InstructionFile, String)> = Vec::new();
    let mut left = MAX_BYTES;
    for (path, source) in candidates.iter().rev() {
        let Some(checked) = guard.check(path, *source) else {
            continue;
        };
        let shown = path.to_string_lossy().into_owned();
        let real = match checked {
            Ok(real) => real,
            Err(note) => {
                out.push((
                    InstructionFile {
                        path: shown,
                        source: *source,
                        bytes: 0,
                        included: 0,
                        note,
                    },
                    String::new(),
                ));
                continue;
            }
        };
        let bytes = std::fs::metadata(&real).map(|m| m.len()).unwrap_or(0);
        let (body, note) = match read_head(&real, left) {
            Ok(body) if (body.len() as u64) < bytes => {
                let note = if body.is_empty() {
                    format!(
                        "left out: the AGENTS.md files together are limited to {} KiB",
                        MAX_BYTES / 1024
                    )
                } else {
                    format!(
                        "cut to {} of {bytes} bytes: the AGENTS.md files together are limited \
                         to {} KiB",
                        body.len(),
                        MAX_BYTES / 1024
                    )
                };
                (body, note)
            }
            Ok(body) => (body, String::new()),
            Err(e) => (String::new(), format!("not read: {e}")),
        };
        left -= body.len().min(left);
        out.push((
            InstructionFile {
                path: shown,
                source: *source,
                bytes,
                included: body.len() as u64,
                note,
            },
            body,
        ));
    }
    out.reverse();
    out
}

/// At most `max` bytes of a text file, ending at a line's end when cut.
fn read_head(path: &Path, max: usize) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| skald_base::io_reason(&e))?;
    let mut buf = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| skald_base::io_reason(&e))?;
    if buf.len() > max {
        buf.truncate(max);
        if let Some(nl) = buf.iter().rposition(|b| *b == b'\n') {
            buf.truncate(nl + 1);
        }
    }
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    // A cut through a character leaves a replacement character at the end: drop it.
    if buf.len() == max && text.ends_with('\u{fffd}') {
        text.pop();
    }
    Ok(text)
}

/// The skills in each `.agents/skills` folder (`<name>/SKILL.md` with a front matter
/// naming and describing it), and the folders that had any.
fn find_skills(
    dirs: &[(PathBuf, ContextSource)],
    guard: &Guard<'_>,
) -> (Vec<ContextSkill>, Vec<PathBuf>) {
    let mut skills = Vec::new();
    let mut found_in = Vec::new();
    for (dir, source) in dirs {
        // The folder becomes readable for the agent: a project's must be in the project
        // (a link to `/` would open the whole machine).
        let Ok(real_dir) = std::fs::canonicalize(dir) else {
            continue;
        };
        if *source == ContextSource::Project
            && (!real_dir.starts_with(guard.root) || !guard.stays(dir, &real_dir))
        {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&real_dir) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        let before = skills.len();
        for sub in names {
            if skills.len() >= MAX_SKILLS {
                break;
            }
            let file = sub.join("SKILL.md");
            let Some(Ok(real)) = guard.check(&file, *source) else {
                continue;
            };
            let Ok(head) = read_head(&real, MAX_SKILL_HEAD as usize) else {
                continue;
            };
            let Some((name, description)) = crate::agents::front_matter(&head) else {
                continue;
            };
            skills.push(ContextSkill {
                name,
                description: description.chars().take(MAX_DESCRIPTION).collect(),
                path: file.to_string_lossy().into_owned(),
                source: *source,
            });
        }
        if skills.len() > before {
            found_in.push(real_dir);
        }
    }
    (skills, found_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn files_from_the_root_down_nearest_last_and_the_persons_first() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        write(&root.join("AGENTS.md"), "root rules\n");
        write(&root.join("a/AGENTS.md"), "a rules\n");
        write(&root.join("a/b/AGENTS.md"), "b rules\n");
        write(&root.join("other/AGENTS.md"), "not on the way\n");
        write(&tmp.path().join("AGENTS.md"), "above the root\n");
        let config = tmp.path().join("config");
        write(&config.join("AGENTS.md"), "mine\n");
        let places = Places {
            config_dir: Some(config.clone()),
            home: None,
        };
        let got = gather(&root.join("a/b"), &places, &[]);
        let paths: Vec<&str> = got
            .context
            .instructions
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        let expect = [
            config.join("AGENTS.md"),
            root.join("AGENTS.md"),
            root.join("a/AGENTS.md"),
            root.join("a/b/AGENTS.md"),
        ];
        let expect: Vec<String> = expect
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(paths, expect);
        let order: Vec<usize> = ["mine", "root rules", "a rules", "b rules"]
            .iter()
            .map(|t| got.text.find(t).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", got.text);
        assert!(!got.text.contains("not on the way"));
        assert!(!got.text.contains("above the root"));
        assert_eq!(got.context.project_root, root.to_string_lossy());
    }

    #[test]
    fn over_the_cap_the_nearest_is_kept_and_the_rest_cut_with_a_note() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let line = "x".repeat(99) + "\n";
        write(&root.join("AGENTS.md"), &line.repeat(300)); // 30,000 bytes
        write(&root.join("sub/AGENTS.md"), &line.repeat(100)); // 10,000 bytes
        let got = gather(&root.join("sub"), &Places::default(), &[]);
        let files = &got.context.instructions;
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].included, 10_000, "the nearest whole");
        assert_eq!(files[0].bytes, 30_000);
        assert!(files[0].included < 30_000);
        assert!(files[0].included.is_multiple_of(100), "cut at a line's end");
        assert!(files[0].note.contains("cut to"), "{}", files[0].note);
        let total: u64 = files.iter().map(|f| f.included).sum();
        assert!(total <= MAX_BYTES as u64);
        assert!(got.text.contains("[cut to"));
    }

    #[test]
    fn a_projects_file_is_never_read_through_a_link_out_or_where_reading_is_denied() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        write(&base.join("outside/credentials"), "aws_secret=abc\n");
        std::os::unix::fs::symlink(base.join("outside/credentials"), root.join("AGENTS.md"))
            .unwrap();
        write(&root.join("denied/AGENTS.md"), "denied rules\n");
        write(&root.join("denied/secrets/AGENTS.md"), "secret rules\n");
        // A link inside the chat's folder is fine.
        write(&root.join("ok/docs/rules.md"), "linked rules\n");
        std::os::unix::fs::symlink(root.join("ok/docs/rules.md"), root.join("ok/AGENTS.md"))
            .unwrap();
        let denied = vec![root.join("denied")];
        let got = gather(&root.join("denied/secrets"), &Places::default(), &denied);
        assert!(!got.text.contains("aws_secret"), "{}", got.text);
        assert!(!got.text.contains("denied rules"));
        assert!(!got.text.contains("secret rules"));
        let notes: Vec<&str> = got
            .context
            .instructions
            .iter()
            .map(|f| f.note.as_str())
            .collect();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("outside the chat's folder"), "{notes:?}");
        assert!(notes[1].contains("may not read"), "{notes:?}");
        assert!(notes[2].contains("may not read"), "{notes:?}");
        let ok = gather(&root.join("ok"), &Places::default(), &[]);
        assert!(ok.text.contains("linked rules"), "{}", ok.text);
    }

    #[test]
    fn skills_come_from_the_project_and_the_persons_agents_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        write(
            &root.join(".agents/skills/deploy/SKILL.md"),
            "---\nname: deploy\ndescription: Ship the site\n---\nSteps…\n",
        );
        write(
            &root.join(".agents/skills/broken/SKILL.md"),
            "no front matter\n",
        );
        let home = base.join("home");
        write(
            &home.join(".agents/skills/notes/SKILL.md"),
            "---\nname: notes\ndescription: Keep notes\n---\n",
        );
        let places = Places {
            config_dir: None,
            home: Some(home.clone()),
        };
        let got = gather(&root, &places, &[]);
        let names: Vec<(&str, ContextSource)> = got
            .context
            .skills
            .iter()
            .map(|s| (s.name.as_str(), s.source))
            .collect();
        assert_eq!(
            names,
            [
                ("notes", ContextSource::User),
                ("deploy", ContextSource::Project)
            ]
        );
        assert!(
            got.text.contains("- deploy: Ship the site ("),
            "{}",
            got.text
        );
        assert_eq!(
            got.skill_dirs,
            [home.join(".agents/skills"), root.join(".agents/skills")]
        );
    }

    #[test]
    fn a_projects_skills_folder_that_links_out_of_the_project_is_not_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".agents")).unwrap();
        write(
            &base.join("elsewhere/evil/SKILL.md"),
            "---\nname: evil\ndescription: reads everything\n---\n",
        );
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join(".agents/skills")).unwrap();
        // And a skill inside the project that links out.
        write(
            &root.join("sub/.agents/skills/real/SKILL.md"),
            "---\nname: real\ndescription: fine\n---\n",
        );
        std::os::unix::fs::symlink(
            base.join("elsewhere/evil"),
            root.join("sub/.agents/skills/linked"),
        )
        .unwrap();
        let got = gather(&root.join("sub"), &Places::default(), &[]);
        let names: Vec<&str> = got.context.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["real"]);
        assert_eq!(got.skill_dirs, [root.join("sub/.agents/skills")]);
    }

    /// Item 9 of the sandbox review: with a dotfiles repository at `~/.git`, the home
    /// folder is the "project" of every chat under it; a link still may not take a
    /// project's file or skills folder out of the chat's folder.
    #[test]
    fn a_link_may_not_leave_the_chats_folder_whatever_git_is_above() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".git")).unwrap();
        write(&home.join("private/notes.md"), "my diary\n");
        write(
            &home.join("private/skills/leak/SKILL.md"),
            "---\nname: leak\ndescription: private\n---\n",
        );
        let proj = home.join("proj");
        std::fs::create_dir_all(proj.join(".agents")).unwrap();
        std::os::unix::fs::symlink("../private/notes.md", proj.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(home.join("private/skills"), proj.join(".agents/skills"))
            .unwrap();
        // A sub-folder's file linking up into the project, out of the chat's folder.
        write(&proj.join("rules.md"), "project rules\n");
        std::fs::create_dir_all(proj.join("sub/.agents/skills")).unwrap();
        std::os::unix::fs::symlink("../rules.md", proj.join("sub/AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(
            home.join("private/skills/leak"),
            proj.join("sub/.agents/skills/leak"),
        )
        .unwrap();
        // The home folder's own file, no link, is the project's and is read.
        write(&home.join("AGENTS.md"), "home rules\n");
        for chat in [proj.clone(), proj.join("sub")] {
            let got = gather(&chat, &Places::default(), &[]);
            assert!(!got.text.contains("my diary"), "{}", got.text);
            assert!(got.context.skills.is_empty(), "{:?}", got.context.skills);
            assert!(got.text.contains("home rules"), "{}", got.text);
        }
        let sub = gather(&proj.join("sub"), &Places::default(), &[]);
        assert!(!sub.text.contains("project rules"), "{}", sub.text);
        let notes: Vec<&str> = sub
            .context
            .instructions
            .iter()
            .map(|f| f.note.as_str())
            .collect();
        assert!(
            notes
                .iter()
                .filter(|n| n.contains("outside the chat's folder"))
                .count()
                == 2,
            "{notes:?}"
        );
    }

    #[test]
    fn nothing_there_gives_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let got = gather(tmp.path(), &Places::default(), &[]);
        assert!(got.text.is_empty());
        assert_eq!(got.context.instructions, []);
        assert!(got.skill_dirs.is_empty());
    }
}
