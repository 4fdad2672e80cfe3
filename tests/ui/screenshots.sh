#!/usr/bin/env bash
# Screenshots of the real app under Xvfb at 1280x800: for the demo model and for
# stories260K (when ../shared has it), in the light and the dark palette, each saved
# mid-generation and after it. The app's --screenshot-dir mode runs a scripted two-chat
# session (then regenerates a reply and visits the Models, What fits, Remote and demo pages),
# saves the PNGs and fails unless every chart of the live panel has points. The demo model
# is also shot in Simplified Chinese (zh-*), as a zh_CN desktop starts the app.
#
#   tests/ui/screenshots.sh BUILD_DIR      PNGs go to BUILD_DIR/screenshots/
set -euo pipefail

build=${1:?usage: screenshots.sh BUILD_DIR}
app="$build/bin/kvscope"
out="$build/screenshots"
shared=${KVSCOPE_SHARED_DIR:-$(dirname "$0")/../../../shared}
[[ -x $app ]] || { echo "no $app: build the kvscope target first" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "xvfb-run not found" >&2; exit 1; }
mkdir -p "$out"

# Settings, recent models and the demo model's cache stay inside the build folder.
home=$(mktemp -d "$build/screenshots-home.XXXXXX")
trap 'rm -rf "$home"' EXIT
export XDG_CONFIG_HOME="$home/config" XDG_CACHE_HOME="$home/cache" XDG_RUNTIME_DIR="$home/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# The Models page looks in a fake home, not this machine's: the shared models as LM Studio
# and llama.cpp keep GGUF files, and a truncated copy (listed greyed with its error).
export HOME="$(realpath "$home")/home"
for m in stories260K.gguf SmolLM2-135M-Instruct.Q4_1.gguf; do
  [[ -f $shared/models/$m ]] || continue
  mkdir -p "$HOME/.lmstudio/models/shared/models"
  ln -sf "$(realpath "$shared/models/$m")" "$HOME/.lmstudio/models/shared/models/$m"
done
if [[ -f $shared/models/stories260K.gguf ]]; then
  mkdir -p "$HOME/.cache/llama.cpp" "$HOME/.cache/kvscope/models"
  ln -sf "$(realpath "$shared/models/stories260K.gguf")" "$HOME/.cache/llama.cpp/stories.gguf"
  head -c 500000 "$shared/models/stories260K.gguf" >"$HOME/.cache/kvscope/models/truncated.gguf"
fi

shoot() {  # name palette [model]
  local name=$1 palette=$2
  shift 2
  xvfb-run -a -s "-screen 0 1280x800x24" \
    "$app" --palette "$palette" --screenshot-dir "$out" --screenshot-prefix "$name" "$@"
}

shoot demo-light light
shoot demo-dark dark
LANG=zh_CN.UTF-8 LC_ALL=zh_CN.UTF-8 shoot zh-demo-light light
LANG=zh_CN.UTF-8 LC_ALL=zh_CN.UTF-8 shoot zh-demo-dark dark
model="$shared/models/stories260K.gguf"
if [[ -f $model ]]; then
  shoot stories-light light "$model"
  shoot stories-dark dark "$model"
else
  echo "skipping stories260K screenshots: no $model"
fi
# The Remote page, from its test: the vLLM fixture dumps (remote-fixtures.png) and
# kvscope-cli serve under load (remote-live.png, when the shared model is there).
remote_test="$build/bin/kvscope_ui_remote_page_test"
if [[ -x $remote_test ]]; then
  KVSCOPE_SCREENSHOT_DIR="$out" KVSCOPE_BINARY_DIR="$build" KVSCOPE_SHARED_DIR="$shared" \
    xvfb-run -a -s "-screen 0 1280x800x24" "$remote_test" \
    rendersVllmDumpsWithThePlannersLine followsKvscopeServeUnderLoad
fi
ls -1 "$out"/*.png
