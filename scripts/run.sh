#!/usr/bin/env bash
# Sets up what is missing, builds Skald and its UI, and runs it. With no arguments it starts
# the desktop app (or, with no display, the UI for a browser: `skald serve`); arguments go
# to the `skald` command line instead.
#   bash scripts/run.sh                       # the desktop app
#   bash scripts/run.sh tools                 # any skald command
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
# The UI, which the desktop app embeds and `skald serve` serves.
npm --prefix ui run --silent build
export SKALD_UI_DIR="$PWD/ui/dist"
target="${CARGO_TARGET_DIR:-target}/release"
# A local model, so Skald answers with no key and no network: the recommended small one is
# downloaded once (98 MB) when the models folder is empty. SKALD_NO_LOCAL_MODEL=1 skips it.
local_model() {
  [[ -n "${SKALD_NO_LOCAL_MODEL:-}" ]] && return 0
  if ! "$target/skald" models list --json | grep -q '"installed":\[{'; then
    "$target/skald" models pull smollm2-135m \
      || echo "run.sh: no local model (the download failed); configure a provider in Settings" >&2
  fi
}
if [[ $# -eq 0 ]]; then
  if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
    # The app: a desktop window (it keeps running in the tray when closed).
    cargo build --release --locked -p skald-desktop -p skald-cli -p skald-sandbox
    local_model
    exec "$target/skald-desktop"
  fi
  # No display (a server, a container): the same UI in a browser instead.
  echo "run.sh: no display here; starting the UI for a browser (skald serve)" >&2
  cargo build --release --locked -p skald-cli -p skald-sandbox
  local_model
  "$target/skald" doctor || true
  echo
  exec "$target/skald" serve
fi
cargo build --release --locked -p skald-cli -p skald-sandbox
exec "$target/skald" "$@"
