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
# With a GPU present, the default preset builds the CUDA kernels for that GPU only (one
# architecture instead of six: minutes less); without one, for all the preset lists.
extra=()
if [ "$preset" = default ] && command -v nvidia-smi >/dev/null 2>&1; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  if [[ "$cap" =~ ^[0-9]+$ ]]; then extra=(-DCMAKE_CUDA_ARCHITECTURES="$cap"); fi
fi
cmake --preset "$preset" "${extra[@]}" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
