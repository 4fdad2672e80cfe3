#!/usr/bin/env bash
# Checks a built .deb as a user's machine would meet it: unpacks it into an empty folder
# (dpkg-deb -x; nothing is installed on this machine), then
#   - control: name, version = the metainfo's newest release, Depends from dpkg-shlibdeps plus
#     the run-time plugins, nothing from CUDA; apt resolves every dependency from Debian's
#     archive as for a machine with nothing installed (when apt has package lists);
#   - files: stripped binaries that need no CUDA library and nothing outside Debian's
#     packages, presets and catalog in share/kvscope, icons at their sizes, the GGUF MIME
#     type (a file starting with "GGUF" is application/x-gguf, another one is not);
#   - desktop-file-validate and appstreamcli validate-tree --no-net on the installed files
#     (offline: the screenshot URLs are where a release publishes them, not fetched);
#   - runs the installed kvscope-cli (devices; plan and pull --list, which read the presets and
#     the catalog from ../share/kvscope beside the binary) and the installed kvscope under Xvfb
#     (a scripted chat with stories260K, saving the screenshots the metainfo names; the
#     window's icon is read from the X server).
# packaging/test-install-fresh.sh installs a .deb with apt-get on a fresh Debian 12 instead.
#
#   packaging/test-package.sh PACKAGE.deb
# `A && ok ... || fail ...` is an if-then-else here: ok only prints, so it cannot fail.
# shellcheck disable=SC2015
set -euo pipefail
deb=$(realpath "${1:?usage: test-package.sh PACKAGE.deb}")
cd "$(dirname "$0")/.."
shared=${KVSCOPE_SHARED_DIR:-$(cd .. && pwd)/shared}
model=$shared/models/stories260K.gguf

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
section() { echo "--- $*"; }

section "control"
dpkg-deb -f "$deb"
field() { dpkg-deb -f "$deb" "$1"; }
depends=$(field Depends)
version=$(field Version)
release=$(grep -o '<release version="[^"]*"' packaging/io.github.kvscope.KVScope.metainfo.xml |
  head -1 | cut -d'"' -f2)
[[ $(field Package) == kvscope ]] && ok "package kvscope" || fail "package name $(field Package)"
[[ $version == "$release" ]] && ok "version $version = the metainfo's newest release" ||
  fail "version $version, but the metainfo's newest release is $release"
for d in libqt6core6 libqt6widgets6 libc6 libqt6sql6-sqlite fonts-dejavu-core; do
  grep -qE "(^|, )$d( |,|$)" <<<"$depends" && ok "depends on $d" || fail "Depends lacks $d"
done
long=$(field Description | awk 'length > 80' | head -1)
[[ -z $long ]] && ok "Description lines fit 80 columns" || fail "Description line over 80: $long"
grep -qiE 'cuda|cublas|nvidia' <<<"$depends" && fail "Depends names CUDA: $depends" ||
  ok "no CUDA package in Depends"

section "files"
root=$tmp/root
dpkg-deb -x "$deb" "$root"
bins=("$root/usr/bin/kvscope" "$root/usr/bin/kvscope-cli")
for f in "${bins[@]}"; do
  [[ -x $f ]] || { fail "no $f"; continue; }
  desc=$(file -b "$f")
  [[ $desc == *", stripped"* ]] && ok "$(basename "$f") stripped ($(du -h "$f" | cut -f1))" ||
    fail "$(basename "$f") not stripped: $desc"
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  grep -qE 'libcu(da|dart|blas)' <<<"$needed" && fail "$(basename "$f") links CUDA: $needed" ||
    ok "$(basename "$f") needs no CUDA library at start"
  # Every library resolves, and to Debian's folders (what dpkg-shlibdeps maps to packages).
  bad=$(ldd "$f" | grep -E 'not found|/usr/local/|/work/|/build' || true)
  [[ -z $bad ]] && ok "$(basename "$f"): every library from Debian's folders" ||
    fail "$(basename "$f") libraries: $bad"
