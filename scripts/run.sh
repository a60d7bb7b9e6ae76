#!/usr/bin/env bash
# Sets up what is missing, builds Skald and its UI, and runs it. Arguments go to `skald`;
# with none, it checks the installation and starts the UI (`skald serve`).
#   bash scripts/run.sh                       # skald doctor, then skald serve
#   bash scripts/run.sh tools                 # any skald command
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked -p skald-cli
skald="${CARGO_TARGET_DIR:-target}/release/skald"
# The UI `skald serve` shows in the browser.
npm --prefix ui run --silent build
export SKALD_UI_DIR="$PWD/ui/dist"
if [[ $# -eq 0 ]]; then
  # The app: the UI on 127.0.0.1, opened with the URL printed below.
  "$skald" doctor || true
  echo
  exec "$skald" serve
fi
exec "$skald" "$@"
