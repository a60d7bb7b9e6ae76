#!/usr/bin/env python3
"""Builds the small offline TeX bundle the tests and benchmarks compile with: the TeX
files a LaTeX article (amsmath, graphicx, \\input, figures) reads, taken from Debian's
texlive-latex-base, texlive-xetex and lmodern packages (their licences: the LaTeX Project
Public License and the GUST Font License; see /usr/share/doc/texlive-*/copyright), laid out
flat as tectonic's zip bundles are, with the SHA256SUM and format file tectonic expects.

Usage: tex-bundle.py FILE-LIST OUT.zip"""

import hashlib
import os
import sys
import zipfile

ROOTS = [
    "/usr/share/texlive/texmf-dist/tex",
    "/usr/share/texlive/texmf-dist/fonts",
    "/usr/share/texmf/tex",
    "/usr/share/texmf/fonts",
    "/usr/share/texlive/texmf-dist/bibtex",
    "/usr/share/texlive/texmf-dist/dvipdfmx",
    "/usr/share/texlive/texmf-dist/web2c",
    "/usr/share/texmf/web2c",
]
# Written by this script, not taken from the trees.
GENERATED = {"SHA256SUM", "tectonic-format-latex.tex"}


def main() -> int:
    names = [n for n in open(sys.argv[1]).read().split() if n not in GENERATED]
    out = sys.argv[2]
    found = {}
    for root in ROOTS:
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                found.setdefault(f, os.path.join(dirpath, f))
    missing = [n for n in names if n not in found]
    if missing:
        print("tex-bundle: not found in the TeX trees: " + ", ".join(missing), file=sys.stderr)
        print("tex-bundle: install texlive-latex-base texlive-xetex lmodern", file=sys.stderr)
        return 1
    digest = hashlib.sha256()
    contents = {}
    for n in sorted(names):
        data = open(found[n], "rb").read()
        contents[n] = data
        digest.update(n.encode() + b"\0" + data)
    contents["tectonic-format-latex.tex"] = b"\\input xelatex.ini\n"
    contents["SHA256SUM"] = (digest.hexdigest() + "\n").encode()
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n in sorted(contents):
            # A fixed time: the same inputs make the same zip.
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, contents[n])
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
