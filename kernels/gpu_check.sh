#!/usr/bin/env bash
# Everything that needs a GPU, as one command: the CUDA tests, then the benchmarks, into one
# results file. Each phase has its own time limit so one slow part cannot eat a short GPU
# session.
#   kernels/gpu_check.sh --bundle DIR [results-file]   run what kernels/gpu_bundle.sh built
#                                                      here (no compiling on the GPU machine)
#   kernels/gpu_check.sh [build-dir] [results-file]    configure and build for the present
#                                                      GPU first (needs the Debian libraries)
# Default results file: gpu-check-results.txt in the repo root. Exit status: the tests'.
# KVSCOPE_GPU_PHASES (default "tests stories attention models") picks phases, so a session can
# split them over two runs of the device's 10-minute limit.
# Benchmarks (stories260K when the bundle or ../shared has it; random weights of real shapes,
# written once to the synthetic cache):
#   decode/prompt, CUDA graphs on and off    stories260K f16 KV, int8 KV
#   >= 1 GB models at the bandwidth roofline llama-3-8b q4_0 (4.3 GB), tinyllama-1.1b f16 (2.2 GB),
#                                            llama-3-8b q4_K (4.9 GB); q4_0 again with f32
#                                            activations (KVSCOPE_Q8_ACTIVATIONS=0)
#   paged attention 1k..64k, f16/int8/int4    both attention kernels
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bundle=""
if [[ "${1:-}" == --bundle ]]; then
  bundle="$(cd "${2:?--bundle needs a folder}" && pwd)"
  shift 2
  results="${1:-$repo/gpu-check-results.txt}"
else
  build="${1:-$repo/build-gpu}"
  results="${2:-$repo/gpu-check-results.txt}"
fi
jobs="${KVSCOPE_JOBS:-$(nproc)}"
mkdir -p "$(dirname "$results")"

log() { echo "$@" | tee -a "$results"; }
{
  echo "# KVScope GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader 2>&1
  nvcc --version 2>&1 | tail -1
  grep PRETTY_NAME /etc/os-release 2>/dev/null
} | tee "$results"

cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
if [[ -z "$cap" ]]; then
  log "no GPU found by nvidia-smi: nothing to check"
  exit 2
fi

start=$SECONDS
if [[ -n $bundle ]]; then
  # the machine's own cuBLAS (the toolkit's, else the one PyTorch's wheels carry)
  cublas=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu \
    /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib \
    /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib; do
    if [[ -e $d/libcublas.so.13 ]]; then cublas=$d; break; fi
  done
  if [[ -z $cublas ]]; then
    cublas="$(dirname "$(find / -xdev -name 'libcublas.so.13' -print -quit 2>/dev/null)")"
  fi
  export LD_LIBRARY_PATH="$bundle/lib:$cublas:${LD_LIBRARY_PATH:-}"
  export KVSCOPE_SHARED_DIR="$bundle/shared" KVSCOPE_PRESETS_DIR="$bundle/share/kvscope/presets"
  export KVSCOPE_BINARY_DIR="${TMPDIR:-/tmp}/kvscope-gpu-check"
  mkdir -p "$KVSCOPE_BINARY_DIR"
  bin="$bundle/bin"
  log "## prebuilt bundle $bundle (built from $(head -1 "$bundle/COMMIT" 2>/dev/null)), cuBLAS from ${cublas:-nowhere}"
  if ! "$bin/kvscope-cli" devices 2>&1 | tee -a "$results"; then
    log "the bundle's binaries do not start here:"
    ldd "$bin/kvscope-cli" 2>&1 | tee -a "$results"
    exit 5
  fi
else
  cmake -S "$repo" -B "$build" -G Ninja -DKVSCOPE_GUI=OFF -DKVSCOPE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$cap" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
    { log "configure failed:"; tail -30 "$build.configure.log" | tee -a "$results"; exit 3; }
  cmake --build "$build" -j"$jobs" --target kvscope_kernels_tests kvscope-cli >"$build.build.log" 2>&1 ||
    { log "build failed:"; grep -E "error" "$build.build.log" | head -40 | tee -a "$results"; exit 4; }
  log "## built for sm_$cap in $((SECONDS - start)) s"
  bin="$build/bin"
  export KVSCOPE_SHARED_DIR="${KVSCOPE_SHARED_DIR:-$repo/../shared}"
