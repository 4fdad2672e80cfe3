#!/usr/bin/env bash
# Configures and builds KVScope with a CMake preset (default: "default"; "ci" under CI=true).
# Usage: packaging/build.sh [PRESET]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-}
if [ -z "$preset" ]; then
  if [ "${CI:-}" = "true" ]; then preset=ci; else preset=default; fi
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
