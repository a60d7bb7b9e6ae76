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
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
                opaque |= !closed;
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    // A backslash-newline continues the line.
                    Some('\n') | None => {}
                    Some(n) => word.push(n),
                }
            }
            '`' => opaque = true,
            '$' if matches!(chars.peek(), Some('(')) => opaque = true,
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
/// simple command in it starts with those words, and nothing in it is opaque.
pub fn pattern_matches(pattern: &str, line: &str) -> bool {
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

/// The leading words a rule proposed from `line` should use: the program and, for tools
/// driven by a subcommand (`cargo test`, `git status`, `npm run`), the subcommand.
pub fn proposed_pattern(line: &str) -> Option<String> {
    let cmd = parse(line);
    let first = cmd.parts.first()?;
    let program = first.first()?;
    let takes_subcommand = [
        "cargo", "git", "npm", "pnpm", "yarn", "go", "make", "docker", "kubectl", "pip", "uv",
        "poetry", "dotnet", "mvn", "gradle",
    ]
    .contains(&program.as_str());
    match (takes_subcommand, first.get(1)) {
        (true, Some(sub)) if !sub.starts_with('-') => Some(format!("{program} {sub}")),
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
    fn quoted_operators_are_words_not_separators() {
        let p = parse("echo 'a; b' \"c && d\" e\\;f");
        assert_eq!(p.parts, [vec!["echo", "a; b", "c && d", "e;f"]]);
        assert!(!p.opaque);
        assert!(pattern_matches("echo", "echo 'a; b'"));
    }

    #[test]
    fn proposals_keep_the_program_and_its_subcommand() {
        assert_eq!(
            proposed_pattern("cargo test -p x").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            proposed_pattern("git -C dir status").as_deref(),
            Some("git")
        );
        assert_eq!(proposed_pattern("ls -la").as_deref(), Some("ls"));
        assert_eq!(proposed_pattern("  ").as_deref(), None);
    }
}
