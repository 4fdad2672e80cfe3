#!/usr/bin/env bash
# Installs everything KVScope needs to build, test and run on Debian 12 (bookworm).
# Safe to run any number of times: apt-get skips what is already installed.
# The CUDA toolkit is not installed here: the CUDA backend is built only when nvcc is found.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang-format git
  # a rebuild after a git pull compiles only what changed, whatever the build folder
  ccache
  # GUI: Qt 6 Widgets, Charts, Test, and the X11 platform plugin
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-tools-dev qt6-tools-dev-tools
  qt6-qpa-plugins libqt6opengl6-dev libgl-dev libxkbcommon-dev
  # saved chats (Qt SQL's SQLite driver) and chart export as SVG (QSvgGenerator)
  libqt6sql6-sqlite qt6-svg-dev
  # engine libraries
  libsentencepiece-dev sentencepiece nlohmann-json3-dev libfmt-dev libpcre2-dev libicu-dev
  # HTTP: reading servers' /metrics (engine/remote), the local server (engine/serve)
  libcpp-httplib-dev
  # tests and benchmarks; clang + libclang-rt for the libFuzzer harnesses (fuzz preset)
  libgtest-dev libgmock-dev googletest libbenchmark-dev clang libclang-rt-14-dev
  # the CUDA emulation's threads are fibers (kernels/emulation)
  libboost-context-dev
  # packaging/get-model.sh: the first-run model comes from PyPI
  python3 python3-pip
  # model downloads over HTTPS (the Models page's Download tab, kvscope-cli pull; Qt Network)
  ca-certificates
  # tests/serve: requests with curl
  curl
  # headless screenshots
  xvfb xauth x11-utils imagemagick fonts-dejavu-core
  # packages (packaging/package.sh, test-package.sh): dpkg-shlibdeps, the validators, `file`
  # to see stripped binaries, gio + update-mime-database for the GGUF type, rsvg-convert
  # for the icon's PNGs (packaging/icons/render.sh), debootstrap for test-install-fresh.sh
  dpkg-dev desktop-file-utils appstream file libglib2.0-bin shared-mime-info librsvg2-bin
  debootstrap
  # the Chinese interface: CJK glyphs, and Qt's own translations (standard dialogs' buttons)
  fonts-noto-cjk qt6-translations-l10n
)

# tests/engine/text checks the tokenizer.json reader against the ids of the Hugging Face
# `tokenizers` library (those tests skip without it); tests/serve talks to `kvscope-cli serve`
# through OpenAI's own client, `openai`; tests/reference's fp64 forward pass reads GGUF files
# with the format's own Python reader, `gguf` (with numpy). Debian 12 has no package for
# tokenizers, openai or gguf.
install_python_packages() {
  python3 -c 'import tokenizers, openai, numpy, gguf' 2>/dev/null && return 0
  echo "install-deps: installing the Python packages tokenizers, openai, numpy and gguf (tests)"
  python3 -m pip install --quiet --break-system-packages 'tokenizers>=0.20' 'openai>=1.40' \
    'numpy>=1.24' 'gguf>=0.19'
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  install_python_packages
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_python_packages
