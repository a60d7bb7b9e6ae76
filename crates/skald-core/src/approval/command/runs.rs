//! What a command line runs: the programs behind keywords, runners (`env`, `xargs`,
//! `sudo`, …) and shells (`sh -c`), so a rule is matched against every program a line
//! starts, not only its first word.

use super::*;

pub(super) fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What a simple command runs: its program, the programs that one runs from the rest of
/// its words, and the scripts handed to a shell with `-c`, `eval` or `trap`.
pub(super) enum Run<'a> {
    Program(usize),
    Script(std::borrow::Cow<'a, str>),
    /// A program the shell works out when it runs (`$x`, `r?`): it may be any.
    Unknown,
}

/// Words that start a command in the shell's grammar and run the one after them.
pub(super) const KEYWORDS: &[&str] = &[
    "!", "if", "then", "else", "elif", "while", "until", "do", "coproc",
];

/// Programs that run the rest of their words as a command, and their options that take a
/// value as the next word (so the value is not mistaken for the program). A group of short
/// options ending in one of these (`sudo -iu root`) takes one too.
pub(super) const RUNNERS: &[(&str, &[&str])] = &[
    (
        "env",
        &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
    ),
    (
        "sudo",
        &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-R",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--chroot",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("nohup", &[]),
    ("nice", &["-n", "--adjustment"]),
    (
        "ionice",
        &["-c", "-n", "-p", "--class", "--classdata", "--pid"],
    ),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("time", &["-f", "-o", "--format", "--output"]),
    ("exec", &["-a"]),
    ("command", &[]),
    ("builtin", &[]),
    (
        "xargs",
        &[
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
    ),
    (
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
    ),
    ("setsid", &[]),
    ("chrt", &[]),
    ("taskset", &[]),
];

/// Options of `env` whose value is itself a command line.
pub(super) const ENV_SPLIT: &[&str] = &["-S", "--split-string"];

/// Whether the option word `w` takes the next word as its value, given the runner's list.
pub(super) fn takes_value(w: &str, listed: &[&str]) -> bool {
    if listed.contains(&w) {
        return true;
    }
    // `-iu` = `-i -u`: the last of a group of short options may take a value.
    !w.starts_with("--")
        && w.len() > 2
        && w.chars()
            .last()
            .is_some_and(|c| listed.contains(&format!("-{c}").as_str()))
}

/// Program names compare as the file system does: without case where it ignores case.
pub(super) fn same_program(a: &str, b: &str) -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

pub(super) fn runs<'a>(words: &'a [String], expanded: &[bool]) -> Vec<Run<'a>> {
    use std::borrow::Cow;
    let mut out = Vec::new();
    let mut i = 0;
    let assignment = |w: &str| w.split_once('=').is_some_and(|(name, _)| is_name(name));
    let dynamic = |i: usize| expanded.get(i).copied().unwrap_or(false);
    while i < words.len() {
        while i < words.len() && assignment(&words[i]) {
            i += 1;
        }
        let Some(word) = words.get(i) else { break };
        if dynamic(i) {
            out.push(Run::Unknown);
            break;
        }
        out.push(Run::Program(i));
        let name = file_name(word);
        if KEYWORDS.contains(&name) {
            i += 1;
            continue;
        }
        if SHELLS.contains(&name) {
            // `sh -c 'script'` (also `-lc`, `-ec`, `-o pipefail -c`, `+x -c`, `-c -- …`):
            // the script is a command line too.
            let mut j = i + 1;
            while let Some(w) = words
                .get(j)
                .filter(|w| w.starts_with('-') || w.starts_with('+'))
            {
                j += 1;
                if matches!(
                    w.as_str(),
                    "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
                ) {
                    j += 1; // the option's value
                } else if w.starts_with('-') && !w.starts_with("--") && w.contains('c') {
                    if words.get(j).is_some_and(|n| n == "--") {
                        j += 1;
                    }
                    match words.get(j) {
                        Some(_) if dynamic(j) => out.push(Run::Unknown),
                        Some(script) => out.push(Run::Script(Cow::Borrowed(script))),
                        None => {}
                    }
                    break;
                }
            }
            break;
        }
        // `eval` runs its words joined; `trap` its first argument, later.
        if name == "eval" || name == "trap" {
            let mut rest = i + 1;
            while words.get(rest).is_some_and(|w| w.starts_with('-')) {
                rest += 1;
                if words[rest - 1] == "--" {
                    break;
                }
            }
            if expanded[rest.min(expanded.len())..].contains(&true) {
                out.push(Run::Unknown);
            } else if name == "eval" {
                out.push(Run::Script(Cow::Owned(
                    words[rest.min(words.len())..].join(" "),
                )));
            } else if let Some(action) = words.get(rest) {
                out.push(Run::Script(Cow::Borrowed(action)));
            }
            break;
        }
        let Some((_, listed)) = RUNNERS.iter().find(|(r, _)| *r == name) else {
            break;
        };
        i += 1;
        // Its options (and their values), then, for `timeout`, the duration.
        while let Some(w) = words.get(i).filter(|w| w.starts_with('-') || dynamic(i)) {
            // `sudo $opts rm`: the options may be anything, the program too.
            if dynamic(i) {
                out.push(Run::Unknown);
                return out;
            }
            if w == "--" {
                i += 1;
                break;
            }
            // `env -S 'rm -rf x'`: the value is a command line of its own.
            if name == "env" {
                let split = match w.split_once('=') {
                    Some((opt, value)) if ENV_SPLIT.contains(&opt) => Some(value),
                    None if ENV_SPLIT.contains(&w.as_str()) => words.get(i + 1).map(String::as_str),
                    _ => None,
                };
                if let Some(script) = split {
                    out.push(Run::Script(Cow::Borrowed(script)));
                }
            }
            i += if takes_value(w, listed) { 2 } else { 1 };
        }
        if matches!(name, "timeout" | "chrt" | "taskset") {
            i += 1;
        }
    }
    out
}
