//! Properties of the command-pattern matcher behind `execute_cmd` rules
//! (`approval::command`): no string makes it panic; a deny/require pattern for a program
//! hits every disguise of a call to it that the matcher claims to see through (a path, `VAR=`
//! assignments, the runners it knows with their options, `sh -c` scripts nested in any
//! quoting, other commands chained around it) and none of the same disguises of a look-alike
//! program; an allow pattern is literal and never vouches for a command chained or
//! substituted after it; and, with real shells as the oracle, no line that makes `dash` or
//! `bash --posix` run a hidden `touch CANARY` is allowed by a rule that does not name
//! `touch`, or missed by a deny rule that does. 10,000 generated cases per property
//! (`PROPTEST_CASES` raises it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use skald_core::approval::command::{parse, pattern_hits, pattern_matches, proposed_pattern};

// ---------------------------------------------------------------------------------------
// Writing words as a shell would read them back.

/// `word` written so that a shell reads it back as that one word: bare when it needs no
/// quoting and `style` allows, else in single quotes, double quotes, or with every special
/// character backslash-escaped; in the last two, maybe continued on the next line after its
/// first character (a backslash-newline vanishes, even inside double quotes). Every style
/// gives the same word to the shell and to `parse`, so which one the generator picks must
/// never change a verdict.
fn quote(word: &str, style: u8) -> String {
    let continued = style / 4 % 2 == 1;
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./,:%+@=-".contains(c));
    match style % 4 {
        0 if bare => word.to_string(),
        0 | 1 => format!("'{}'", word.replace('\'', r"'\''")),
        2 => {
            let mut out = String::from("\"");
            for (i, c) in word.chars().enumerate() {
                if i == 1 && continued {
                    out.push_str("\\\n");
                }
                if matches!(c, '\\' | '"' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
        _ if word.is_empty() => "''".to_string(),
        _ => {
            let mut out = String::new();
            for (i, c) in word.chars().enumerate() {
                if i == 1 && continued {
                    out.push_str("\\\n");
                }
                match c {
                    // A backslash before a newline joins lines; a newline is quoted instead.
                    '\n' => out.push_str("'\n'"),
                    c if c.is_ascii_alphanumeric() || c == '_' || c == '/' => out.push(c),
                    c => {
                        out.push('\\');
                        out.push(c);
                    }
                }
            }
            out
        }
    }
}

/// Words written one after the other, each quoted its own way, separated by blanks or by
/// a backslash-newline (a long command continued on the next line).
fn render(words: &[String], style: u8) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        let i = u8::try_from(i % 251).unwrap();
        if i > 0 {
            out.push_str(
                match style.wrapping_mul(5).wrapping_add(i).wrapping_mul(3) % 8 {
                    4 => "  ",
                    5 => "\t",
                    6 => " \\\n  ",
                    7 => " \\\n",
                    _ => " ",
                },
            );
        }
        out.push_str(&quote(w, style.wrapping_add(i)));
    }
    out
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// The vocabulary: the runners and shells `pattern_hits` claims to see through.

/// A program that runs the rest of its words, as `command.rs` knows it.
struct Runner {
    name: &'static str,
    /// Options that take the next word as their value: the option, a realistic value, and
    /// whether the value is free text (a user, a file, a prompt), so that it may as well
    /// be the denied program's own name without that program running.
    valued: &'static [(&'static str, &'static str, bool)],
    /// Options without a value.
    flags: &'static [&'static str],
    /// The word after the options that is not the command: timeout's duration, chrt's
    /// priority, taskset's mask.
    positional: &'static [&'static str],
    /// Whether `--` may end its options.
    dashdash: bool,
}

