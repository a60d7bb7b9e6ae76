#!/usr/bin/env bash
# Sets up what is missing and runs every test: formatting, lints, and the whole workspace
# test suite (unit tests, the real-process CLI tests, parity checks against ripgrep).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }

# The UI first: the desktop app (src-tauri) embeds its build, so the Rust steps need it.
say "UI build"
npm --prefix ui run --silent build

if cargo fmt --version >/dev/null 2>&1; then
  say "cargo fmt --check"
  cargo fmt --all -- --check
else
  echo "warning: rustfmt is not installed; formatting not checked" >&2
fi
if cargo clippy --version >/dev/null 2>&1; then
  say "cargo clippy"
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "warning: clippy is not installed; lints not checked" >&2
fi
say "crate arrows (every dependency points down a layer)"
python3 scripts/crate_layers.py
say "module arrows (no import circle in skald-core)"
python3 scripts/module_cycles.py
say "cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --no-fail-fast: one failing test binary must not hide the failures of the others.
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log"
# The OS-keyring path of the secrets needs a Secret Service: a private D-Bus session with
# an unlocked gnome-keyring (scripts/setup.sh --test installs both), whose keyrings live in
# a throwaway folder — never the user's own.
say "cargo test (secrets in the OS keyring, under dbus-run-session)"
keyrings=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$keyrings"' EXIT
XDG_DATA_HOME="$keyrings" dbus-run-session -- bash -c \
  'printf skald-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
   cargo test -p skald-secrets --test keyring --locked -- --include-ignored' 2>&1 \
  | grep -v "Failed to set fd limit" | tee -a "$log"
# The UI: its unit tests (Vitest), its build, and the end-to-end tests in headless
# Chromium against a real `skald serve` (the debug binary `cargo test` built) and a
# scripted model server. Their counts join the summary below.
say "UI unit tests (vitest)"
ui_rc=0
NO_COLOR=1 npm --prefix ui run --silent test 2>&1 | tee "$log.ui" || ui_rc=$?
awk '/Tests +[0-9]+/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p = $(i-1); if ($i ~ /^failed/) f = $(i-1) } }
     END { printf "test result: ui. %d passed; %d failed\n", p, f }' "$log.ui" >> "$log"
say "UI end to end (headless Chromium)"
# Absolute, with symlinks resolved: the tests find processes and launch binaries by these
# paths, whatever folder they run in (CARGO_TARGET_DIR may be relative, or unset: ./target).
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd -P)"
SKALD_BIN="$target/debug/skald" SKALD_E2E_RESULTS="$target/e2e-results.json" \
  node --test --test-concurrency=1 --test-reporter=spec ui/e2e/skald.e2e.mjs 2>&1 \
  | tee "$log.e2e" || ui_rc=$?
awk '/ pass [0-9]+$/ { p = $NF } / fail [0-9]+$/ { f = $NF }
     END { printf "test result: e2e. %d passed; %d failed\n", p, f }' "$log.e2e" >> "$log"
say "desktop app end to end (Xvfb, tauri-driver, WebKitWebDriver)"
# The X authority file is ours, not a temporary folder of xvfb-run's: xvfb-run removes its
# folder before it stops Xvfb and gives up if that fails, leaving Xvfb running.
xauth_dir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$keyrings" "$xauth_dir"' EXIT
SKALD_DESKTOP_BIN="$target/debug/skald-desktop" SKALD_DESKTOP_REQUIRED=1 \
  dbus-run-session -- xvfb-run -a -f "$xauth_dir/Xauthority" -s "-screen 0 1400x900x24" \
  node --test --test-concurrency=1 --test-reporter=spec ui/e2e/desktop.e2e.mjs 2>&1 \
  | grep -v "Failed to set fd limit" | tee "$log.desk" || ui_rc=$?
awk '/ pass [0-9]+$/ { p = $NF } / fail [0-9]+$/ { f = $NF }
     END { printf "test result: desktop. %d passed; %d failed\n", p, f }' "$log.desk" >> "$log"
rm -f "$log.ui" "$log.e2e" "$log.desk"
# One closing line for the whole run, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
# A failure anywhere fails the run (the UI's runners also by their exit code: a runner that
# crashed before counting anything must not pass).
[[ $ui_rc -eq 0 ]] && ! grep -Eq "^test result: .*[1-9][0-9]* failed" "$log"
