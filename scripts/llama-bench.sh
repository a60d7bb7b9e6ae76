#!/usr/bin/env bash
# Builds llama.cpp's own `llama-bench` from the very llama.cpp sources Skald's binding
# (llama-cpp-sys-2) compiles, with the same flags (Release, GGML_NATIVE=OFF, OpenMP), so the
# local-model benchmark compares like with like. The binding's crate does not ship llama.cpp's
# tools, so llama-bench's own source comes from PyPI's llama-cpp-python sdist (it vendors
# llama.cpp whole), checked by SHA-256. Idempotent; prints the binary's path.
#   bash scripts/llama-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out="${SKALD_LLAMA_REF:-/var/tmp/skald-llama-ref}"
bin="$out/build/llama-bench"
if [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi
mkdir -p "$out"
sys=$(cargo metadata --format-version 1 --locked 2>/dev/null | python3 -c '
import json, sys
pkgs = json.load(sys.stdin)["packages"]
print([p["manifest_path"] for p in pkgs if p["name"] == "llama-cpp-sys-2"][0])')
llama="$(dirname "$sys")/llama.cpp"
[[ -f "$llama/CMakeLists.txt" ]] || { echo "llama-bench.sh: no llama.cpp sources at $llama (cargo fetch first)" >&2; exit 1; }
sdist_url=https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-0.3.36.tar.gz
sdist_sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist="$out/llama_cpp_python-0.3.36.tar.gz"
if ! echo "$sdist_sha  $sdist" | sha256sum --check --status 2>/dev/null; then
  curl -fsSL --retry 3 -o "$sdist.part" "$sdist_url"
  echo "$sdist_sha  $sdist.part" | sha256sum --check --status || { echo "llama-bench.sh: bad checksum" >&2; rm -f "$sdist.part"; exit 1; }
  mv "$sdist.part" "$sdist"
fi
rm -rf "$out/tools" && mkdir -p "$out/tools"
tar -xzf "$sdist" -C "$out/tools" --strip-components=5 --wildcards '*/vendor/llama.cpp/tools/llama-bench/*'
mkdir -p "$out/proj"
cat > "$out/proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.14)
project(skald_llama_bench C CXX)
set(LLAMA_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(LLAMA_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
set(LLAMA_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
set(LLAMA_BUILD_SERVER OFF CACHE BOOL "" FORCE)
set(LLAMA_BUILD_COMMON ON CACHE BOOL "" FORCE)
set(LLAMA_CURL OFF CACHE BOOL "" FORCE)
add_subdirectory("$llama" llama.cpp)
file(GLOB BENCH_SOURCES "$out/tools/*.cpp")
add_executable(llama-bench \${BENCH_SOURCES})
target_link_libraries(llama-bench PRIVATE llama-common llama ggml)
target_compile_features(llama-bench PRIVATE cxx_std_17)
CMAKE
cmake -S "$out/proj" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_OPENMP=ON >/dev/null
cmake --build "$out/build" --target llama-bench -j "$(nproc)" >/dev/null
echo "$bin"