done
for p in share/kvscope/presets/gpus.json share/kvscope/presets/models.json \
  share/kvscope/catalog/models.json share/applications/kvscope.desktop \
  share/metainfo/io.github.kvscope.KVScope.metainfo.xml share/mime/packages/kvscope.xml \
  share/icons/hicolor/scalable/apps/kvscope.svg; do
  [[ -f $root/usr/$p ]] && ok "/usr/$p" || fail "no /usr/$p in the package"
done
for n in 16 22 24 32 48 64 128 256; do
  png=$root/usr/share/icons/hicolor/${n}x$n/apps/kvscope.png
  file -b "$png" 2>/dev/null | grep -q "PNG image data, $n x $n, 8-bit/color RGBA" &&
    ok "icon ${n}x$n" || fail "icon ${n}x$n: $(file -b "$png" 2>&1)"
done
stray=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep -vE '^\./(usr/((bin|share)(/.*)?)?)?$' || true)
[[ -z $stray ]] && ok "only /usr/bin and /usr/share" || fail "files elsewhere: $stray"

section "MIME type"
mkdir -p "$tmp/xdg/mime/packages"
cp "$root/usr/share/mime/packages/kvscope.xml" "$tmp/xdg/mime/packages/"
update-mime-database "$tmp/xdg/mime" 2>/dev/null
printf 'GGUF\003\000\000\000' >"$tmp/model.bin"  # the magic, under a name without .gguf
printf 'GGML\003\000\000\000' >"$tmp/other.bin"
printf 'not a model' >"$tmp/named.gguf"          # the glob alone
mime() { XDG_DATA_DIRS=$tmp/xdg:/usr/share gio info -a standard::content-type "$1" | sed -n 's/.*content-type: //p'; }
[[ $(mime "$tmp/model.bin") == application/x-gguf ]] && ok "GGUF magic: application/x-gguf" ||
  fail "a file starting with GGUF is $(mime "$tmp/model.bin")"
[[ $(mime "$tmp/named.gguf") == application/x-gguf ]] && ok "*.gguf: application/x-gguf" ||
  fail "*.gguf is $(mime "$tmp/named.gguf")"
[[ $(mime "$tmp/other.bin") != application/x-gguf ]] && ok "other files are not GGUF" ||
  fail "a GGML file is application/x-gguf"

section "desktop file and metainfo"
desktop=$root/usr/share/applications/kvscope.desktop
metainfo=$root/usr/share/metainfo/io.github.kvscope.KVScope.metainfo.xml
out=$(desktop-file-validate "$desktop" 2>&1) && [[ -z $out ]] && ok "desktop-file-validate: clean" ||
  fail "desktop-file-validate: $out"
mimes=$(sed -n 's/^MimeType=//p' "$desktop")
grep -qE 'application/octet-stream|\*' <<<"$mimes" && fail "catch-all MimeType=$mimes" ||
  ok "MimeType=$mimes"