/// Every runner `command.rs` lists, with the value-taking options its table names (so the
/// value is not mistaken for the program) and real options without a value. `env -S` is
/// left out: its value is itself a command line, which the matcher does not claim to read.
const RUNNERS: &[Runner] = &[
    Runner {
        name: "env",
        valued: &[
            ("-u", "HOME", true),
            ("-C", "/tmp", true),
            ("--unset", "PATH", true),
            ("--chdir", "/tmp", true),
        ],
        flags: &["-i", "-0", "-v", "-"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "sudo",
        valued: &[
            ("-u", "root", true),
            ("-g", "wheel", true),
            ("-C", "3", false),
            ("-D", "/tmp", true),
            ("-h", "localhost", true),
            ("-p", "password: ", true),
            ("-r", "sysadm_r", true),
            ("-t", "unconfined_t", true),
            ("-U", "admin", true),
        ],
        flags: &["-E", "-H", "-n", "-k", "-S", "-b", "-P"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "doas",
        valued: &[("-u", "root", true)],
        flags: &["-n"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "nohup",
        valued: &[],
        flags: &[],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "nice",
        valued: &[("-n", "5", false), ("-n", "-5", false)],
        flags: &["-10"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "ionice",
        valued: &[("-c", "3", false), ("-n", "7", false)],
        flags: &["-t"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "timeout",
        valued: &[
            ("-s", "KILL", false),
            ("-k", "5", false),
            ("--signal", "TERM", false),
            ("--kill-after", "2", false),
        ],
        flags: &["--preserve-status", "--foreground", "-v"],
        positional: &["5", "1.5", "10s", "2m"],
        dashdash: true,
    },
    Runner {
        name: "time",
        valued: &[("-f", "%e s", true), ("-o", "time.log", true)],
        flags: &["-p", "-v", "-a"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "exec",
        valued: &[("-a", "worker", true)],
        flags: &["-c", "-l"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "command",
        valued: &[],
        flags: &["-p"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "builtin",
        valued: &[],
        flags: &[],
        positional: &[],
        dashdash: false,
    },
    Runner {
        name: "xargs",
        valued: &[
            ("-a", "list.txt", true),
            ("-d", ",", false),
            ("-E", "END", true),
            ("-I", "X", true),
            ("-L", "1", false),
            ("-n", "1", false),
            ("-P", "4", false),
            ("-s", "4096", false),
        ],
        flags: &["-0", "-r", "-t", "-x", "-p"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "stdbuf",
        valued: &[("-i", "0", false), ("-o", "L", false), ("-e", "0", false)],
        flags: &["-oL", "-e0"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "setsid",
        valued: &[],
        flags: &["-f", "-w", "-c"],
        positional: &[],
        dashdash: true,
    },
    Runner {
        name: "chrt",
        valued: &[],
        flags: &["-f", "-r", "-o", "-b", "-i"],
        positional: &["10", "0", "99"],
        dashdash: false,
    },
    Runner {
        name: "taskset",
        valued: &[],
        flags: &["-c", "-a"],
        positional: &["0x1", "0-3", "1"],
        dashdash: false,
    },
];

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// Programs that never run the denied program; chained around it, or handed its name as
/// an argument (`echo rm`), they must not make a look-alike line a hit.
const HARMLESS: &[&str] = &[
    "ls", "echo", "true", "pwd", "cat", "wc", "printf", "cd", "grep", "which", "man",
];

/// Names the denied program must not have, so that the look-alike property stays about
/// look-alikes: the runners, the shells and the harmless programs.
fn reserved(name: &str) -> bool {
    RUNNERS.iter().any(|r| r.name == name)
        || SHELLS.contains(&name)
        || HARMLESS.contains(&name)
        || KEYWORDS.contains(&name)
        || name == "su"
}

/// The shell's words that start a command and run the next one (`then rm x`), and those
/// that run their arguments as code: no program has these names.
const KEYWORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "elif",
    "while",
    "until",
    "do",
    "coproc",
    "eval",
    "trap",
    "for",
    "in",
    "case",
    "esac",
    "fi",
    "done",
    "let",
    "declare",
    "typeset",
    "local",
    "alias",
    "hash",
    "enable",
    "unset",
    "export",
    "readonly",
    "test",
    "read",
    "getopts",
    "wait",
    "mapfile",
    "readarray",
    "select",
    "function",
];

/// The denied program: a real one or any other name.
fn program() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "rm", "git", "curl", "dd", "mkfs", "chmod", "chown", "kill", "shutdown", "docker",
            "npm", "wget", "scp", "ssh", "reboot", "shred",
        ])
        .prop_map(str::to_string),
        "[a-z][a-z0-9_]{1,7}".prop_filter("a reserved name", |n| !reserved(n)),
    ]
}

/// Arguments of any awkward kind, all of them plain words once quoted: separators,
/// substitutions and quotes inside them are text, not shell syntax.
fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "-rf",
            "-f",
            "x",
            "build/",
            "--force",
            "a b",
            "a; b",
            "a && b",
            "c | d",
            "$(not run)",
            "`nor this`",
            "it's",
            "\"q\"",
            "*.o",
            "~/x",
            "tab\there",
            "line\nbreak",
            "back\\slash",
            "{x}",
            "(y)",
            "a=b",
            "é 日本",
        ])
        .prop_map(str::to_string),
        "[a-zA-Z0-9_./-]{1,8}",
    ]
}

/// How the disguised call is wrapped, innermost first.
#[derive(Debug, Clone)]
enum Layer {
    /// `NAME=value …` before the command.
    Assign(Vec<(String, String)>),
    /// `[path]runner options [positional] …`: the runner's index in `RUNNERS`, its path,
    /// the chosen options (index into `valued` or `flags`, and whether a free-text value
    /// is the denied program's name), whether `--` ends them, which positional.
    Runner {
        runner: usize,
        path: &'static str,
        opts: Vec<(bool, usize, bool)>,
        dashdash: bool,
        positional: usize,
    },
    /// `[path]shell flags -c '…' [args]`: the script quoted in the given style, the
    /// trailing arguments (`$0`, `$1`…) possibly the denied program's name.
    Shell {
        shell: &'static str,
        path: &'static str,
        flags: Vec<&'static str>,
        c: &'static str,
        style: u8,
        trailing: Vec<bool>,
    },
    /// Harmless commands before and after, with separators (and spaces or not).
    Chain {
        before: Option<(usize, bool, &'static str)>,
        after: Option<(&'static str, usize, bool)>,
        spaced: bool,
    },
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![";", "&&", "||", "|", "&", "\n", "|&"])
}

fn layer() -> impl Strategy<Value = Layer> {
    let harmless = (0..HARMLESS.len(), any::<bool>());
    prop_oneof![
        1 => prop::collection::vec(
            (
                "[A-Za-z_][A-Za-z0-9_]{0,6}".prop_filter("a variable a shell runs", |n| {
                    !["PS0", "PS1", "PS2", "PS3", "PS4", "BASH_ENV", "SHELLOPTS", "BASHOPTS"]
                        .contains(&n.as_str())
                }),
                prop_oneof![Just(String::new()), arg()]
            ),
            1..3
        )
        .prop_map(Layer::Assign),
        3 => (0..RUNNERS.len(), prop::sample::select(vec!["", "/usr/bin/", "/bin/"]))
            .prop_flat_map(|(runner, path)| {
                let r = &RUNNERS[runner];
                let opt = (any::<bool>(), any::<usize>(), any::<bool>()).prop_map(
                    move |(valued, i, named)| {
                        // Only runners with both kinds of option get a choice.
                        let valued = if r.valued.is_empty() {
                            false
                        } else {
                            r.flags.is_empty() || valued
                        };
                        let n = if valued { r.valued.len() } else { r.flags.len() };
                        (valued, i % n.max(1), named)
                    },
                );
                let has_opts = !r.valued.is_empty() || !r.flags.is_empty();
                (
                    prop::collection::vec(opt, if has_opts { 0..4 } else { 0..1 }),
                    any::<bool>(),
                    0..r.positional.len().max(1),
                )
                    .prop_map(move |(opts, dashdash, positional)| Layer::Runner {
                        runner,
                        path,
                        opts,
                        dashdash: dashdash && r.dashdash,
                        positional,
                    })
            }),
        2 => (
            prop::sample::select(SHELLS.to_vec()),
            prop::sample::select(vec!["", "/bin/", "/usr/bin/"]),
            prop::collection::vec(
                prop::sample::select(vec!["-l", "-e", "-x", "--norc", "--login", "--noprofile"]),
                0..3
            ),
            prop::sample::select(vec!["-c", "-lc", "-ec", "-xc", "-ce"]),
            any::<u8>(),
            prop::collection::vec(any::<bool>(), 0..3),
        )
            .prop_map(|(shell, path, flags, c, style, trailing)| Layer::Shell {
                shell,
                path,
                flags,
                c,
                style,
                trailing,
            }),
        2 => (
            prop::option::of((harmless.clone(), separator())),
            prop::option::of((separator(), harmless)),
            any::<bool>(),
        )
            .prop_map(|(before, after, spaced)| Layer::Chain {
                before: before.map(|((h, named), sep)| (h, named, sep)),
                after: after.map(|(sep, (h, named))| (sep, h, named)),
                spaced,
            }),
    ]
}

/// `inner` (a command line) wrapped in `layers`, innermost first. `named` is the denied
/// program's name, which appears where it is only text: option values, `$0`, arguments
/// of harmless commands.
fn wrap(inner: String, layers: &[Layer], named: &str, style: u8) -> String {
    let mut line = inner;
    for (depth, layer) in layers.iter().enumerate() {
        let style = style.wrapping_add(u8::try_from(depth % 251).unwrap().wrapping_mul(7));
        line = match layer {
            Layer::Assign(pairs) => {
                // Only the value may be quoted: a quoted name is not an assignment.
                let words: Vec<String> = pairs
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        let v = if v.is_empty() {
                            String::new()
                        } else {
                            quote(v, style.wrapping_add(u8::try_from(i % 251).unwrap()))
                        };
                        format!("{k}={v}")
                    })
                    .collect();
                format!("{} {line}", words.join(" "))
            }
            Layer::Runner {
                runner,
                path,
                opts,
                dashdash,
                positional,
            } => {
                let r = &RUNNERS[*runner];
                let mut words = vec![format!("{path}{}", r.name)];
                for &(valued, i, as_named) in opts {
                    if valued {
                        let (opt, value, free) = r.valued[i];
                        words.push(opt.to_string());
                        words.push(if free && as_named { named } else { value }.to_string());
                    } else {
                        words.push(r.flags[i].to_string());
                    }
                }
                if *dashdash {
                    words.push("--".to_string());
                }
                if let Some(p) = r.positional.get(*positional) {
                    words.push((*p).to_string());
                }
                format!("{} {line}", render(&words, style))
            }
            Layer::Shell {
                shell,
                path,
                flags,
                c,
                style: script_style,
                trailing,
            } => {
                let mut words = vec![format!("{path}{shell}")];
                words.extend(flags.iter().map(|f| (*f).to_string()));
                words.push((*c).to_string());
                let mut out = format!(
                    "{} {}",
                    render(&words, style),
                    // Bare is no style for a script: it always has spaces to quote.
                    quote(&line, 1 + script_style % 3)
                );
                for (i, as_named) in trailing.iter().enumerate() {
                    let w = if *as_named {
                        named
                    } else {
                        ["sh", "a", "b"][i % 3]
                    };
                    out.push(' ');
                    out.push_str(&quote(w, style));
                }
                out
            }
            Layer::Chain {
                before,
                after,
                spaced,
            } => {
                let harmless = |h: usize, with_name: bool| {
                    let mut words = strings(&[HARMLESS[h]]);
                    if with_name {
                        words.push(named.to_string());
                    }
                    render(&words, style)
                };
                let gap = if *spaced { " " } else { "" };
                let mut out = String::new();
                if let Some((h, n, sep)) = before {
                    out.push_str(&format!("{}{gap}{sep}{gap}", harmless(*h, *n)));
                }
                out.push_str(&line);
                if let Some((sep, h, n)) = after {
                    out.push_str(&format!("{gap}{sep}{gap}{}", harmless(*h, *n)));
                }
                out
            }
        };
    }
    line
}

