#!/usr/bin/env bash
# Runs the benchmarks that compare Skald's tools with their reference programs (ripgrep,
# universal-ctags, a bare shell spawn, latexmk, a static page in Chromium, Tauri's
# hello-world window) and writes the ratios to docs/performance.md.
#   bash scripts/bench.sh [--only grep|outline|shell|checkpoints|engine|latex|local|first-answer|ui|desktop|load|worktrees|lsp]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
for p in ripgrep universal-ctags python3; do
  dpkg -s "$p" >/dev/null 2>&1 || { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$p" >/dev/null; }
done
npm --prefix ui run --silent build
cargo build --release --locked -p skald-cli -p skald-bench -p skald-desktop -p tauri-hello -p skald-sandbox
target="${CARGO_TARGET_DIR:-target}/release"
# The load test drives real processes (skald serve, skald cron run, skald exec), so it is a
# test of skald-cli; its release run reports the figures the benchmark files.
load=()
if [[ "$*" != *--only* || "$*" == *"--only load"* ]]; then
  report=$(mktemp)
  SKALD_LOAD_REPORT="$report" cargo test --release --locked -p skald-cli --test it \
    serve::twenty_chats_a_cron_job_and_a_background_task_run_at_once -- --nocapture
  load=(--load-report "$report")
fi
"$target/skald-bench" --skald "$target/skald" --out docs/performance.md "${load[@]}" "$@"
