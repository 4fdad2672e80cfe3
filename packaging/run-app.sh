#!/usr/bin/env bash
# Quick start #1: installs the dependencies, builds, and opens KVScope.
# Usage: packaging/run-app.sh [MODEL]   (no MODEL: the built-in demo model)
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
bash packaging/build.sh
exec build/bin/kvscope "$@"