/// The words of a call: the program, then `sub` in order with `args` around them.
fn call_words(program: String, sub: &[String], args: &[String], mix: &[bool]) -> Vec<String> {
    let mut words = vec![program];
    let (mut s, mut a) = (sub.iter(), args.iter());
    let mut bits = mix.iter().cycle();
    loop {
        let next = match bits.next().copied().unwrap_or(true) {
            true => s.next().or_else(|| a.next()),
            false => a.next().or_else(|| s.next()),
        };
        match next {
            Some(w) => words.push(w.clone()),
            None => break,
        }
    }
    words
}

/// A deny pattern: the program (maybe by a path; the matcher compares file names) and
/// 0–2 more words it needs in order, like `git push`.
fn pattern_parts() -> impl Strategy<Value = (String, &'static str, Vec<String>)> {
    (
        program(),
        prop::sample::select(vec!["", "", "/bin/", "/usr/bin/"]),
        prop::collection::vec("[a-z]{2,6}", 0..3),
    )
}

fn pattern_of(program: &str, path: &str, sub: &[String]) -> String {
    let mut p = format!("{path}{program}");
    for s in sub {
        p.push(' ');
        p.push_str(s);
    }
    p
}

/// What a look-alike program is, for the program `p`.
fn look_alike(p: &str, kind: u8, affix: &str, harmless: usize) -> Vec<String> {
    match kind % 4 {
        // `rmdir`, `rm2`, `rm.sh`
        0 => vec![format!("{p}{affix}")],
        // `xrm`
        1 => vec![format!("{}{p}", affix.trim_start_matches(['-', '.']))],
        // `rn`: the last character changed
        2 => {
            let mut q: String = p.chars().take(p.chars().count() - 1).collect();
            let last = p.chars().last().unwrap_or('a');
            q.push(if last == 'q' { 'z' } else { 'q' });
            vec![q]
        }
        // `echo rm`, `which rm`: the name only as an argument
        _ => vec![HARMLESS[harmless].to_string(), p.to_string()],
    }
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    /// No string — quotes, backslashes, substitutions, separators, newlines, any Unicode —
    /// makes the matcher panic, as a pattern or as a command line.
    #[test]
    fn no_string_makes_the_matcher_panic(
        pattern in prop_oneof![
            "(?s).{0,40}",
            "[a-z \t'\"\\\\$()`;&|<>{}=/\n-]{0,40}",
        ],
        line in prop_oneof![
            "(?s).{0,120}",
            "[a-z \t'\"\\\\$()`;&|<>{}=/\n-]{0,120}",
            // Nested shells, where the matcher recurses.
            "((sh|bash) -c ['\"]|env |sudo -u |[a-z]{1,3} |\\\\|[;&|]){0,30}",
        ],
    ) {
        let parsed = parse(&line);
        let _ = proposed_pattern(&line);
        let hits = pattern_hits(&pattern, &line);
        if pattern_matches(&pattern, &line) {
            // An allow rule never vouches for what the parser could not read...
            prop_assert!(!parsed.opaque);
            // ...and a deny rule of the same words is never narrower than the allow rule,
            // unless the pattern starts with `VAR=`, which a deny rule looks past.
            let first = parse(&pattern).parts.into_iter().flatten().next().unwrap();
            let assignment = first.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            prop_assert!(hits || assignment, "{pattern:?} allows but does not hit {line:?}");
        }
    }

    /// A deny pattern for a program hits it however it is disguised.
    #[test]
    fn deny_patterns_hit_every_disguise_of_the_program(
        (p, pattern_path, sub) in pattern_parts(),
        path in prop::sample::select(vec!["", "/bin/", "/usr/bin/", "./", "/usr/local/bin/", "../../bin/", "~/.local/bin/"]),
        args in prop::collection::vec(arg(), 0..4),
        mix in prop::collection::vec(any::<bool>(), 1..6),
        layers in prop::collection::vec(layer(), 0..5),
        style in any::<u8>(),
    ) {
        let pattern = pattern_of(&p, pattern_path, &sub);
        let words = call_words(format!("{path}{p}"), &sub, &args, &mix);
        let line = wrap(render(&words, style), &layers, &p, style);
        // Hits because the call is seen, not because the line is unreadable.
        prop_assert!(!parse(&line).opaque, "{line:?} is opaque");
        prop_assert!(pattern_hits(&pattern, &line), "{pattern:?} misses {line:?}");
    }

    /// The same disguises of a look-alike program (`rmdir`, `xrm`, `rn`, `echo rm`), or of
    /// the program with other further words (`git pushx` for `git push`), are not hits:
    /// deny rules do not block what they do not name. The denied name may still appear as
    /// text: a runner's option value (`sudo -u rm`), a shell's `$0`, an argument.
    #[test]
    fn deny_patterns_miss_every_disguise_of_a_look_alike(
        (p, pattern_path, sub) in pattern_parts(),
        // 0–3: a look-alike program (see `look_alike`); 4: the program with other words.
        kind in 0u8..5,
        affix in "[a-z0-9_.-]{1,3}",
        harmless in 0..HARMLESS.len(),
        path in prop::sample::select(vec!["", "/bin/", "/usr/bin/", "./"]),
        args in prop::collection::vec(arg(), 0..4),
        mix in prop::collection::vec(any::<bool>(), 1..6),
        layers in prop::collection::vec(layer(), 0..5),
        style in any::<u8>(),
    ) {
        let pattern = pattern_of(&p, pattern_path, &sub);
        let words = if kind == 4 && !sub.is_empty() {
            // The program itself, with its further words changed.
            let changed: Vec<String> = sub.iter().map(|s| format!("{s}{affix}")).collect();
            call_words(format!("{path}{p}"), &changed, &args, &mix)
        } else {
            let mut q = look_alike(&p, kind, &affix, harmless);
            // A look-alike that is the program, a runner or a shell is no look-alike; `p_`
            // is one (no reserved name has a `_`).
            if kind % 4 != 3 && (reserved(&q[0]) || q[0] == p) {
                q[0] = format!("{p}_");
            }
            q[0] = format!("{path}{}", q[0]);
            let rest: Vec<String> = q.split_off(1).into_iter().chain(sub.iter().cloned()).collect();
            call_words(q.remove(0), &rest, &args, &mix)
        };
        let line = wrap(render(&words, style), &layers, &p, style);
        prop_assert!(!parse(&line).opaque, "{line:?} is opaque");
        prop_assert!(!pattern_hits(&pattern, &line), "{pattern:?} hits {line:?}");
    }

    /// An allow pattern is literal: it matches the exact command and the command with more
    /// arguments, and a chain only when every command in it starts with the pattern's words
    /// (so `cargo test && cargo test --doc` is fine, by design); it never matches a command
    /// with a different one chained after it, a substitution, a redirection, a subshell or
    /// an unterminated quote anywhere, nor a disguise of the command (a path, `sudo`,
    /// `VAR=`). Whatever it matches, a deny rule of the same words hits.
    #[test]
    fn allow_patterns_are_literal_and_refuse_smuggled_commands(
        pattern in prop::collection::vec(
            "[a-z][a-z0-9_.-]{0,6}".prop_filter("a shell keyword", |w| !KEYWORDS.contains(&w.as_str())),
            1..4,
        ),
        args in prop::collection::vec(arg(), 0..4),
        second in prop_oneof![
            prop::collection::vec(arg(), 0..3).prop_map(|a| (true, a)),
            (prop::sample::select(vec!["rm", "curl", "sh", "reboot", "python3"]),
             prop::collection::vec(arg(), 0..3))
                .prop_map(|(p, a)| (false, std::iter::once(p.to_string()).chain(a).collect())),
        ],
        sep in prop_oneof![separator().prop_map(str::to_string), Just(" ; ".to_string()), Just(" && ".to_string())],
        smuggle in prop::sample::select(vec![
            "$(X)", "`X`", "\"$(X)\"", "\"`X`\"", "<(X)", ">(X)", "> out.txt", ">> ~/.bashrc",
            "< /etc/passwd", "2>&1", "(X)", "{ X; }", "'unterminated", "\"unterminated",
            "$'\\x41'", "$\"x\"",
        ]),
        at in any::<usize>(),
        disguise in prop::sample::select(vec!["sudo ", "env ", "X=1 ", "command ", "/usr/bin/", "./"]),
        style in any::<u8>(),
    ) {
        let pattern_text = pattern.join(" ");
        let words: Vec<String> = pattern.iter().cloned().chain(args.iter().cloned()).collect();
        let line = render(&words, style);
        let (same, tail) = second;
        let second: Vec<String> = if same { pattern.iter().cloned().chain(tail).collect() } else { tail };
        let chained = format!("{line}{sep}{}", render(&second, style.wrapping_add(3)));
        let chained_ok = second.starts_with(&pattern);
        // The smuggled construct as an extra word anywhere after the program.
        let other = render(&second, style.wrapping_add(5));
        let mut smuggled_words: Vec<String> = words.iter().map(|w| quote(w, style)).collect();
        // An unterminated quote goes last, so that no later quote closes it.
        let at = if smuggle.contains("unterminated") {
            smuggled_words.len()
        } else {
            1 + at % smuggled_words.len()
        };
        smuggled_words.insert(at, smuggle.replace('X', &other));
        let smuggled = smuggled_words.join(" ");
        let disguised = format!("{disguise}{line}");

        let lines = [&pattern_text, &line, &chained, &smuggled, &disguised];
        if cfg!(windows) {
            // `cmd` quotes differently: there an allow pattern never matches.
            for l in lines {
                prop_assert!(!pattern_matches(&pattern_text, l));
            }
            return Ok(());
        }
        prop_assert!(pattern_matches(&pattern_text, &pattern_text));
        prop_assert!(pattern_matches(&pattern_text, &line), "{pattern_text:?} vs {line:?}");
        prop_assert_eq!(pattern_matches(&pattern_text, &chained), chained_ok, "{:?}", chained);
        prop_assert!(!pattern_matches(&pattern_text, &smuggled), "{pattern_text:?} vs {smuggled:?}");
        // `sudo cargo test` is not `cargo test`, unless the pattern itself says `sudo …`.
        let disguised_words = parse(&disguised).parts.into_iter().flatten().collect::<Vec<_>>();
        prop_assert_eq!(
            pattern_matches(&pattern_text, &disguised),
            disguised_words.starts_with(&pattern),
            "{:?}", disguised
        );
        for l in lines {
            if pattern_matches(&pattern_text, l) {
                prop_assert!(pattern_hits(&pattern_text, l), "{pattern_text:?} allows but does not hit {l:?}");
            }
        }
    }
}

