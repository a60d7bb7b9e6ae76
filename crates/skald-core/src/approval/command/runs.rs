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
    (
        "flock",
        &[
            "-w",
            "--wait",
            "--timeout",
            "-E",
            "--conflict-exit-code",
            "-c",
            "--command",
        ],
    ),
    ("prlimit", &["-p", "--pid", "-o", "--output"]),
    (
        "setpriv",
        &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        ],
    ),
    (
        "unshare",
        &[
            "-S",
            "--setuid",
            "-G",
            "--setgroups",
            "-R",
            "--root",
            "-w",
            "--wd",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--propagation",
            "--monotonic",
            "--boottime",
        ],
    ),
    (
        "nsenter",
        &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
    ),
    (
        "strace",
        &[
            "-o",
            "--output",
            "-e",
            "-p",
            "--attach",
            "-s",
            "--string-limit",
            "-u",
            "--user",
            "-a",
            "--columns",
            "-b",
            "--detach-on",
            "-E",
            "--env",
            "-I",
            "--interruptible",
            "-O",
            "-P",
            "--trace-path",
            "-S",
            "--summary-sort-by",
            "-U",
            "--summary-columns",
            "-X",
            "--const-print-style",
        ],
    ),
    (
        "ltrace",
        &[
            "-o",
            "--output",
            "-e",
            "-p",
            "-s",
            "-u",
            "-a",
            "--align",
            "-A",
            "-D",
            "--debug",
            "-l",
            "--library",
            "-n",
            "--indent",
            "-x",
        ],
    ),
    ("chroot", &["--userspec", "--groups"]),
    (
        "runuser",
        &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-G",
            "--supp-group",
            "-c",
            "--command",
            "-s",
            "--shell",
            "-w",
            "--whitelist-environment",
        ],
    ),
    (
        "su",
        &[
            "-c",
            "--command",
            "-C",
            "--session-command",
            "-g",
            "--group",
            "-G",
            "--supp-group",
            "-s",
            "--shell",
            "-w",
            "--whitelist-environment",
        ],
    ),
    ("sg", &["-c"]),
    ("pkexec", &["--user"]),
    (
        "script",
        &[
            "-c",
            "--command",
            "-E",
            "--echo",
            "-I",
            "--log-in",
            "-O",
            "--log-out",
            "-B",
            "--log-io",
            "-T",
            "--log-timing",
            "-m",
            "--logging-format",
            "-o",
            "--output-limit",
        ],
    ),
    ("watch", &["-n", "--interval", "-q", "--equexit"]),
    ("faketime", &["-m", "-f"]),
    ("busybox", &[]),
    ("toybox", &[]),
    ("catchsegv", &[]),
    ("unbuffer", &[]),
    ("torsocks", &["-u", "-p", "-a", "-P"]),
    ("proxychains", &["-f"]),
    ("proxychains4", &["-f"]),
    (
        "xvfb-run",
        &[
            "-n",
            "--server-num",
            "-f",
            "--auth-file",
            "-e",
            "--error-file",
            "-p",
            "--xauth-protocol",
            "-s",
            "--server-args",
            "-w",
            "--wait",
        ],
    ),
    ("dbus-run-session", &["--config-file", "--dbus-daemon"]),
    (
        "systemd-run",
        &[
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--uid",
            "--gid",
            "--nice",
            "--slice",
            "--description",
            "--working-directory",
            "--service-type",
            "--on-active",
            "--on-boot",
            "--on-calendar",
        ],
    ),
];

/// Runners whose option value is itself a command line: `env -S 'rm x'`, `flock -c`,
/// `script -c`, `su -c`, `runuser -c`, `sg -c`.
const SCRIPT_OPTIONS: &[(&str, &[&str])] = &[
    ("env", &["-S", "--split-string"]),
    ("flock", &["-c", "--command"]),
    ("script", &["-c", "--command"]),
    ("su", &["-c", "--command", "-C", "--session-command"]),
    ("runuser", &["-c", "--command"]),
    ("sg", &["-c"]),
];

