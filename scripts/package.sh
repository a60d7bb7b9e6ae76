#!/usr/bin/env bash
# Builds the desktop app's installable packages with the Tauri CLI: on Linux a .deb (and
# an .AppImage with --appimage, which downloads linuxdeploy from GitHub), on macOS a .dmg,
# on Windows an .msi. The binary is stripped of debug info before bundling (the release
# profile keeps line tables for benchmarks and backtraces; a package does not need them).
# The command sandbox's helper `skald-sandbox` ships beside the app's binary (Tauri's
# externalBin), where `skald_sandbox::find_helper` looks for it: without it every command
# would need approval (docs/sandbox.md).
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
# Tauri looks for an external binary as NAME-<host triple> and installs it as NAME. The
# setting is passed here, not kept in tauri.conf.json, because tauri-build would then demand
# the file in every debug build and test run, which do not need it.
cargo build --release --locked -p skald-sandbox --bin skald-sandbox
triple="$(rustc -vV | sed -n 's/^host: //p')"
mkdir -p src-tauri/binaries
cp "$target/release/skald-sandbox" "src-tauri/binaries/skald-sandbox-$triple"
if [[ "$(uname -s)" == "Linux" ]]; then strip --strip-debug "src-tauri/binaries/skald-sandbox-$triple"; fi
extra='{"bundle":{"externalBin":["binaries/skald-sandbox"]}}'
cd src-tauri
cargo tauri build --no-bundle --config "$extra"
if [[ "$(uname -s)" == "Linux" ]]; then strip --strip-debug "$target/release/skald-desktop"; fi
cargo tauri bundle --bundles "$bundles" --config "$extra"
ls -la "$target"/release/bundle/*/
