#!/usr/bin/env bash
# Sets up what is missing and runs every test: formatting, lints, and the whole workspace
# test suite (unit tests, the real-process CLI tests, parity checks against ripgrep).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }

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
say "cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
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
# One closing line for the whole run, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
