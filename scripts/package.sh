#!/usr/bin/env bash
# Builds the desktop app's installable packages with the Tauri CLI: on Linux a .deb (and
# an .AppImage with --appimage, which downloads linuxdeploy from GitHub), on macOS a .dmg,
# on Windows an .msi. The binary is stripped of debug info before bundling (the release
# profile keeps line tables for benchmarks and backtraces; a package does not need them).
#   bash scripts/package.sh [--appimage]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[[ -d "$HOME/.cargo/bin" ]] && export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo-tauri >/dev/null 2>&1 || cargo install tauri-cli --locked --version '^2'
target="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TARGET_DIR="$target"
case "$(uname -s)" in
  Linux) bundles=deb; [[ "${1:-}" == "--appimage" ]] && bundles="deb,appimage" ;;
  Darwin) bundles=dmg ;;
  *) bundles=msi ;;
esac
cd src-tauri
cargo tauri build --no-bundle
if [[ "$(uname -s)" == "Linux" ]]; then strip --strip-debug "$target/release/skald-desktop"; fi
cargo tauri bundle --bundles "$bundles"
ls -la "$target"/release/bundle/*/
