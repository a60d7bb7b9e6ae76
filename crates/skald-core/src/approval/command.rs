//! Reading a shell command the way the approval gate must: split into the simple commands
//! it runs, with anything that could smuggle in another command flagged, so that an allow
//! rule for `cargo test` can never approve `cargo test; rm -rf ~`.

/// A command line, parsed for policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCommand {
    /// The words of each simple command (split on `;`, `&&`, `||`, `|`, `&` and newlines).
    pub parts: Vec<Vec<String>>,
    /// The line contains something a prefix rule cannot vouch for: command or process
    /// substitution, redirection, an unterminated quote, or a subshell.
    pub opaque: bool,
}

/// Splits a command line into simple commands and their words, honouring quotes and
/// backslashes. Conservative by design: whatever it does not understand makes the command
/// opaque, and opaque commands never match an allow rule.
pub fn parse(line: &str) -> ParsedCommand {
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut opaque = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    word.push(q);
                }
                opaque |= !closed;
            }
            '"' => {
                in_word = true;
                let mut closed = false;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => {
                            closed = true;
                            break;
                        }
                        // Substitutions still run inside double quotes.
                        '`' => opaque = true,
                        '$' if matches!(chars.peek(), Some('(')) => opaque = true,
                        '\\' => match chars.next() {
                            // A backslash-newline continues the line here too.
                            Some('\n') | None => {}
                            Some(n) => word.push(n),
                        },
                        _ => word.push(q),
                    }
                }
                opaque |= !closed;
            }
            '\\' => match chars.next() {
                // A backslash-newline continues the line: it is no word (else `sudo \`, a
                // newline and ` rm x` would read as the program `""` and hide `rm`).
                Some('\n') | None => {}
                Some(n) => {
                    in_word = true;
                    word.push(n);
                }
            },
            '`' => opaque = true,
            // `$(…)`, and bash's `$'…'`/`$"…"` quoting, whose escapes this parser does not
            // follow (`$'\''` would end the quote where bash does not).
            '$' if matches!(chars.peek(), Some('(' | '\'' | '"')) => opaque = true,
            '<' | '>' => opaque = true,
            '(' | ')' | '{' | '}' if !in_word => opaque = true,
            ';' | '\n' | '|' | '&' => {
                end_word(&mut word, &mut in_word, &mut words);
                // `&&`, `||`, `|&`: one separator.
                if matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                if !words.is_empty() {
                    parts.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        parts.push(words);
    }
    ParsedCommand { parts, opaque }
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
    !cmd.opaque
        && !cmd.parts.is_empty()
        && cmd
            .parts
            .iter()
            .all(|words| words.len() >= want.len() && words[..want.len()] == want[..])
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
        || cmd.parts.iter().any(|words| {
            runs(words).into_iter().any(|run| match run {
                Run::Program(i) => {
                    same_program(file_name(&words[i]), program) && {
                        let mut it = words[i + 1..].iter();
                        rest.iter().all(|w| it.any(|x| x == w))
                    }
                }
                Run::Script(script) => pattern_hits(pattern, script),
            })
        })
}

fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What a simple command runs: its program, the programs that one runs from the rest of
/// its words, and the scripts handed to a shell with `-c`.
enum Run<'a> {
    Program(usize),
    Script(&'a str),
}

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

fn runs(words: &[String]) -> Vec<Run<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    let assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    while i < words.len() {
        while i < words.len() && assignment(&words[i]) {
            i += 1;
        }
        let Some(word) = words.get(i) else { break };
        out.push(Run::Program(i));
        let name = file_name(word);
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
                    if let Some(script) = words.get(j) {
                        out.push(Run::Script(script));
                    }
                    break;
                }
            }
            break;
        }
        let Some((_, listed)) = RUNNERS.iter().find(|(r, _)| *r == name) else {
            break;
        };
        i += 1;
        // Its options (and their values), then, for `timeout`, the duration.
        while let Some(w) = words.get(i).filter(|w| w.starts_with('-')) {
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
                    out.push(Run::Script(script));
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
    "sh", "bash", "zsh", "fish", "dash", "env", "sudo", "doas", "su", "xargs", "find", "exec",
    "eval", "nohup", "timeout", "time", "nice", "watch", "python", "python3", "node", "perl",
    "ruby", "php", "deno", "bun", "npx", "pnpx", "cd", "source", ".",
];