/// The generators do what the properties assume: every quoting style reads back as the
/// same word, and a wrapped call reads back as the nesting it was built as.
#[test]
fn the_generators_write_what_a_shell_reads() {
    for w in [
        "a b",
        "it's",
        "$(x)",
        "`y`",
        "line\nbreak",
        "back\\slash",
        "\"q\"",
        "",
        "é",
    ] {
        for style in 0..8 {
            let q = quote(w, style);
            let p = parse(&q);
            assert!(!p.opaque, "{q:?}");
            assert_eq!(p.parts, [vec![w.to_string()]], "{w:?} as {q:?}");
        }
    }
    let layers = [
        Layer::Runner {
            runner: 1,
            path: "",
            opts: vec![(true, 0, false)],
            dashdash: false,
            positional: 0,
        },
        Layer::Shell {
            shell: "bash",
            path: "",
            flags: vec![],
            c: "-lc",
            style: 1,
            trailing: vec![],
        },
        Layer::Chain {
            before: Some((0, false, "&&")),
            after: None,
            spaced: true,
        },
    ];
    let line = wrap("rm x".into(), &layers, "rm", 0);
    let parts = parse(&line).parts;
    assert_eq!(parts.len(), 2, "{line:?}");
    assert_eq!(parts[0], strings(&["ls"]));
    assert_eq!(parts[1][..2], strings(&["bash", "-lc"]));
    assert_eq!(
        parse(&parts[1][2]).parts,
        [strings(&["sudo", "-u", "root", "rm", "x"])]
    );
}

