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

mod proposal;
mod runs;

pub use proposal::proposed_pattern;
use runs::*;

#[cfg(test)]
mod tests;