fi

phases=" ${KVSCOPE_GPU_PHASES:-tests stories attention models} "
has() { [[ $phases == *" $1 "* ]]; }
status=0
# One process per test suite: a kernel that faults leaves its CUDA context unusable, which
# would fail every later test of the same process; this way one bad kernel costs one suite.
# Kernel-level suites run first, whole-model ones last.
run_suite() {  # suite ("Name." as --gtest_list_tests prints it)
  local out rc
  out="$(timeout 150 "$bin/kvscope_kernels_tests" --gtest_brief=1 --gtest_filter="$1*" 2>&1)"
  rc=$?
  log "$(printf '%-40s rc=%-3s %s' "$1" "$rc" "$(echo "$out" | grep -E '^\[  (PASSED|SKIPPED|FAILED) ' |
    tr '\n' ' ')")"
  if [[ $rc != 0 ]]; then
    echo "$out" | grep -v '^Running main' | tail -40 | tee -a "$results"
    status=1
  fi
}
if has tests; then
  log "## kvscope_kernels_tests, one process per suite"
  suites="$("$bin/kvscope_kernels_tests" --gtest_list_tests | awk '/^[^ ]/ && !/^Running/ {print $1}')"
  model_level='^(CudaBackend|CudaGraphs|CudaKvQuantError|Presets/|WeightTypes/CudaRandomModel)'
  for suite in $(grep -Ev "$model_level" <<<"$suites") $(grep -E "$model_level" <<<"$suites"); do
    if ((SECONDS - start > ${KVSCOPE_TEST_TIMEOUT:-400})); then
      log "$suite and later suites not run: the tests' ${KVSCOPE_TEST_TIMEOUT:-400} s are spent"
      status=1
      break
    fi
    run_suite "$suite"
  done
  log "## tests exit status $status ($((SECONDS - start)) s so far)"
fi

cli="$bin/kvscope-cli"
bench() {  # label, limit in seconds, then the command's arguments
  local label=$1 limit=$2
  shift 2
  log "## $label: kvscope-cli $*"
  timeout "$limit" "$cli" "$@" 2>&1 | grep -v '^writing\|^wrote' | tee -a "$results"
}
stories="$KVSCOPE_SHARED_DIR/models/stories260K.gguf"
if has stories && [[ -f $stories ]]; then
  bench "stories cuda f16 KV" 60 bench -m "$stories" --backend cuda -p 128 -n 256 -r 5
  KVSCOPE_CUDA_GRAPHS=0 bench "stories cuda f16 KV, graphs off" 60 bench -m "$stories" \
    --backend cuda -p 128 -n 256 -r 5
  bench "stories cuda int8 KV" 60 bench -m "$stories" --backend cuda -ctk int8 -ctv int8 \
    -p 128 -n 256 -r 5
fi
if has models; then
  bench "llama-3-8b q4_0" 240 bench --synthetic llama-3-8b --weights q4_0 --backend cuda \
    -p 512 -n 128 -r 3 --json
  bench "tinyllama-1.1b f16" 180 bench --synthetic tinyllama-1.1b --weights f16 \
    --backend cuda -p 512 -n 128 -r 3 --json
  bench "llama-3-8b q4_K" 240 bench --synthetic llama-3-8b --weights q4_K --backend cuda \
    -p 512 -n 128 -r 3 --json
  # the same q4_0 decode with f32 activations: what the 8-bit activation codes gain
  KVSCOPE_Q8_ACTIVATIONS=0 bench "llama-3-8b q4_0, f32 activations" 120 bench \
    --synthetic llama-3-8b --weights q4_0 --backend cuda -p 32 -n 128 -r 3 --json
fi
if has attention; then
  bench "paged attention (Llama-3-8B layer), both kernels" 240 bench-attention --backend cuda --json
fi
log "## done in $((SECONDS - start)) s"
exit "$status"