/// Runners with words of their own between their options and the program they run (a
/// duration, a lock file, a new root), and how many.
const BEFORE_PROGRAM: &[(&str, usize)] = &[
    ("timeout", 1),
    ("chrt", 1),
    ("taskset", 1),
    ("flock", 1),
    ("chroot", 1),
    ("faketime", 1),
    ("sg", 1),
];

/// Runners that hand the rest of their words, joined, to a shell (`watch 'rm x'`, `sg
/// group rm x`), as `eval` does.
const JOINED: &[&str] = &["watch", "sg"];

/// Runners whose other words are no program: a user (`su`), a log file (`script`); only
/// their command-line option runs something.
const NO_PROGRAM: &[&str] = &["script", "su"];

/// Options of git that set a configuration value for the one call (`-c key=value`,
/// `--config-env=key=VAR`): an alias defined there, or a setting git runs as a program,
/// makes the line run what no word shows.
const GIT_CONFIG_OPTIONS: &[&str] = &["-c", "--config-env"];

/// Configuration keys whose value git runs as a program or a shell line.
const GIT_RUNS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.hookspath",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "credential.helper",
    "gpg.program",
    "pager.",
    "uploadpack.packobjectshook",
];

/// How one option word of a runner reads, the way `getopt` reads it: how many words it
/// takes (itself, and its value if that is the next word), and its value when the runner
/// runs that value as a command line. In a group of short options (`-iu root`, `-uroot`,
/// `-vS 'rm x'`) the first that takes a value takes the rest of the word, or the next
/// word when nothing is left.
fn option_word<'a>(
    w: &'a str,
    next: Option<&'a String>,
    listed: &[&str],
    scripts: &[&str],
) -> (usize, Option<&'a str>) {
    if w.starts_with("--") {
        if let Some((opt, value)) = w.split_once('=') {
            return (1, scripts.contains(&opt).then_some(value));
        }
        if listed.contains(&w) {
            return (
                2,
                scripts
                    .contains(&w)
                    .then(|| next.map(String::as_str))
                    .flatten(),
            );
        }
        return (1, None);
    }
    for (k, c) in w.char_indices().skip(1) {
        let opt = format!("-{c}");
        if !listed.contains(&opt.as_str()) {
            continue;
        }
        let rest = &w[k + c.len_utf8()..];
        let script = scripts.contains(&opt.as_str());
        return if rest.is_empty() {
            (2, script.then(|| next.map(String::as_str)).flatten())
        } else {
            (1, script.then_some(rest))
        };
    }
    (1, None)
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
    runs_from(words, expanded, 0)
}

