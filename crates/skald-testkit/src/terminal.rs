//! A real terminal for tests that need one: a program run on a fresh pseudo-terminal as its
//! session's controlling terminal, the way a user's shell runs `skald` in a terminal window.

use std::ffi::OsStr;
use std::process::Command;

/// Runs argv[1:] on a new pseudo-terminal (Python's `pty.fork`: a session of its own with
/// the terminal as its controlling one), copies everything written to the terminal to
/// stdout, and exits with the program's status once the program has ended and the terminal
/// is silent. A bound of 60 s of silence keeps a test from hanging on a program that never
/// ends.
const HARNESS: &str = r#"
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    ready, _, _ = select.select([fd], [], [], 60)
    if not ready:
        break
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"#;

/// `program args…` on a terminal of its own, as [`HARNESS`] says: a `Command` for
/// `python3`, to which the caller adds its environment. The terminal's output (input
/// echoed back included) is the command's stdout.
pub fn in_a_terminal(program: impl AsRef<OsStr>, args: &[&OsStr]) -> Command {
    let mut c = Command::new("python3");
    c.arg("-c").arg(HARNESS).arg(program).args(args);
    c
}

/// A Python program that tries, from wherever it runs, every way to put input into a
/// terminal or act on a console: `TIOCSTI` (type a line) and `TIOCLINUX` on `/dev/tty`
/// opened for writing and for reading, on its own standard descriptors, and on every
/// `/dev/pts/N` opened either way. It prints one line per attempt: the name, the call,
/// and its errno's name (or `typed` / `done` when it worked). The line it would type is
/// `echo ` and [`TYPED`], assembled at run time so the program's own text never holds it.
pub const TYPE_INTO_THE_TERMINAL: &str = r#"
import errno, fcntl, glob, os
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
line = ("echo " + "TYPED" + "-BY-" + "THE-COMMAND\n").encode()
def openers():
    yield "tty-w", lambda: os.open("/dev/tty", os.O_WRONLY)
    yield "tty-r", lambda: os.open("/dev/tty", os.O_RDONLY)
    for n in (0, 1, 2):
        yield "fd%d" % n, (lambda n=n: os.dup(n))
    for p in sorted(glob.glob("/dev/pts/[0-9]*")):
        yield p + "-r", (lambda p=p: os.open(p, os.O_RDONLY | os.O_NOCTTY))
        yield p + "-w", (lambda p=p: os.open(p, os.O_WRONLY | os.O_NOCTTY))
for name, opener in openers():
    try:
        fd = opener()
    except OSError as e:
        print(name, "open", errno.errorcode[e.errno])
        continue
    try:
        for b in line:
            fcntl.ioctl(fd, TIOCSTI, bytes([b]))
        print(name, "TIOCSTI typed")
    except OSError as e:
        print(name, "TIOCSTI", errno.errorcode[e.errno])
    try:
        fcntl.ioctl(fd, TIOCLINUX, bytes([3]))
        print(name, "TIOCLINUX done")
    except OSError as e:
        print(name, "TIOCLINUX", errno.errorcode[e.errno])
"#;

/// What [`TYPE_INTO_THE_TERMINAL`] would type, after `echo `.
pub const TYPED: &str = "TYPED-BY-THE-COMMAND";

/// A `bash -c` line for [`in_a_terminal`]: runs `"$@"`, then reads what was typed into the
/// terminal meanwhile (for two seconds) and prints it as `typed:[…]`.
pub const THEN_READ_THE_TERMINAL: &str = r#""$@"; read -r -t 2 line; echo "typed:[$line]""#;

/// Checks a terminal's output after [`TYPE_INTO_THE_TERMINAL`] ran confined under
/// [`THEN_READ_THE_TERMINAL`]: nothing was typed, every `TIOCLINUX` was refused by the
/// filter (`EPERM`, not the device's own answer), and the terminal was read. `no_tty`: the
/// command had no controlling terminal, so `/dev/tty` could not be opened at all.
pub fn assert_nothing_typed(text: &str, no_tty: bool) {
    assert!(!text.contains(TYPED), "a line was typed: {text}");
    assert!(!text.contains("TIOCSTI typed"), "{text}");
    assert!(
        text.contains("typed:[]"),
        "the terminal was not read: {text}"
    );
    let linux: Vec<&str> = text.lines().filter(|l| l.contains("TIOCLINUX")).collect();
    assert!(!linux.is_empty(), "the attempts did not run: {text}");
    for l in linux {
        assert!(l.trim_end().ends_with("TIOCLINUX EPERM"), "{l}\n{text}");
    }
    // No terminal device is writable, controlling or not.
    assert!(text.contains("tty-w open"), "{text}");
    if no_tty {
        assert!(text.contains("tty-r open ENXIO"), "{text}");
    }
}
