#!/usr/bin/env python3
"""Arrows between the workspace's crates point down (docs/architecture.md, "Layers").

Why: issue #48 found `skald-api` — the vocabulary every crate names, "no I/O" — depending
on `skald-sandbox` for one field, which pulled landlock, seccomp, nix and inotify into
everything that names a protocol type. Each crate has a layer here; a crate may depend
only on crates of lower layers (normal, build and target-specific dependencies; dev
dependencies are test code and may reach anywhere). A crate missing from the table fails
the check, so a new crate is placed on purpose. Exits 1 on an arrow up or sideways.

Usage: python3 scripts/crate_layers.py
"""
import json
import os
import subprocess
import sys

# Lower numbers are lower layers.
LAYERS = {
    # Leaves: plain data and helpers with no Skald crate below them.
    "skald-policy": 0,
    "skald-base": 0,
    "skald-outline": 0,
    "skald-secrets": 0,
    "skald-testkit": 0,
    "tauri-hello": 0,
    # The vocabulary, the OS sandbox and the model clients.
    "skald-api": 1,
    "skald-sandbox": 1,
    "skald-llm": 1,
    "skald-worktree": 1,
    "skald-web": 1,
    "skald-lsp": 1,
    # Parts the engine is made of.
    "skald-store": 2,
    "skald-checkpoint": 2,
    "skald-mcp": 2,
    "skald-tools": 2,
    "skald-viewer": 2,
    # The engine.
    "skald-core": 3,
    # What serves the engine to a browser or a window.
    "skald-service": 4,
    # Carriers: programs.
    "skald-cli": 5,
    "skald-desktop": 5,
    "skald-bench": 5,
}


def packages(root):
    """The workspace's packages and their dependencies, as cargo reads them."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)["packages"]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    members = packages(root)
    for package in members:
        name = package["name"]
        if name not in LAYERS:
            problems.append(f"{name}: not in scripts/crate_layers.py's LAYERS; give it a layer")
            continue
        # Normal and build dependencies (kind null or "build"); dev ones are test code.
        deps = sorted({d["name"] for d in package["dependencies"] if d["kind"] != "dev"})
        for dep in deps:
            if not (dep in LAYERS or dep.startswith("skald")):
                continue
            if dep not in LAYERS:
                problems.append(f"{name} -> {dep}: {dep} has no layer")
            elif LAYERS[dep] >= LAYERS[name]:
                problems.append(
                    f"{name} (layer {LAYERS[name]}) -> {dep} (layer {LAYERS[dep]}): an arrow that does not point down"
                )
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"every arrow between the {len(members)} crates points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
