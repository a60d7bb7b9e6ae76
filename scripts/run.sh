#!/usr/bin/env bash
# Sets up what is missing, builds Skald and runs it. Arguments go to `skald`; with none,
# it checks the installation and shows what it can do.
#   bash scripts/run.sh                       # skald doctor, then skald --help
#   bash scripts/run.sh tools                 # any skald command
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked -p skald-cli
skald="${CARGO_TARGET_DIR:-target}/release/skald"
if [[ $# -eq 0 ]]; then
  "$skald" doctor || true
  echo
  exec "$skald" --help
fi
exec "$skald" "$@"
