#!/usr/bin/env bash
# Renders resources/icons/kvscope.svg into the hicolor PNG sizes that are committed beside it
# (resources/icons/hicolor/NxN/apps/kvscope.png). Run it after editing the SVG; needs
# rsvg-convert (librsvg2-bin, in install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
svg=resources/icons/kvscope.svg
for n in 16 22 24 32 48 64 128 256; do
  out=resources/icons/hicolor/${n}x${n}/apps/kvscope.png
  mkdir -p "$(dirname "$out")"
  rsvg-convert --width "$n" --height "$n" --format png "$svg" --output "$out"
done
echo "render: $(find resources/icons/hicolor -name kvscope.png | wc -l) PNGs from $svg"
