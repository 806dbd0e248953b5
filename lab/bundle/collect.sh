#!/usr/bin/env bash
# On the GPU host: waits up to WAIT seconds (default 0) for the run that lab/bundle/campaign.sh or
# lab/bundle/bench.sh started, prints its progress, and with OUT_ARCHIVE packs what exists so far
# (results/, the lab's logs and state with every vLLM pod's log, the run's logs) into that .tar.xz.
# Safe while the run is still going: a partial run is packed as such (no campaign.rc inside).
#   WAIT=540 bash lab/bundle/collect.sh [OUT_ARCHIVE.tar.xz]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
RUN="${RUN_DIR:-${VLLM_TUNER_BUNDLE:?source DIR/env.sh first}/run}"
[[ -f "$RUN/started" ]] || { echo "collect: nothing started in $RUN (lab/bundle/campaign.sh or bench.sh)"; exit 1; }
deadline=$((SECONDS + ${WAIT:-0}))
while ((SECONDS < deadline)) && [[ ! -f "$RUN/campaign.rc" ]]; do sleep 10; done
echo "run rc: $(cat "$RUN/campaign.rc" 2>/dev/null || echo 'still running')"
tail -n 40 "$RUN/lab-up.log" "$RUN/campaign.log" 2>/dev/null
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv 2>/dev/null || true
[[ -n "${1:-}" ]] || exit 0
out="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
tar -cf - results .lab/logs .lab/state.json -C "$(dirname "$RUN")" "$(basename "$RUN")" 2>/dev/null | xz -6 -T0 > "$out"
ls -la "$out"
