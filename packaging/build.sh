#!/usr/bin/env bash
# Configures and builds KVScope with a CMake preset (default: "default"; "ci" under CI=true),
# all targets or only the ones named.
# Usage: packaging/build.sh [PRESET [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$preset" ]; then
  if [ "${CI:-}" = "true" ]; then preset=ci; else preset=default; fi
fi
jobs=$(nproc 2>/dev/null || echo 2)
# The default preset's CUDA kernels: for the GPU present (one architecture instead of six:
# minutes less), or without one as PTX for the oldest architecture CUDA 13 supports (sm_75),
# which the driver of any newer GPU compiles once at load. The release preset, the .deb and
# ci keep their own lists.
extra=()
if [ "$preset" = default ]; then
  cap=""
  if command -v nvidia-smi >/dev/null 2>&1; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .' || true)
  fi
  if [[ "$cap" =~ ^[0-9]+$ ]]; then
    extra=(-DCMAKE_CUDA_ARCHITECTURES="$cap")
    echo "build: CUDA kernels for this machine's GPU (sm_$cap)"
  else
    extra=(-DCMAKE_CUDA_ARCHITECTURES=75-virtual)
    if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
      echo "build: no GPU found, so the CUDA kernels are built once, as PTX for sm_75, which" \
        "the driver of any newer GPU compiles at load (the release preset: SASS for six)"
    fi
  fi
fi
cmake --preset "$preset" "${extra[@]}" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build --preset "$preset" -j "$jobs" --target "$@"
else
  cmake --build --preset "$preset" -j "$jobs"
fi