/// The bypass the disguise property found: a backslash-newline between blanks (how long
/// commands are written over several lines) made an empty word, which the matcher took for
/// the program; inside double quotes it stayed in the word (`"r\⏎m"` is `rm` to a shell).
#[test]
fn a_backslash_newline_is_no_word() {
    for line in [
        "sudo \\\n  rm -rf x",
        "env \\\n rm x",
        "X=1 \\\n rm x",
        "\\\n rm x",
        "\"r\\\nm\" x",
    ] {
        assert!(pattern_hits("rm", line), "{line:?} runs rm");
    }
    assert_eq!(
        parse("cargo \\\n  test").parts,
        [strings(&["cargo", "test"])]
    );
    if !cfg!(windows) {
        assert!(pattern_matches("cargo test", "cargo \\\n  test --doc"));
    }
}

// ---------------------------------------------------------------------------------------
// Real shells as the oracle.

/// The allow rules a hidden command must never get past: none names `touch`.
const ALLOWS: &[&str] = &["echo ok", "echo", "true", "cat", "set -x"];

/// What opens a place where a reader could lose track of the shell: comments holding
/// quotes or a backslash, quotes, continuations, substitutions, expansions, heredocs.
const OPENERS: &[&str] = &[
    "", " ", " #'", " #\"", " # \\", " #`", " #", "#'", " '", " \"", " \\", " `", " $(", " ${x:-",
    " <<E", " <<'E'", " $'", " $\"", " \\#'", " '#'", "\t#'",
];

