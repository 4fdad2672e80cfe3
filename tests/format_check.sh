#!/usr/bin/env bash
# Fails when a tracked C++/CUDA source is not formatted with the repo's .clang-format,
# listing the files (fix with: clang-format -i FILE).
set -u
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | while read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"
done)
if [ -n "$bad" ]; then
  echo "not formatted with .clang-format:"
  echo "$bad"
  exit 1
fi
echo "all sources formatted"