/// The leading words a rule proposed from `line` should use — general enough to matter,
/// never broader than what was approved: the program and its subcommand for tools driven
/// by one (`cargo test`); the whole command when it starts with flags (`git -C d status`),
/// a variable assignment, or a program that runs other programs (`sh`, `env`, `python`…);
/// nothing for a line of several commands or anything opaque.
pub fn proposed_pattern(line: &str) -> Option<String> {
    let cmd = parse(line);
    if cmd.opaque || cmd.parts.len() != 1 {
        return None;
    }
    let words = cmd.parts.first()?;
    let program = words.first()?;
    let whole = || Some(words.join(" "));
    if program.contains('=') || WRAPPERS.contains(&program.as_str()) {
        return whole();
    }
    let takes_subcommand = [
        "cargo", "git", "npm", "pnpm", "yarn", "go", "make", "docker", "kubectl", "pip", "uv",
        "poetry", "dotnet", "mvn", "gradle",
    ]
    .contains(&program.as_str());
    match words.get(1) {
        Some(sub) if sub.starts_with('-') || sub.starts_with('+') => whole(),
        Some(sub) if takes_subcommand => Some(format!("{program} {sub}")),
        _ if takes_subcommand => whole(),
        _ => Some(program.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_commands_only() {
        assert!(pattern_matches("cargo test", "cargo test"));
        assert!(pattern_matches(
            "cargo test",
            "cargo test -p skald-core -- --nocapture"
        ));
        assert!(pattern_matches("cargo test", "cargo  test   --release"));
        assert!(pattern_matches(
            "cargo test",
            "cargo test && cargo test --doc"
        ));
        assert!(pattern_matches("git status", "git status --short"));
        assert!(pattern_matches("ls", "ls -la 'my dir'"));
        assert!(!pattern_matches("cargo test", "cargo build"));
        assert!(!pattern_matches("cargo test", "cargo"));
        assert!(!pattern_matches("cargo test", "cargotest"));
        assert!(!pattern_matches("", "anything"));
    }

    #[test]
    fn smuggled_commands_never_match() {
        for line in [
            "cargo test; rm -rf ~",
            "cargo test && rm -rf ~",
            "cargo test || rm -rf ~",
            "cargo test | sh",
            "cargo test & rm -rf ~",
            "cargo test\nrm -rf ~",
            "cargo test $(rm -rf ~)",
            "cargo test `rm -rf ~`",
            "cargo test \"$(rm -rf ~)\"",
            "cargo test \"`rm -rf ~`\"",
            "cargo test > ~/.bashrc",
            "cargo test < /etc/passwd",
            "cargo test <(rm -rf ~)",
            "cargo test 'unterminated",
            "(cargo test; rm -rf ~)",
            "{ cargo test; rm -rf ~; }",
        ] {
            assert!(
                !pattern_matches("cargo test", line),
                "{line:?} must not match"
            );
        }
    }

    #[test]
    fn bash_dollar_quotes_are_opaque() {
        assert!(!pattern_matches(
            "cargo test",
            "cargo test $'\\'' ; rm -rf ~ # '"
        ));
        assert!(!pattern_matches("cargo test", "cargo test $\"x\""));
        assert!(parse("echo $'a'").opaque);
        assert!(!parse("echo $HOME").opaque, "plain variables are fine");
    }

    #[test]
    fn deny_patterns_hit_anywhere_and_when_in_doubt() {
        assert!(pattern_hits("git push", "git status && git push --force"));
        assert!(pattern_hits("git push", "git -c x=y push"));
        assert!(
            pattern_hits("git push", "git push > /dev/null"),
            "opaque counts"
        );
        assert!(pattern_hits("rm", "ls; rm -rf x"));
        assert!(!pattern_hits("git push", "git status"));
        assert!(!pattern_hits("git push", "echo git push"));
    }

    #[test]
    fn deny_patterns_see_through_paths_assignments_and_runners() {
        for line in [
            "/bin/rm -rf x",
            "./rm x",
            "FOO=1 rm x",
            "env rm x",
            "env -u HOME FOO=1 /usr/bin/rm x",
            "sudo rm x",
            "sudo -u root rm x",
            "doas rm x",
            "nohup rm x",
            "nice -n 5 rm x",
            "timeout 5 rm x",
            "timeout -s KILL 5 rm x",
            "command rm x",
            "exec rm x",
            "find . -name '*.o' | xargs rm",
            "xargs -n 1 rm < list",
            "sh -c 'rm -rf x'",
            "bash -lc \"cd d && rm x\"",
            "sudo sh -c 'rm x'",
            // Spellings the properties found missed before.
            "env -S 'rm -rf x'",
            "env --split-string='rm -rf x'",
            "env -- rm x",
            "bash -o pipefail -c 'rm x'",
            "bash +x -c 'rm x'",
            "sh -c -- 'rm x'",
            "bash --rcfile /dev/null -c 'rm x'",
            "sudo --user root rm x",
            "nice --adjustment 5 rm x",
            "xargs --max-args 1 rm < list",
            "sudo -iu root rm x",
            "xargs -0n 1 rm < list",
        ] {
            assert!(pattern_hits("rm", line), "{line:?} runs rm");
        }
        assert!(!pattern_hits("rm", "sudo -iu rm ls"), "an option's value");
        assert!(
            !pattern_hits("rm", "env -S 'ls rm'"),
            "an argument in the split line"
        );
        assert_eq!(
            pattern_hits("rm", "RM -rf x"),
            cfg!(any(target_os = "macos", windows)),
            "case counts only where the file system ignores it"
        );
        assert!(pattern_hits(
            "git push",
            "env GIT_TRACE=1 /usr/bin/git -c a=b push"
        ));
        assert!(
            pattern_hits("/bin/rm", "rm x"),
            "the pattern by its name too"
        );
        for line in [
            "echo rm",
            "git rm x",
            "ls rm",
            "grep -r rm .",
            "sh script.sh rm",
        ] {
            assert!(!pattern_hits("rm", line), "{line:?} does not run rm");
        }
        // Allow rules stay literal: they must vouch for exactly what runs.
        assert!(!pattern_matches("rm", "sudo rm x"));
        assert!(!pattern_matches("cargo test", "/usr/bin/cargo test"));
    }

    #[test]
    fn quoted_operators_are_words_not_separators() {
        let p = parse("echo 'a; b' \"c && d\" e\\;f");
        assert_eq!(p.parts, [vec!["echo", "a; b", "c && d", "e;f"]]);
        assert!(!p.opaque);
        assert!(pattern_matches("echo", "echo 'a; b'"));
    }

    #[test]
    fn proposals_are_never_broader_than_the_call() {
        let p = |l: &str| proposed_pattern(l);
        assert_eq!(p("cargo test -p x").as_deref(), Some("cargo test"));
        assert_eq!(p("git -C dir status").as_deref(), Some("git -C dir status"));
        assert_eq!(
            p("cargo +nightly test").as_deref(),
            Some("cargo +nightly test")
        );
        assert_eq!(
            p("ls -la").as_deref(),
            Some("ls -la"),
            "flags stay: `rm -f x` must not become `rm`"
        );
        assert_eq!(p("ls").as_deref(), Some("ls"));
        assert_eq!(p("pytest tests/").as_deref(), Some("pytest"));
        assert_eq!(p("FOO=1 make").as_deref(), Some("FOO=1 make"));
        assert_eq!(p("python script.py").as_deref(), Some("python script.py"));
        assert_eq!(p("sh -c 'x'").as_deref(), Some("sh -c x"));
        assert_eq!(p("cd d && cargo test"), None, "several commands");
        assert_eq!(p("echo $(x)"), None);
        assert_eq!(p("  "), None);
    }
}
