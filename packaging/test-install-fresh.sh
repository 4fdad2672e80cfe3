#!/usr/bin/env bash
# Installs a .deb with apt-get on a fresh Debian 12 and starts it there: a minimal bookworm
# made by debootstrap in a temporary folder (root and network needed; ~200 MB, a few minutes),
# then `apt-get install ./kvscope_*.deb` (which must pull every dependency from Debian's
# archive), kvscope-cli devices and plan, and kvscope's scripted chat under Xvfb with
# stories260K. Nothing of CUDA is in that system: the CPU backend must run.
# For a release, beside test-package.sh (CI runs that one: no network, no root needed).
#
#   sudo packaging/test-install-fresh.sh PACKAGE.deb [MIRROR]
set -euo pipefail
deb=$(realpath "${1:?usage: test-install-fresh.sh PACKAGE.deb [MIRROR]}")
mirror=${2:-http://deb.debian.org/debian}
cd "$(dirname "$0")/.."
model=${KVSCOPE_SHARED_DIR:-$(cd .. && pwd)/shared}/models/stories260K.gguf
[[ $(id -u) -eq 0 ]] || { echo "test-install-fresh: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "test-install-fresh: no debootstrap" >&2; exit 1; }
[[ -f $model ]] || { echo "test-install-fresh: no $model" >&2; exit 1; }

root=$(mktemp -d /tmp/kvscope-fresh.XXXXXX)
trap 'rm -rf --one-file-system "$root"' EXIT
echo "--- debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/pkg"
cp "$deb" "$model" "$root/pkg/"

# In the fresh system; /proc is mounted in a private mount namespace (the binaries find
# share/kvscope through /proc/self/exe), so nothing stays mounted when it ends.
cat >"$root/pkg/run.sh" <<'EOF'
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive HOME=/tmp/home XDG_RUNTIME_DIR=/tmp/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
apt=(apt-get -o APT::Sandbox::User=root)  # the chroot's _apt cannot read /pkg
"${apt[@]}" update -qq
"${apt[@]}" install -y -q /pkg/kvscope_*.deb >/tmp/install.log 2>&1 || { tail -30 /tmp/install.log; exit 1; }
echo "ok: apt-get install: $(grep -o '[0-9]* newly installed' /tmp/install.log)"
[[ ! -e /usr/local/cuda ]] && echo "ok: no CUDA on this system"
kvscope-cli devices
kvscope-cli plan --model llama-7b --gpu rtx-4090 | head -1
"${apt[@]}" install -y -qq --no-install-recommends xvfb xauth >/dev/null 2>&1
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" \
  kvscope --screenshot-dir /tmp/shots /pkg/stories260K.gguf | grep -v '^saved '
echo "ok: kvscope saved $(ls /tmp/shots | wc -l) screenshots"
[[ -s /tmp/shots/kvscope-after.png && -s $HOME/.local/share/KVScope/KVScope/chats.sqlite ]]
[[ -f /usr/share/mime/application/x-gguf.xml ]] && echo "ok: application/x-gguf registered"
EOF
echo "--- in the fresh system"
# shellcheck disable=SC2016  # $1 is the inner shell's: the root folder
unshare -m --propagation private sh -c 'mount -t proc proc "$1/proc" && chroot "$1" bash /pkg/run.sh' \
  sh "$root"
echo "test-install-fresh: $(basename "$deb") installs and runs on a fresh Debian 12"