/// Between the opener and the hidden command.
const GLUES: &[&str] = &[
    "\n", "\\\n", ";", " ", "\r\n", "\r", " && ", " | ", " & ", "\n\n", "\\\r\n",
];

/// The hidden command, in disguises that run `touch` or do not.
const PAYLOADS: &[&str] = &[
    "touch CANARY",
    "touch 'CANARY'",
    "tou\\\nch CANARY",
    "/usr/bin/tou?h CANARY",
    "/usr/bin/touc[h] CANARY",
    "t{ouch,} CANARY",
    "$(touch CANARY)",
    "`touch CANARY`",
    "echo \"$(touch CANARY)\"",
    "eval 'touch CANARY'",
    "eval touch CANARY",
    "trap 'touch CANARY' EXIT",
    "${x:='$(touch CANARY)'}${x@P}",
    "x='$(touch CANARY)'; echo ${x@P}",
    "y='a[$(touch CANARY)]'; echo ${HOME:y}",
    "y='a[$(touch CANARY)]'; [[ $y -eq 0 ]]",
    "y='a[$(touch CANARY)]'; echo $((y))",
    "y='a[$(touch CANARY)]'; let y",
    "if true; then touch CANARY; fi",
    "while false; do :; done; ! touch CANARY",
    "PS4='$(touch CANARY)'; set -x; echo ok",
    "alias t=touch\nt CANARY",
    "t=touch; $t CANARY",
    "t=touch; \"$t\" CANARY",
    "cat <<E\n$(touch CANARY)\nE",
    "cat <<'E'\n$(touch CANARY)\nE",
    "echo ok # touch CANARY",
    "echo CANARY",
    "x=1",
];

