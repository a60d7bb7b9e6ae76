//! The pattern "always allow" proposes for a command: its program and the words that name
//! what it does (a subcommand), never the arguments that change from call to call.

use super::*;

/// Programs that run other programs or code: a rule naming only them would allow anything
/// (with every runner the matcher sees through, `runs::RUNNERS`).
pub(super) const WRAPPERS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "env", "sudo", "doas", "su", "xargs", "find",
    "exec", "eval", "nohup", "timeout", "time", "nice", "watch", "cd", "source", ".",
];

/// Interpreters: what they run is their script or code argument, so it stays in the rule
/// (`python3 x.py`, never `python3`). Versioned names (`python3.12`) count as theirs.
pub(super) const INTERPRETERS: &[&str] = &[
    "python",
    "node",
    "perl",
    "ruby",
    "php",
    "deno",
    "bun",
    "npx",
    "pnpx",
    "bunx",
    "lua",
    "Rscript",
    "java",
    "pwsh",
    "tclsh",
    "awk",
    "gawk",
    "mawk",
    "sed",
    "osascript",
];

/// Programs whose arguments can make them run other programs or destroy what they name
/// (`tar --to-command=…`, `rm x` → `rm -rf ~`): a rule keeps the whole call.
pub(super) const WHOLE_CALL: &[&str] = &[
    "tar", "rsync", "ssh", "scp", "rm", "rmdir", "mv", "cp", "dd", "ln", "chmod", "chown", "chgrp",
    "kill", "pkill", "killall", "truncate", "shred", "install", "curl", "wget",
];

/// Programs driven by a subcommand: `cargo test`, `git status`.
pub(super) const SUBCOMMANDS: &[&str] = &[
    "cargo",
    "git",
    "npm",
    "pnpm",
    "yarn",
    "go",
    "make",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "pdm",
    "hatch",
    "pipx",
    "bundle",
    "dotnet",
    "mvn",
    "gradle",
    "systemctl",
    "brew",
    "apt",
    "apt-get",
];

/// Subcommands that run what the next word names (`uv run pytest`): it stays in the rule.
pub(super) const RUN_SUBCOMMANDS: &[&str] = &["run", "exec", "x", "dlx", "tool"];

/// Subcommands whose further words change what later commands do, or run anything
/// (`git config core.pager …`, `docker run IMAGE`): a rule keeps the whole call.
pub(super) const WHOLE_SUBCOMMANDS: &[(&str, &str)] = &[
    ("git", "config"),
    ("npm", "config"),
    ("pnpm", "config"),
    ("yarn", "config"),
    ("pip", "config"),
    ("pip3", "config"),
    ("cargo", "config"),
    ("docker", "run"),
    ("docker", "exec"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
];

/// The program's name as the lists above spell it: its file name, without a version
/// (`/usr/bin/python3.12` → `python`).
pub(super) fn program_kind(word: &str) -> &str {
    let name = file_name(word);
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if bare.is_empty() { name } else { bare }
}

/// `words` as a pattern that reads back as the same words: quoted where a word needs it.
pub(super) fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./,:%+@=-".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The leading words a rule proposed from `line` should use — general enough to matter,
/// never broader than what was approved in kind: the program and its subcommand for tools
/// driven by one (`cargo test`), and what a run subcommand runs (`uv run pytest`); the
/// whole command when it starts with flags (`git -C d status`), a variable assignment, a
/// program that runs other programs or code (`sh`, `env`, `python3 x.py`, `/bin/bash
/// x.sh`), one whose arguments decide what it destroys or runs (`rm x`, `tar xf a.tar`), or
/// a subcommand that changes later behaviour (`git config user.name x`); nothing for a
/// line of several commands or anything opaque.
pub fn proposed_pattern(line: &str) -> Option<String> {
    let cmd = parse(line);
    if cmd.opaque || cmd.parts.len() != 1 {
        return None;
    }
    let (words, expanded) = (cmd.parts.first()?, cmd.expanded.first()?);
    let program = words.first()?;
    let kind = program_kind(program);
    let flag = |w: &String| w.starts_with('-') || w.starts_with('+');
    let takes_subcommand = SUBCOMMANDS.contains(&kind);
    let all = words.len();
    // How many leading words the rule keeps.
    let keep = if program.contains('=')
        || [WRAPPERS, INTERPRETERS, WHOLE_CALL]
            .iter()
            .any(|list| list.contains(&kind) || list.contains(&file_name(program)))
        || RUNNERS
            .iter()
            .any(|(r, _)| *r == kind || *r == file_name(program))
    {
        all
    } else {
        match words.get(1) {
            Some(sub) if flag(sub) => all,
            Some(sub) if takes_subcommand && WHOLE_SUBCOMMANDS.contains(&(kind, sub.as_str())) => {
                all
            }
            Some(sub) if takes_subcommand && RUN_SUBCOMMANDS.contains(&sub.as_str()) => {
                match words.get(2) {
                    Some(target) if !flag(target) => 3,
                    _ => all,
                }
            }
            Some(_) if takes_subcommand => 2,
            _ => 1,
        }
    };
    // A word the shell expands (`$x`) cannot be matched as written.
    if expanded[..keep].contains(&true) {
        return None;
    }
    Some(join_words(&words[..keep]))
}
