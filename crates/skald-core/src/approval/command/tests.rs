//! Unit tests of `command`.

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
        // Issue #47: option values attached to their option, and more runners.
        "env -S\"rm x\"",
        "env -vS \"rm x\"",
        "env -iS'rm x'",
        "env --split-string 'rm x'",
        "find x -exec rm x \\;",
        "find . -name a -execdir rm {} +",
        "find . -ok rm {} \\;",
        "find . -exec sh -c 'rm x' \\;",
        "flock L rm x",
        "flock -w 5 L rm x",
        "flock -c 'rm x' L",
        "flock L -c 'rm x'",
        "prlimit rm x",
        "prlimit --nofile=10 rm x",
        "prlimit -p 1 rm x",
        "setpriv rm x",
        "setpriv --reuid 1000 rm x",
        "unshare rm x",
        "unshare -r rm x",
        "unshare --wd /tmp rm x",
        "script -qc 'rm x'",
        "script -q -c 'rm x' /dev/null",
        "script /dev/null -c 'rm x'",
        "script --command='rm x'",
        "strace -o /dev/null rm x",
        "strace -f -e trace=none rm x",
        "ltrace -o f rm x",
        "sudo -uroot rm x",
        "sudo -u root -- rm x",
        "nsenter -t 1 rm x",
        "chroot / rm x",
        "runuser -u me -- rm x",
        "su -c 'rm x' me",
        "su me -c 'rm x'",
        "sg grp -c 'rm x'",
        "sg grp rm x",
        "watch -n 1 rm x",
        "watch 'rm x'",
        "busybox rm x",
        "faketime '2020-01-01' rm x",
        "systemd-run --user rm x",
        "xvfb-run -a rm x",
        "torsocks rm x",
        "timeout -k5 10 rm x",
    ] {
        assert!(pattern_hits("rm", line), "{line:?} runs rm");
    }
    // An alias or a program-running setting defined for the one call, and a shell reading
    // its program from its input, run what no word shows: deny and require rules hit.
    for (pattern, line) in [
        ("rm", "git -c alias.x='!rm x' x"),
        ("rm", "git -calias.x='!rm x' x"),
        ("rm", "git --config-env=alias.x=CMD x"),
        ("rm", "git -c core.pager='rm x' log"),
        (
            "rm",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm x' git x",
        ),
        ("git push", "git -c alias.p=push p"),
        ("git push", "git -C . -c alias.p=push p"),
        ("rm", "echo 'rm x' | sh"),
        ("rm", "echo 'rm x' | bash -s"),
        ("rm", "printf 'rm x' | sh -"),
        ("rm", "cat script | bash -x"),
    ] {
        assert!(pattern_hits(pattern, line), "{line:?} may run {pattern}");
    }
    // Neighbours that run nothing more.
    for line in [
        "git -c user.name=x commit",
        "git -C dir status",
        "script -q log",
        "su me",
        "find . -name rm",
        "flock L true",
    ] {
        assert!(!pattern_hits("rm", line), "{line:?} does not run rm");
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

/// The review's findings: a comment that `sh` ends at the newline hid the next line
/// from the matcher, which read the comment's quote as opening a string.
#[test]
fn comments_end_at_the_newline_as_sh_reads_them() {
    for line in [
        "echo ok #'\ntouch hit #'",
        "echo ok # \\\ntouch hit",
        "echo ok #\"\ntouch hit #\"",
        "echo ok;#'\ntouch hit",
        "echo ok&#`\ntouch hit",
        "#'\ntouch hit",
        "echo ok\t#'\ntouch hit",
    ] {
        assert!(
            !pattern_matches("echo ok", line),
            "{line:?} must not be allowed"
        );
        assert!(
            !pattern_matches("echo", line),
            "{line:?} must not be allowed"
        );
        assert!(pattern_hits("touch", line), "{line:?} runs touch");
    }
    let p = parse("echo ok # a comment; rm -rf ~\necho two");
    assert_eq!(p.parts, [vec!["echo", "ok"], vec!["echo", "two"]]);
    assert!(!p.opaque);
    // Inside a word a `#` is text.
    assert_eq!(
        parse("echo a#b 'c'#d $#").parts,
        [vec!["echo", "a#b", "c#d", "$#"]]
    );
    // Only space and tab separate words: to `sh`, `ok\r#'…` is one word.
    assert_eq!(parse("echo ok\r#x").parts, [vec!["echo", "ok\r#x"]]);
}

#[test]
fn expansions_the_parser_does_not_follow_are_opaque() {
    for line in [
        "echo ${x:='$(touch hit)'}${x@P}",
        "echo ${HOME:y}",
        "echo ${#HOME}",
        "echo \"${x:-a}\"",
        "echo $[1+1]",
        "echo ${HOME",
        "y='a[$(touch hit)]'; [[ $y -eq 0 ]]",
        "let y=1",
        "declare -i y=z",
        "unset 'a[$(touch hit)]'",
        "printf -v 'a[x]' %s 1",
        "test -v 'a[x]'",
        "alias e=touch\ne hit",
        "hash -p /usr/bin/touch e",
        "PS4='$(touch hit)'; set -x; echo ok",
        "export PS4='x'",
        "env 'BASH_FUNC_echo%%=() { touch hit; }' bash -c 'echo ok'",
        "BASH_ENV=x bash -c 'echo ok'",
    ] {
        assert!(parse(line).opaque, "{line:?} must be opaque");
        assert!(!pattern_matches("echo", line), "{line:?}");
        assert!(pattern_hits("touch", line), "{line:?}");
    }
    for line in ["echo ${HOME} $HOME \"$1\" $@ ${1}", "echo $", "echo 'PS=x'"] {
        assert!(!parse(line).opaque, "{line:?} is plain");
    }
}

#[test]
fn programs_the_shell_works_out_at_run_time_are_unknown() {
    for line in [
        "t=touch; $t hit",
        "\"$t\" hit",
        "${t} hit",
        "/usr/bin/tou?h hit",
        "/usr/bin/touc[h] hit",
        "t{ouch,} hit",
        "sudo $t hit",
        "sudo -u root $t hit",
        "sh -c \"$script\"",
        "eval \"$x\"",
    ] {
        assert!(pattern_hits("rm", line), "{line:?} may run anything");
        assert!(!pattern_matches("echo", line), "{line:?}");
    }
    assert!(!pattern_matches("t ouch", "t{ouch,}"));
    assert!(
        !pattern_matches("$t", "$t x"),
        "an expanded word is never literal"
    );
    // Arguments may expand: they are not programs.
    assert!(pattern_matches("cargo test", "cargo test $ARGS *.rs"));
    assert!(!pattern_hits("rm", "echo $x *"));
}

#[test]
fn keywords_eval_and_trap_run_what_follows() {
    for line in [
        "if true; then touch hit; fi",
        "if touch hit; then :; fi",
        "while false; do touch hit; done",
        "until true; do :; done; ! touch hit",
        "for f in a; do touch hit; done",
        "if x; then :; else touch hit; fi",
        "coproc touch hit",
        "eval 'touch hit'",
        "eval touch hit",
        "eval -- 'touch hit'",
        "trap 'touch hit' EXIT",
        "trap -- 'touch hit' EXIT",
        "command eval 'touch hit'",
    ] {
        assert!(pattern_hits("touch", line), "{line:?} runs touch");
        assert!(!pattern_matches("true", line), "{line:?}");
    }
    assert!(!pattern_hits("touch", "eval 'echo touch'"));
    assert!(!pattern_hits("touch", "trap 'echo' touch"));
}

/// The review's findings for "always allow": interpreters and runners keep their
/// script or subcommand, destructive or code-running programs the whole call.
#[test]
fn proposals_keep_scripts_subcommands_and_dangerous_arguments() {
    let p = |l: &str| proposed_pattern(l);
    assert_eq!(p("/bin/bash x.sh").as_deref(), Some("/bin/bash x.sh"));
    assert_eq!(p("python3 x.py").as_deref(), Some("python3 x.py"));
    assert_eq!(
        p("/usr/bin/python3.12 x.py a").as_deref(),
        Some("/usr/bin/python3.12 x.py a")
    );
    assert_eq!(p("node server.js").as_deref(), Some("node server.js"));
    assert_eq!(p("tar xf a.tar").as_deref(), Some("tar xf a.tar"));
    assert_eq!(p("uv run pytest -x").as_deref(), Some("uv run pytest"));
    assert_eq!(p("npm run build").as_deref(), Some("npm run build"));
    assert_eq!(p("uv run").as_deref(), Some("uv run"));
    assert_eq!(
        p("git config user.name x").as_deref(),
        Some("git config user.name x")
    );
    assert_eq!(p("rm notes.txt").as_deref(), Some("rm notes.txt"));
    assert_eq!(p("docker run alpine").as_deref(), Some("docker run alpine"));
    assert_eq!(p("git status --short").as_deref(), Some("git status"));
    // What the rule holds reads back as the call's words.
    assert_eq!(
        p("python3 'my script.py' \"it's\"").as_deref(),
        Some("python3 'my script.py' 'it'\\''s'")
    );
    assert!(pattern_matches(
        &p("python3 'my script.py'").unwrap(),
        "python3 'my script.py'"
    ));
    assert_eq!(p("cat $FILE").as_deref(), Some("cat"));
    assert_eq!(p("$EDITOR x"), None);
}
