#!/usr/bin/env bash
# Makes the .deb and the .tar.gz (packaging/CPackConfig.cmake says what goes in).
#
#   packaging/package.sh                    a release: configures and builds the release preset
#                                           (Release, CUDA for sm_75..sm_120, no tests) in
#                                           build-release/, then packages it
#   packaging/package.sh BUILD_DIR [GENS]   packages a folder that is already built, without
#                                           building it again (CI: build/, the ci preset's
#                                           RelWithDebInfo tree); GENS: "DEB;TGZ" (default),
#                                           DEB or TGZ
#
# Either way the binaries are stripped (CPACK_STRIP_FILES) and the packages land in
# BUILD_DIR/packages/: kvscope_VERSION_amd64.deb, kvscope-VERSION-Linux.tar.gz.
# packaging/test-package.sh checks a .deb.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  build="build-release"
  cmake --preset release >/dev/null
  cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"
else
  build=$1
  # Nothing to compile in a built tree; this re-runs CMake when a CMakeLists (this folder's
  # CPackConfig.cmake included) is newer than the tree's CPackConfig.cmake.
  cmake --build "$build" >/dev/null
fi
generators=${2:-DEB;TGZ}
if [ ! -f "$build/CPackConfig.cmake" ]; then
  echo "package: $build has no CPackConfig.cmake: configure and build it first" >&2
  exit 1
fi
out=$build/packages
rm -rf "$out/_CPack_Packages" "$out"/kvscope[_-]*
cpack --config "$build/CPackConfig.cmake" -G "$generators" -B "$out" >"$out.log" 2>&1 || {
  cat "$out.log" >&2
  exit 1
}
rm -rf "$out/_CPack_Packages"  # the staged install, as large as the package unpacked
for f in "$out"/kvscope[_-]*; do echo "package: $f ($(du -h "$f" | cut -f1))"; done