for m in ${mimes//;/ }; do
  grep -q "type=\"$m\"" "$root/usr/share/mime/packages/kvscope.xml" /usr/share/mime/packages/*.xml ||
    fail "MimeType $m is defined nowhere"
done
grep -q '^Icon=kvscope$' "$desktop" && ok "Icon=kvscope" || fail "desktop file has no Icon=kvscope"
# validate-tree: the metainfo, and its launchable against the installed desktop file.
if out=$(appstreamcli validate-tree --no-net "$root" 2>&1); then
  ok "appstreamcli validate-tree --no-net: $(tail -1 <<<"$out")"
else
  fail "appstreamcli validate-tree: $out"
fi
shots=$(grep -o 'https://[^<]*\.png' "$metainfo" | xargs -n1 basename)

section "kvscope-cli, installed"
export XDG_CONFIG_HOME=$tmp/home/config XDG_CACHE_HOME=$tmp/home/cache
export XDG_DATA_HOME=$tmp/home/data XDG_RUNTIME_DIR=$tmp/home/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset KVSCOPE_PRESETS_DIR KVSCOPE_CATALOG
cli=$root/usr/bin/kvscope-cli
out=$("$cli" devices 2>&1) && grep -q '^cpu: available' <<<"$out" && ok "devices: $(tr '\n' ' ' <<<"$out")" ||
  fail "kvscope-cli devices: $out"
out=$("$cli" plan --model llama-7b --gpu rtx-4090 2>&1) && grep -q 'GeForce RTX 4090' <<<"$out" &&
  ok "plan reads the installed presets: $(head -1 <<<"$out")" || fail "kvscope-cli plan: $out"
out=$("$cli" pull --list 2>&1) && grep -q smollm2 <<<"$out" &&
  ok "pull --list reads the installed catalog ($(wc -l <<<"$out") entries)" ||
  fail "kvscope-cli pull --list: $out"

section "kvscope, installed, under Xvfb"
if [[ ! -f $model ]]; then
  fail "no $model (KVSCOPE_SHARED_DIR) for the GUI run"
else
  # Inside the X server: the app, and meanwhile its window's icon (_NET_WM_ICON: width and
  # height of the first image) into icon.txt.
  cat >"$tmp/gui.sh" <<'GUI'
"$@" & app=$!
for _ in $(seq 300); do
  id=$(xwininfo -root -tree 2>/dev/null | awk '/\("kvscope" "KVScope"\)/ {print $1; exit}')
  if [[ -n $id ]]; then
    xprop -id "$id" -notype -f _NET_WM_ICON 32c ' $0x$1' _NET_WM_ICON >"$(dirname "$0")/icon.txt"
    break
  fi
  sleep 0.05
done
wait $app
GUI
  start=$SECONDS
  # xcb, the platform plugin a desktop uses (test.sh exports offscreen for the unit tests).
  if out=$(QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" bash "$tmp/gui.sh" \
    "$root/usr/bin/kvscope" --palette light --screenshot-dir "$tmp/shots" "$model" 2>&1); then
    ok "kvscope --screenshot-dir: $(grep -c '^saved ' <<<"$out") screenshots in $((SECONDS - start)) s"
  else
    fail "kvscope --screenshot-dir: $(tail -20 <<<"$out")"
  fi
  icon=$(cat "$tmp/icon.txt" 2>/dev/null || echo "no window seen")
  [[ $icon == "_NET_WM_ICON 256x256" ]] && ok "window icon 256x256" || fail "window icon: $icon"
  for s in $shots; do
    [[ -s $tmp/shots/$s ]] && ok "the metainfo's screenshot $s is one the app saves" ||
      fail "the metainfo names $s; the app saved: $(cd "$tmp/shots" 2>/dev/null && echo *.png)"
  done
  [[ -s $XDG_DATA_HOME/KVScope/KVScope/chats.sqlite ]] && ok "chats saved in \$XDG_DATA_HOME" ||
    fail "no chat database under $XDG_DATA_HOME (SQLite driver?)"
fi

section "apt"
if [[ -n $(find /var/lib/apt/lists -name '*Packages*' -print -quit 2>/dev/null) ]]; then
  # As on a machine with nothing installed: an empty dpkg status file.
  : >"$tmp/status"
  if out=$(apt-get install --simulate -o Dir::State::status="$tmp/status" "$deb" 2>&1) &&
    grep -q '^Inst kvscope ' <<<"$out"; then
    ok "apt-get install --simulate on an empty system: kvscope and $(($(grep -c '^Inst ' <<<"$out") - 1)) packages it needs"
  else
    fail "apt-get install --simulate (empty system): $(grep -E '^E:|Depends|unmet' <<<"$out" | head)"
  fi
  out=$(apt-get install --simulate "$deb" 2>&1) && grep -q '^Inst kvscope ' <<<"$out" &&
    ok "apt-get install --simulate here: $(grep '^Inst ' <<<"$out" | cut -d' ' -f2 | tr '\n' ' ')" ||
    fail "apt-get install --simulate: $(grep -E '^E:' <<<"$out")"
else
  echo "skip: apt has no package lists (apt-get update) to resolve against"
fi

if ((fails > 0)); then
  echo "test-package: $fails check(s) failed for $(basename "$deb")" >&2
  exit 1
fi
echo "test-package: $(basename "$deb") ($(du -h "$deb" | cut -f1)) passed"
