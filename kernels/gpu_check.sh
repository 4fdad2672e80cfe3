#!/usr/bin/env bash
# Everything that needs a GPU, as one command: configure for the present GPU's architecture,
# build the CUDA tests, run them, then the benchmarks (stories260K on CUDA and CPU when
# ../shared has it; random-weight Llama-3-8B shapes in q4_0 and f16, written to the cache
# on first use), and write a results file.
#   kernels/gpu_check.sh [build-dir] [results-file]
# Defaults: build-gpu/ and gpu-check-results.txt in the repo root. Exit status: the tests'.
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build-gpu}"
results="${2:-$repo/gpu-check-results.txt}"
jobs="${KVSCOPE_JOBS:-$(nproc)}"

{
  echo "# KVScope GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader 2>&1
  nvcc --version 2>&1 | tail -1
} | tee "$results"

cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
if [[ -z "$cap" ]]; then
  echo "no GPU found by nvidia-smi: nothing to check" | tee -a "$results"
  exit 2
fi

cmake -S "$repo" -B "$build" -G Ninja -DKVSCOPE_GUI=OFF -DKVSCOPE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$cap" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
  { echo "configure failed (see $build.configure.log)" | tee -a "$results"; exit 3; }
cmake --build "$build" -j"$jobs" --target kvscope_kernels_tests kvscope-cli >"$build.build.log" 2>&1 ||
  { echo "build failed:" | tee -a "$results"; grep -E "error" "$build.build.log" | head -40 | tee -a "$results"; exit 4; }

echo "## kvscope_kernels_tests (arch sm_$cap)" | tee -a "$results"
"$build/bin/kvscope_kernels_tests" --gtest_brief=1 2>&1 | tee -a "$results"
status=${PIPESTATUS[0]}
echo "## exit status $status" | tee -a "$results"

cli="$build/bin/kvscope-cli"
bench() {  # label, then bench arguments
  local label=$1
  shift
  echo "## bench $label: $*" | tee -a "$results"
  timeout 900 "$cli" bench "$@" 2>&1 | tee -a "$results"
}
shared="${KVSCOPE_SHARED_DIR:-$repo/../shared}"
if [[ -f $shared/models/stories260K.gguf ]]; then
  bench stories-cuda -m "$shared/models/stories260K.gguf" --backend cuda -p 128 -n 128 -r 5
  bench stories-cuda-int8 -m "$shared/models/stories260K.gguf" --backend cuda -ctk int8 -ctv int8 \
    -p 128 -n 128 -r 5
fi
for weights in ${KVSCOPE_BENCH_WEIGHTS:-q4_0 f16}; do
  bench "llama-3-8b-$weights" --synthetic llama-3-8b --weights "$weights" --backend cuda \
    -p 512 -n 128 -r 3 --json
done
echo "## bench-attention cuda (Llama-3-8B layer, 1k..64k, f16/int8/int4)" | tee -a "$results"
timeout 600 "$cli" bench-attention --backend cuda --json 2>&1 | tee -a "$results"
exit "$status"
