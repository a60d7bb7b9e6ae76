//! Reading a shell command the way the approval gate must: split into the simple commands
//! it runs, with anything that could smuggle in another command flagged, so that an allow
//! rule for `cargo test` can never approve `cargo test; rm -rf ~`.

/// A command line, parsed for policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCommand {
    /// The words of each simple command (split on `;`, `&&`, `||`, `|`, `&` and newlines),
    /// comments left out.
    pub parts: Vec<Vec<String>>,
    /// For each word of `parts`: whether the shell works its text out only when it runs —
    /// a parameter (`$x`), a glob (`r?`), a brace expansion (`r{m,}`) — so the word as
    /// written is not what runs.
    pub expanded: Vec<Vec<bool>>,
    /// The line contains something a prefix rule cannot vouch for: command or process
    /// substitution, redirection, an unterminated quote, a subshell or group, an expansion
    /// the parser does not follow (`${x…}`, `$[…]`, `$'…'`), or a builtin that can run
    /// code kept in a variable or an alias (`let`, `[[`, `declare`, `alias`…).
    pub opaque: bool,
}

/// Builds one word: its text, and whether the shell expands any of it.
#[derive(Default)]
struct Word {
    text: String,
    started: bool,
    expanded: bool,
}

/// Splits a command line into simple commands and their words as `sh` reads them:
/// quotes, backslashes, comments (a `#` that starts a word, to the end of its line) and
/// blanks (space and tab only). Conservative by design: whatever it does not understand
/// makes the command opaque, and opaque commands never match an allow rule while every
/// deny and require rule applies to them.
pub fn parse(line: &str) -> ParsedCommand {
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut expanded: Vec<Vec<bool>> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut word = Word::default();
    let mut opaque = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Word, words: &mut Vec<Word>| {
        if word.started {
            // `[` and `[[` alone are the test commands, not globs.
            if word.text == "[" || word.text == "[[" {
                word.expanded = false;
            }
            words.push(std::mem::take(word));
        }
    };
    let end_part =
        |words: &mut Vec<Word>, parts: &mut Vec<Vec<String>>, expanded: &mut Vec<Vec<bool>>| {
            if !words.is_empty() {
                let (text, exp) = words.drain(..).map(|w| (w.text, w.expanded)).unzip();
                parts.push(text);
                expanded.push(exp);
            }
        };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                word.started = true;
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    word.text.push(q);
                }
                opaque |= !closed;
            }
            '"' => {
                word.started = true;
                let mut closed = false;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => {
                            closed = true;
                            break;
                        }
                        // Substitutions still run inside double quotes.
                        '`' => opaque = true,
                        '$' => opaque |= dollar(&mut chars, &mut word, true),
                        // Only these are escaped inside double quotes; before anything
                        // else the backslash stays (`"\a"` is `\a`).
                        '\\' => match chars.peek().copied() {
                            Some('\n') => {
                                chars.next(); // a backslash-newline continues the line
                            }
                            Some(n @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                word.text.push(n);
                            }
                            _ => word.text.push('\\'),
                        },
                        _ => word.text.push(q),
                    }
                }
                opaque |= !closed;
            }
            '\\' => match chars.next() {
                // A backslash-newline continues the line: it is no word (else `sudo \`, a
                // newline and ` rm x` would read as the program `""` and hide `rm`).
                Some('\n') | None => {}
                Some(n) => {
                    word.started = true;
                    word.text.push(n);
                }
            },
            // A comment: to the end of the line, whatever quotes or backslashes it holds
            // (`echo ok #'⏎touch x #'` runs `touch x`).
            '#' if !word.started => while chars.next_if(|n| *n != '\n').is_some() {},
            '`' => opaque = true,
            '$' => opaque |= dollar(&mut chars, &mut word, false),
            '<' | '>' | '(' | ')' => opaque = true,
            '{' | '}' if !word.started => opaque = true,
            // Brace expansion (bash: `r{m,}` is `rm r`) and globs (`/bin/r?`).
            '{' | '}' | '*' | '?' | '[' => {
                word.started = true;
                word.expanded = true;
                word.text.push(c);
            }
            ';' | '\n' | '|' | '&' => {
                end_word(&mut word, &mut words);
                // `&&`, `||`, `|&`: one separator.
                if matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                end_part(&mut words, &mut parts, &mut expanded);
            }
            ' ' | '\t' => end_word(&mut word, &mut words),
            c => {
                word.started = true;
                word.text.push(c);
            }
        }
    }
    end_word(&mut word, &mut words);
    end_part(&mut words, &mut parts, &mut expanded);
    let mut parsed = ParsedCommand {
        parts,
        expanded,
        opaque,
    };
    parsed.opaque |= runs_hidden_code(&parsed);
    parsed
}

