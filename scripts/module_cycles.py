#!/usr/bin/env python3
"""Import circles between the top-level modules of a crate (default: skald-core).

Why: issue #20 keeps skald-core in parts whose arrows point one way — engine/ (the shared
parts and the context a turn and a tool run in) below turn/, turn/ below tools/, tasks/
and session/ — so a part can be read, tested and changed without the rest. A module's
`crate::x` paths (and `use crate::{x, …}` groups) outside its test code are its arrows;
test code may reach anywhere. Exits 1 when there is a circle, printing it and every
module's arrows.

Usage: python3 scripts/module_cycles.py [crates/<name>/src]
"""
import os
import re
import sys


def code_of(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # A file's test module comes last by convention; its arrows are not the part's.
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    return re.sub(r"//.*", "", text)


def arrows(src):
    tops = {
        name[:-3] if name.endswith(".rs") else name
        for name in os.listdir(src)
        if name not in ("lib.rs", "main.rs") and (name.endswith(".rs") or os.path.isdir(os.path.join(src, name)))
    }
    edges = {t: set() for t in tops}
    for root, _dirs, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs") or name == "tests.rs" or name.endswith("_tests.rs"):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            top = rel.split(os.sep)[0]
            top = top[:-3] if top.endswith(".rs") else top
            if top not in tops:
                continue
            text = code_of(os.path.join(root, name))
            found = set(re.findall(r"crate::(\w+)", text))
            for group in re.findall(r"crate::\{([^;]*?)\};", text, re.S):
                found.update(re.findall(r"(?:^|,)\s*(\w+)", group))
            edges[top].update(m for m in found if m in tops and m != top)
    return edges


def circles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "crates", "skald-core", "src")
    edges = arrows(src)
    found = circles(edges)
    if found:
        for name in sorted(edges):
            print(f"{name} -> {' '.join(sorted(edges[name]))}")
        for comp in found:
            print("import circle:", " ".join(comp))
        return 1
    print(f"no import circle between the {len(edges)} modules of {os.path.normpath(src)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
