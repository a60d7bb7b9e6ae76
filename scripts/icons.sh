#!/usr/bin/env bash
# Makes every icon size the desktop app and its packages need from the one source,
# icons/skald.svg (ImageMagick with its SVG reader). The results are committed, so a build
# does not need ImageMagick; run this after changing the source.
set -euo pipefail
cd "$(dirname "$0")/../icons"
# Debian's ImageMagick by its full path: a machine may have another `convert` first on PATH.
command -v /usr/bin/convert >/dev/null || { echo "icons.sh: needs ImageMagick (apt install imagemagick librsvg2-bin)" >&2; exit 1; }
command -v png2icns >/dev/null || { echo "icons.sh: needs png2icns (apt install icnsutils)" >&2; exit 1; }
# No timestamps in the files, so running it again changes nothing.
render() { /usr/bin/convert -background none -density 384 skald.svg -resize "$1x$1" -strip -define png:exclude-chunks=date,time "PNG32:$2"; }
render 32 32x32.png
render 128 128x128.png
render 256 128x128@2x.png
render 512 icon.png
/usr/bin/convert 32x32.png 128x128.png 128x128@2x.png -colors 256 icon.ico
# macOS: the .icns carries 16 to 512 pixels.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for size in 16 32 128 256 512; do render "$size" "$tmp/$size.png"; done
png2icns icon.icns "$tmp"/16.png "$tmp"/32.png "$tmp"/128.png "$tmp"/256.png "$tmp"/512.png >/dev/null
echo "icons: $(ls)"
