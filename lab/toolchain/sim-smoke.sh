#!/usr/bin/env bash
# Smoke test of llm-d-inference-sim built by build.sh: starts it on 127.0.0.1 only,
# hits /v1/models, /health, /tokenize, /v1/chat/completions, /metrics, then stops it.
# Usage: lab/toolchain/sim-smoke.sh [OUTFILE]   (OUTFILE gets --help + all responses)
set -euo pipefail
BIN="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}/bin"
SIM="$BIN/llm-d-inference-sim"
[[ -x "$SIM" ]] || SIM="$(command -v llm-d-inference-sim)"
PORT="${SIM_PORT:-18000}"
MODEL="${SIM_MODEL:-sim-model}"
OUT="${1:-/dev/stdout}"
URL="http://127.0.0.1:$PORT"

{
  echo "### llm-d-inference-sim smoke test ($(date -u +%FT%TZ)), binary: $SIM"
  echo
  echo "### $SIM --help"
  "$SIM" --help 2>&1 || true
} > "$OUT"

LOG="$(mktemp)"
"$SIM" --port "$PORT" --model "$MODEL" --max-num-seqs 2 --max-model-len 8192 \
  --force-dummy-tokenizer >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -f "$LOG"' EXIT

for _ in $(seq 1 100); do
  curl -fsS -m 2 "$URL/health" >/dev/null 2>&1 && break
  kill -0 $PID 2>/dev/null || { cat "$LOG" >&2; echo "simulator exited" >&2; exit 1; }
  sleep 0.2
done

req() { # METHOD PATH [JSON]
  echo
  echo "### $1 $2 ${3:-}"
  if [[ $# -ge 3 ]]; then
    curl -sS -m 10 -w '\n[HTTP %{http_code}, %{time_total}s]\n' -X "$1" -H 'Content-Type: application/json' -d "$3" "$URL$2"
  else
    curl -sS -m 10 -w '\n[HTTP %{http_code}, %{time_total}s]\n' -X "$1" "$URL$2"
  fi
}
{
  echo
  echo "### started: $SIM --port $PORT --model $MODEL --max-num-seqs 2 --max-model-len 8192 --force-dummy-tokenizer"
  req GET /v1/models
  req GET /health
  req GET /ready
  req POST /tokenize "{\"model\":\"$MODEL\",\"prompt\":\"Hello world, this is a test\"}"
  req POST /v1/chat/completions "{\"model\":\"$MODEL\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}],\"max_tokens\":16}"
  req POST /v1/chat/completions "{\"model\":\"$MODEL\",\"messages\":[{\"role\":\"user\",\"content\":\"Stream please\"}],\"max_tokens\":8,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
  req POST /v1/completions "{\"model\":\"$MODEL\",\"prompt\":\"Once upon a time\",\"max_tokens\":8}"
  req GET /metrics
  echo
  echo "### simulator log"
  cat "$LOG"
} >> "$OUT"
echo "sim smoke test OK (output: $OUT)" >&2
