#!/usr/bin/env bash
# Builds, here, what a GPU machine runs, so the GPU session is one command and spends no
# device time compiling: the lent machine has nvcc, CMake and ninja but none of the project's
# Debian libraries (fmt, sentencepiece, PCRE2, GoogleTest) and nothing can be fetched there.
#   kernels/gpu_bundle.sh [arch] [bundle-dir]      (defaults: 90, the H200; gpu-bundle/)
# The bundle (git-ignored) holds:
#   bin/      kvscope_kernels_tests and kvscope-cli, Release, stripped, SASS for sm_<arch>
#   lib/      the shared libraries they need that a bare CUDA machine lacks (not libcublas:
#             gpu_check.sh finds the machine's own)
#   share/kvscope/presets   the catalogues (the CLI finds them beside bin/)
#   shared/   stories260K and llama.cpp's reference outputs, when ../shared has them
# Then, on the GPU machine (carry the bundle folder):
#   bash kernels/gpu_check.sh --bundle gpu-bundle $OUT/gpu-check-results.txt
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
arch="${1:-90}"
bundle="${2:-$repo/gpu-bundle}"
build="$repo/build-bundle-sm$arch"

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_GUI=OFF \
  -DKVSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
cmake --build "$build" -j"$(nproc)" --target kvscope_kernels_tests kvscope-cli

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/share/kvscope"
for exe in kvscope_kernels_tests kvscope-cli; do
  strip -o "$bundle/bin/$exe" "$build/bin/$exe"
done
cp -r "$repo/resources/presets" "$bundle/share/kvscope/presets"

# Every shared library the binaries load except the C runtime's and CUDA's own.
ldd "$bundle/bin/kvscope_kernels_tests" "$bundle/bin/kvscope-cli" | awk '/=> \// {print $3}' |
  sort -u | grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s)\.so|libcublas' |
  while read -r lib; do cp -L "$lib" "$bundle/lib/"; done

shared="${KVSCOPE_SHARED_DIR:-$repo/../shared}"
for f in models/stories260K.gguf reference/stories260K-greedy.json; do
  if [[ -f $shared/$f ]]; then
    mkdir -p "$bundle/shared/$(dirname "$f")"
    cp "$shared/$f" "$bundle/shared/$f"
  fi
done
# the commit the binaries were built from (the GPU machine's copy may carry no .git)
{
  git -C "$repo" rev-parse --short HEAD
  git -C "$repo" status --short | head -20
} >"$bundle/COMMIT" 2>/dev/null || true
du -sh "$bundle"
ls -la "$bundle/bin" "$bundle/lib"