/// `runs` for the command that starts at word `from`.
fn runs_from<'a>(words: &'a [String], expanded: &[bool], from: usize) -> Vec<Run<'a>> {
    use std::borrow::Cow;
    let mut out = Vec::new();
    let mut i = from;
    let assignment = |w: &str| w.split_once('=').is_some_and(|(name, _)| is_name(name));
    let dynamic = |i: usize| expanded.get(i).copied().unwrap_or(false);
    while i < words.len() {
        while i < words.len() && assignment(&words[i]) {
            // `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x …`: configuration (aliases
            // among it) for the one call, as `git -c` gives.
            if words[i].starts_with("GIT_CONFIG_") {
                out.push(Run::Unknown);
            }
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
            let mut script_given = false;
            let mut from_stdin = false;
            while let Some(w) = words
                .get(j)
                .filter(|w| w.starts_with('-') || w.starts_with('+'))
            {
                j += 1;
                if w == "-" || w == "--" {
                    from_stdin |= w == "-";
                    break;
                }
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
                    script_given = true;
                    break;
                } else if w.starts_with('-') && !w.starts_with("--") && w.contains('s') {
                    from_stdin = true;
                }
            }
            // A shell given no script reads its program from its standard input
            // (`echo 'rm x' | sh`, `sh -s`): what it runs is in no word.
            if !script_given && (from_stdin || words.get(j).is_none()) {
                out.push(Run::Unknown);
            }
            break;
        }
        if name == "find" {
            out.extend(find_actions(words, expanded, i + 1));
            break;
        }
        if name == "git" && git_runs_hidden(words, i + 1) {
            out.push(Run::Unknown);
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
        let scripts = SCRIPT_OPTIONS
            .iter()
            .find(|(r, _)| *r == name)
            .map_or(&[][..], |(_, o)| *o);
        if NO_PROGRAM.contains(&name) {
            // Options come anywhere among its words (`script log -c 'rm x'`).
            let mut j = i;
            while let Some(w) = words.get(j) {
                if dynamic(j) {
                    out.push(Run::Unknown);
                    break;
                }
                let (taken, script) = if w.starts_with('-') {
                    option_word(w, words.get(j + 1), listed, scripts)
                } else {
                    (1, None)
                };
                if let Some(script) = script {
                    out.push(Run::Script(Cow::Borrowed(script)));
                }
                j += taken;
            }
            break;
        }
        // Its options (and their values) and its own words (`timeout`'s duration, `flock`'s
        // lock file), options read again after each such word as GNU's `getopt` permutes
        // them (`flock L -c 'rm x'`).
        let mut own = BEFORE_PROGRAM
            .iter()
            .find(|(r, _)| *r == name)
            .map_or(0, |(_, n)| *n);
        loop {
            // After `--` no word is an option.
            let mut ended = false;
            while let Some(w) = words.get(i).filter(|w| w.starts_with('-') || dynamic(i)) {
                // `sudo $opts rm`: the options may be anything, the program too.
                if dynamic(i) {
                    out.push(Run::Unknown);
                    return out;
                }
                if w == "--" {
                    i += 1;
                    ended = true;
                    break;
                }
                // `env -S 'rm -rf x'`, `flock -c 'rm x' L`: the value is a command line.
                let (taken, script) = option_word(w, words.get(i + 1), listed, scripts);
                if let Some(script) = script {
                    out.push(Run::Script(Cow::Borrowed(script)));
                }
                i += taken;
            }
            if own == 0 {
                break;
            }
            own -= 1;
            i += 1;
            if ended {
                i += own;
                break;
            }
        }
        if JOINED.contains(&name) {
            // `sg group -c 'rm x'` is `sg group 'rm x'`.
            if words.get(i).is_some_and(|w| w == "-c") {
                i += 1;
            }
            if expanded[i.min(expanded.len())..].contains(&true) {
                out.push(Run::Unknown);
            } else if i < words.len() {
                out.push(Run::Script(Cow::Owned(words[i..].join(" "))));
            }
            break;
        }
    }
    out
}

/// What `find`'s actions run: the command after each `-exec`, `-execdir`, `-ok` and
/// `-okdir` (read to the end of the line: a rule that denies is then broader, never
/// narrower).
fn find_actions<'a>(words: &'a [String], expanded: &[bool], from: usize) -> Vec<Run<'a>> {
    let mut out = Vec::new();
    for j in from..words.len() {
        if matches!(words[j].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            out.extend(runs_from(words, expanded, j + 1));
        }
    }
    out
}

/// Whether git's words before its subcommand set, for this call, an alias or a setting
/// git runs as a program (`git -c alias.x='!rm x' x`, `-c core.pager='rm x'`).
fn git_runs_hidden(words: &[String], from: usize) -> bool {
    let mut j = from;
    while let Some(w) = words.get(j).filter(|w| w.starts_with('-')) {
        let (value, taken) = match GIT_CONFIG_OPTIONS.iter().find(|o| w.starts_with(**o)) {
            Some(o) if w.len() == o.len() => (words.get(j + 1).map(String::as_str), 2),
            Some(o) => (Some(w[o.len()..].trim_start_matches('=')), 1),
            None => {
                // `-C dir`, `--git-dir dir`, … take the next word; `--x=y` does not.
                let takes = matches!(
                    w.as_str(),
                    "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
                );
                (None, if takes { 2 } else { 1 })
            }
        };
        if let Some(key) = value.map(|v| v.split('=').next().unwrap_or(v).to_ascii_lowercase())
            && (key.starts_with("alias.") || GIT_RUNS.iter().any(|r| key.starts_with(r)))
        {
            return true;
        }
        j += taken;
    }
    false
}
