#!/usr/bin/env bash
# Runs every libFuzzer harness of the fuzz preset on its corpus.
#   tests/fuzz/run.sh [BUILD_DIR] [SECONDS_EACH | -runs=N]
# Seeds: make_seeds (small valid inputs of each kind) and the real models in
# $KVSCOPE_SHARED_DIR/models (else ../shared/models). The corpora grow in BUILD_DIR/corpus;
# a crash leaves its input in BUILD_DIR/findings and ends the script with status 1.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build-fuzz}"
budget="${2:-10}"
shared="${KVSCOPE_SHARED_DIR:-$root/../shared}"
limit="-max_total_time=$budget"
[[ $budget == -runs=* ]] && limit="$budget"

corpus="$build/corpus"
findings="$build/findings"
mkdir -p "$corpus" "$findings"
"$build/bin/make_seeds" "$corpus/seeds"
[[ -f $shared/models/stories260K.gguf ]] && cp -n "$shared/models/stories260K.gguf" "$corpus/seeds/gguf/" || true

status=0
# the chat-store harness needs Qt SQL (built when the fuzz build finds it); its seeds are
# databases as the app writes them
harnesses=(gguf safetensors hf_config tokenizer tokenizer_json tokenizer_json_encode chat_template
  prometheus_text)
if [[ -x $build/bin/chat_store_fuzz ]]; then
  harnesses+=(chat_store)
  python3 "$(dirname "$0")/chat_store_seeds.py" "$corpus/seeds/chat_store"
fi
for harness in "${harnesses[@]}"; do
  mkdir -p "$corpus/$harness"
  seeds=()
  [[ -d $corpus/seeds/$harness ]] && seeds=("$corpus/seeds/$harness")
  # the /metrics dumps of engine/remote's tests start the Prometheus text harness
  [[ $harness == prometheus_text ]] && seeds+=("$(dirname "$0")/../engine/remote/fixtures")
  # tokenizer.json encoding: a tokenizer and a text of 64 KB in all; its budgets per input
  # make a slow unit (over 2 s) or a big one (a 64 MB allocation, 1 GB resident) a finding.
  budgets=(-max_len=1200000 -rss_limit_mb=2048 -timeout=20)
  [[ $harness == tokenizer_json_encode ]] &&
    budgets=(-max_len=65536 -rss_limit_mb=1024 -malloc_limit_mb=64 -timeout=2)
  # a saved-chat database: SQLite pages of 4 KB, a few hundred KB in all
  [[ $harness == chat_store ]] && budgets=(-max_len=262144 -rss_limit_mb=1024 -timeout=10)
  echo "== $harness ($limit)"
  if ! KVSCOPE_SHARED_DIR="$shared" "$build/bin/${harness}_fuzz" "$corpus/$harness" "${seeds[@]}" \
      "$limit" "${budgets[@]}" \
      -artifact_prefix="$findings/${harness}-" -print_final_stats=1 2>"$build/${harness}.log"; then
    echo "   FAILED: see $build/${harness}.log and $findings"
    status=1
  fi
  grep -E "#[0-9]+\s+DONE|stat::peak_rss_mb" "$build/${harness}.log" | sed 's/^/   /' || true
done
exit $status