/// After a `$`: reads what it expands, into `word`. Returns whether the expansion is one
/// this parser does not follow: a command substitution, arithmetic, bash's `$'…'` and
/// `$"…"` quoting (whose escapes it does not read: `$'\''` ends no quote), and every
/// `${…}` but a plain `${NAME}` (bash's `${x@P}` runs a value as a prompt, `${x:y}` does
/// arithmetic on `y`, which can run `a[$(…)]`).
fn dollar(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    word: &mut Word,
    quoted: bool,
) -> bool {
    word.started = true;
    match chars.peek().copied() {
        Some('(' | '[') => true,
        Some('\'' | '"') if !quoted => true,
        Some('{') => {
            chars.next();
            let mut name = String::new();
            let mut closed = false;
            while let Some(n) = chars.next_if(|n| *n != '"' || !quoted) {
                if n == '}' {
                    closed = true;
                    break;
                }
                name.push(n);
            }
            let plain = closed
                && (is_name(&name)
                    || (name.len() == 1
                        && name
                            .chars()
                            .all(|c| c.is_ascii_digit() || "@*#?-$!".contains(c))));
            word.expanded = true;
            word.text.push_str(&format!("${{{name}}}"));
            !plain
        }
        Some(n) if n.is_ascii_alphanumeric() || "_@*#?-$!".contains(n) => {
            word.expanded = true;
            word.text.push('$');
            false
        }
        // A `$` before anything else is a `$`.
        _ => {
            word.text.push('$');
            false
        }
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Variables whose value a shell runs, or reads as code, later: prompts (bash expands
/// `PS4` with command substitution for `set -x`), the start-up file of non-interactive
/// bash, exported functions, shell options. (`ENV` is only read by interactive shells,
/// and common as a plain setting: `ENV=prod ./deploy.sh`.)
const CODE_VARIABLES: &[&str] = &[
    "PS0=",
    "PS1=",
    "PS2=",
    "PS3=",
    "PS4=",
    "PROMPT_COMMAND=",
    "BASH_ENV=",
    "SHELLOPTS=",
    "BASHOPTS=",
    "BASH_FUNC_",
];

/// Builtins that can run code this parser cannot see: bash evaluates the values they
/// name as arithmetic (where `a[$(…)]` runs a command), aliases and hashed names make a
/// later word another program.
const CODE_BUILTINS: &[&str] = &[
    "let", "[[", "declare", "typeset", "local", "alias", "hash", "enable",
];

/// Builtins that take variable names, where an array subscript (`'a[$x]'`) is
/// evaluated as arithmetic.
const NAME_BUILTINS: &[&str] = &[
    "unset",
    "printf",
    "read",
    "mapfile",
    "readarray",
    "export",
    "readonly",
    "test",
    "[",
    "getopts",
    "wait",
];

/// Whether some simple command of the line runs code the words do not show.
fn runs_hidden_code(parsed: &ParsedCommand) -> bool {
    parsed
        .parts
        .iter()
        .zip(&parsed.expanded)
        .any(|(words, exp)| {
            words
                .iter()
                .any(|w| CODE_VARIABLES.iter().any(|v| w.starts_with(v)))
                || runs(words, exp).into_iter().any(|run| match run {
                    Run::Program(i) => {
                        let name = file_name(&words[i]);
                        CODE_BUILTINS.contains(&name)
                            || (NAME_BUILTINS.contains(&name)
                                && words[i + 1..].iter().any(|w| w.contains('[')))
                    }
                    Run::Unknown | Run::Script(_) => false,
                })
        })
}

/// Whether `pattern` (words, e.g. `cargo test`) covers the whole command line: every
/// simple command in it starts with those words, and nothing in it is opaque. This is the
/// test for an **allow** rule: it must vouch for everything the line runs. Windows' `cmd`
/// quotes differently from this parser, so there an allow pattern never matches.
pub fn pattern_matches(pattern: &str, line: &str) -> bool {
    if cfg!(windows) {
        return false;
    }
    let want: Vec<String> = parse(pattern).parts.into_iter().flatten().collect();
    if want.is_empty() {
        return false;
    }
    let cmd = parse(line);
    // The pattern's words must be in the line as written: `$x test` or `carg? test` may
    // be anything when it runs.
    !cmd.opaque
        && !cmd.parts.is_empty()
        && cmd.parts.iter().zip(&cmd.expanded).all(|(words, exp)| {
            words.len() >= want.len()
                && words[..want.len()] == want[..]
                && !exp[..want.len()].contains(&true)
        })
}

/// Whether `pattern` might be part of the command line: some simple command runs the
/// pattern's program with the pattern's other words somewhere after it, in order (so
/// `git -c x=y push` is a `git push`), or the line is opaque. This is the test for
/// **deny** and **require** rules: when in doubt, they apply. The program is found the way
/// the shell finds it: after `VAR=value` assignments, by its file name (`/bin/rm` is `rm`),
/// through programs that run the rest of their line (`env`, `sudo`, `nice -n 5`,
/// `timeout 5`, `xargs`…), and inside `sh -c '…'`.
pub fn pattern_hits(pattern: &str, line: &str) -> bool {
    let want: Vec<String> = parse(pattern).parts.into_iter().flatten().collect();
    let Some((program, rest)) = want.split_first() else {
        return false;
    };
    let program = file_name(program);
    let cmd = parse(line);
    cmd.opaque
        || cmd.parts.iter().zip(&cmd.expanded).any(|(words, exp)| {
            runs(words, exp).into_iter().any(|run| match run {
                Run::Program(i) => {
                    same_program(file_name(&words[i]), program) && {
                        let mut it = words[i + 1..].iter();
                        rest.iter().all(|w| it.any(|x| x == w))
                    }
                }
                Run::Script(script) => pattern_hits(pattern, &script),
                Run::Unknown => true,
            })
        })
}

fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What a simple command runs: its program, the programs that one runs from the rest of
/// its words, and the scripts handed to a shell with `-c`, `eval` or `trap`.
enum Run<'a> {
    Program(usize),
    Script(std::borrow::Cow<'a, str>),
    /// A program the shell works out when it runs (`$x`, `r?`): it may be any.
    Unknown,
}

/// Words that start a command in the shell's grammar and run the one after them.
const KEYWORDS: &[&str] = &[
    "!", "if", "then", "else", "elif", "while", "until", "do", "coproc",
];

/// Programs that run the rest of their words as a command, and their options that take a
/// value as the next word (so the value is not mistaken for the program). A group of short
/// options ending in one of these (`sudo -iu root`) takes one too.
const RUNNERS: &[(&str, &[&str])] = &[
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
const ENV_SPLIT: &[&str] = &["-S", "--split-string"];

/// Whether the option word `w` takes the next word as its value, given the runner's list.
fn takes_value(w: &str, listed: &[&str]) -> bool {
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
fn same_program(a: &str, b: &str) -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

fn runs<'a>(words: &'a [String], expanded: &[bool]) -> Vec<Run<'a>> {
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

/// Programs that run other programs or code: a rule naming only them would allow anything.
const WRAPPERS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "env", "sudo", "doas", "su", "xargs", "find",
    "exec", "eval", "nohup", "timeout", "time", "nice", "watch", "cd", "source", ".",
];

/// Interpreters: what they run is their script or code argument, so it stays in the rule
/// (`python3 x.py`, never `python3`). Versioned names (`python3.12`) count as theirs.
const INTERPRETERS: &[&str] = &[
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
const WHOLE_CALL: &[&str] = &[
    "tar", "rsync", "ssh", "scp", "rm", "rmdir", "mv", "cp", "dd", "ln", "chmod", "chown", "chgrp",
    "kill", "pkill", "killall", "truncate", "shred", "install", "curl", "wget",
];

/// Programs driven by a subcommand: `cargo test`, `git status`.
const SUBCOMMANDS: &[&str] = &[
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
const RUN_SUBCOMMANDS: &[&str] = &["run", "exec", "x", "dlx", "tool"];

/// Subcommands whose further words change what later commands do, or run anything
/// (`git config core.pager …`, `docker run IMAGE`): a rule keeps the whole call.
const WHOLE_SUBCOMMANDS: &[(&str, &str)] = &[
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
fn program_kind(word: &str) -> &str {
    let name = file_name(word);
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if bare.is_empty() { name } else { bare }
}

/// `words` as a pattern that reads back as the same words: quoted where a word needs it.
fn join_words(words: &[String]) -> String {
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

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
