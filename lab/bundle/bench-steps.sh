#!/usr/bin/env bash
# The benchmark runs of lab/bundle/bench.sh, one after the other, against the vLLM it started (or, to try
# the steps without a GPU, any vLLM-protocol server on PORT serving the stack's model name):
#   RUN=DIR STACK=baseline PORT=8000 bash lab/bundle/bench-steps.sh     (RATES='[2.5,4]' to fix the rates)
# Each step's exit code goes to $RUN/<step>.rc; $RUN/campaign.rc marks the end (lab/bundle/collect.sh).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
: "${RUN:?}" "${STACK:?}" "${PORT:?}"
bench() {
  node --import tsx benchmarks/cli.ts run --stack "$STACK" --outputs "$RUN/plan/outputs.json" \
    --endpoint "http://127.0.0.1:$PORT" --no-cluster --wait-ready 300 --out "$RUN/results" "$@"
}
# 1. Closed loop at concurrency 1, 2, 4, 8, after identity, sequential and context.
bench --preset short --scenario campaign/gpu-scenario.yaml --phases identity,sequential,context,load \
  > "$RUN/bench-closed.log" 2>&1
echo $? > "$RUN/closed.rc"
# 2. Open loop below and above the capacity step 1 measured (80 % and 120 %), Poisson arrivals.
RATES="${RATES:-$(node --import tsx scripts/gpu/capacity-rates.ts "$RUN/results" 2>> "$RUN/bench-open.log")}"
echo "rates: ${RATES:-none}" >> "$RUN/bench-open.log"
if [[ -n "$RATES" ]]; then
  bench --preset short --scenario campaign/gpu-scenario.yaml --phases load --set load.mode=rate \
    --set "load.openLoop.ratesPerSecond=$RATES" --set load.durationSeconds=20 --set load.warmupSeconds=2 \
    >> "$RUN/bench-open.log" 2>&1
  echo $? > "$RUN/open.rc"
fi
# 3. GuideLLM-style sweep: synchronous and throughput rates, then six rates between (6 s windows).
bench --preset sweep --scenario campaign/gpu-scenario.yaml --phases load > "$RUN/bench-sweep.log" 2>&1
echo $? > "$RUN/sweep.rc"
[[ -f "$RUN/vllm.pid" ]] && kill "$(cat "$RUN/vllm.pid")" 2>/dev/null
echo done > "$RUN/campaign.rc"
