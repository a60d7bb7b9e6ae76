#!/usr/bin/env bash
# Makes every icon size the desktop app and its packages need from the one source,
# icons/skald.svg (ImageMagick with its SVG reader). The results are committed, so a build
# does not need ImageMagick; run this after changing the source.
set -euo pipefail
cd "$(dirname "$0")/../icons"
# Debian's ImageMagick by its full path: a machine may have another `convert` first on PATH.
command -v /usr/bin/convert >/dev/null || { echo "icons.sh: needs ImageMagick (apt install imagemagick librsvg2-bin)" >&2; exit 1; }
render() { /usr/bin/convert -background none -density 384 skald.svg -resize "$1x$1" "PNG32:$2"; }
render 32 32x32.png
render 128 128x128.png
render 256 128x128@2x.png
render 512 icon.png
/usr/bin/convert 32x32.png 128x128.png 128x128@2x.png -colors 256 icon.ico
echo "icons: $(ls)"