/// What closes the opener, or leaves it open.
const CLOSERS: &[&str] = &[
    "",
    " #'",
    " #\"",
    "'",
    "\"",
    "`",
    ")",
    "}",
    "\nE",
    " #",
    "\necho ok",
    " ok",
];

/// Around it all: nothing, or harmless allowed commands.
const FRAMES: &[&str] = &["", "echo ok; ", "true && ", "echo 'a\nb' ", "echo ok\n"];

/// Runs `line` with `shell -c` in a folder of its own (no environment but PATH and HOME,
/// no input, a time limit); whether it left a file named CANARY there.
fn canary_appears(shell: &[&str], line: &str) -> bool {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(shell[0])
        .args(&shell[1..])
        .arg("-c")
        .arg(line)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("{} must be installed: {e}", shell[0]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            _ if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
    if line.contains('&') {
        // A command sent to the background may still be starting.
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    dir.path().join("CANARY").exists()
}

/// Lines the matcher passes: allowed by a rule that does not name `touch`, or missed by
/// a deny rule that does. Only those run (the others cannot break the property).
fn verdicts(line: &str) -> (Vec<&'static str>, bool) {
    let allowed = ALLOWS
        .iter()
        .copied()
        .filter(|p| pattern_matches(p, line))
        .collect();
    (allowed, pattern_hits("touch", line))
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    /// Real shells decide: whenever `dash` or `bash --posix` runs the hidden `touch`, no
    /// allow rule above let the line through and a deny rule for `touch` hit it.
    #[test]
    #[cfg(unix)]
    fn no_line_that_runs_a_hidden_command_is_allowed_or_missed(
        frame in prop::sample::select(FRAMES.to_vec()),
        allowed in prop::sample::select(vec!["echo ok", "echo", "true", "echo ok ok"]),
        opener in prop::sample::select(OPENERS.to_vec()),
        glue in prop::sample::select(GLUES.to_vec()),
        payload in prop::sample::select(PAYLOADS.to_vec()),
        closer in prop::sample::select(CLOSERS.to_vec()),
        tail in prop::sample::select(FRAMES.to_vec()),
    ) {
        let line = format!("{frame}{allowed}{opener}{glue}{payload}{closer}\n{tail}");
        let (allowed_by, denied) = verdicts(&line);
        if allowed_by.is_empty() && denied {
            return Ok(());
        }
        for shell in [&["dash"][..], &["bash", "--posix"][..]] {
            if canary_appears(shell, &line) {
                prop_assert!(
                    allowed_by.is_empty(),
                    "{shell:?} runs the hidden touch in {line:?}, yet {allowed_by:?} allow it"
                );
                prop_assert!(denied, "{shell:?} runs the hidden touch in {line:?}, and a deny rule for touch misses it");
            }
        }
    }
}

/// The oracle itself works: the shells do run what the review found hidden, so the
/// property above is about real behaviour.
#[test]
#[cfg(unix)]
fn the_shells_run_the_commands_the_review_found_hidden() {
    for line in [
        "echo ok #'\ntouch CANARY #'",
        "echo ok # \\\ntouch CANARY",
        "echo ok #\"\ntouch CANARY #\"",
    ] {
        for shell in [&["dash"][..], &["bash", "--posix"][..]] {
            assert!(canary_appears(shell, line), "{shell:?} {line:?}");
        }
        assert_eq!(verdicts(line), (Vec::new(), true), "{line:?}");
    }
    assert!(canary_appears(
        &["bash", "--posix"],
        "x='$(touch CANARY)'; echo ${x@P}"
    ));
    assert!(!canary_appears(&["dash"], "echo 'touch CANARY'"));
}
