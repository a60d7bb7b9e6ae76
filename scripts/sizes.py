#!/usr/bin/env python3
"""The largest Rust source files and functions in the workspace.

Why: issue #20 holds the engine to files of about 600 lines and functions of about 120;
this prints where it stands so a refactor can show before and after. Test modules in
their own files (`tests.rs`, `*_tests.rs`, `tests/`) are listed apart, since the limit is
for the code people read to change behaviour.

Usage: python3 scripts/sizes.py [N]   (N rows of each table, default 12)
"""
import os
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def strip(line, state):
    """The line without string, char and comment contents; state carries block comments and
    multi-line strings across lines."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if state["block"]:
            if line.startswith("*/", i):
                state["block"] = False
                i += 2
            else:
                i += 1
            continue
        if state["raw"] is not None:
            end = '"' + "#" * state["raw"]
            j = line.find(end, i)
            if j < 0:
                return "".join(out)
            state["raw"] = None
            i = j + len(end)
            continue
        if state["str"]:
            if c == "\\":
                i += 2
            elif c == '"':
                state["str"] = False
                i += 1
            else:
                i += 1
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        m = re.match(r'b?r(#*)"', line[i:])
        if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
            state["raw"] = len(m.group(1))
            i += len(m.group(0))
            continue
        if c == '"':
            state["str"] = True
            i += 1
            continue
        if c == "'":
            m = re.match(r"'(\\.|[^\\'])'", line[i:]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", line[i:])
            if m:
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    state = {"block": False, "raw": None, "str": False}
    code = [strip(l, state) for l in lines]
    found = []
    for idx, line in enumerate(code):
        m = FN.match(line)
        if not m:
            continue
        depth = 0
        opened = False
        for j in range(idx, len(code)):
            seg = code[j]
            if not opened and ";" in seg and "{" not in seg:
                break  # a declaration without a body (trait method)
            for ch in seg:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth <= 0:
                found.append((j - idx + 1, m.group(1), idx + 1))
                break
    return found


def is_test(path):
    base = os.path.basename(path)
    return "/tests/" in path or base == "tests.rs" or base.endswith("_tests.rs")


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    roots = ["crates", "src-tauri/src"]
    files = []
    for root in roots:
        for dirpath, _, names in os.walk(root):
            if "/target" in dirpath:
                continue
            for name in names:
                if name.endswith(".rs"):
                    files.append(os.path.join(dirpath, name))
    sizes = []
    fns = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            count = f.read().count("\n")
        sizes.append((count, path))
        if not is_test(path):
            for length, name, line in functions(path):
                fns.append((length, f"{path}:{line} {name}"))
    src = sorted([s for s in sizes if not is_test(s[1])], reverse=True)
    print(f"largest source files (of {len(src)}, tests apart):")
    for count, path in src[:rows]:
        print(f"  {count:6} {path}")
    print(f"files over 600 lines: {sum(1 for c, _ in src if c > 600)}")
    print("largest functions:")
    for length, where in sorted(fns, reverse=True)[:rows]:
        print(f"  {length:6} {where}")
    print(f"functions over 120 lines: {sum(1 for l, _ in fns if l > 120)}")


if __name__ == "__main__":
    main()
