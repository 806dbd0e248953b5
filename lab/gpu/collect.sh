#!/usr/bin/env bash
# Runs ON the device: waits up to WAIT seconds (default 0) for the campaign that lab/gpu/campaign.sh
# started, printing its progress, then packs what exists so far (campaign summary, result files, logs,
# the vLLM pod logs) into $OUT/gpu-run.tar.xz. Safe to call while the campaign is still running: a
# partial campaign is fetched as such.
#   WAIT=540 bash lab/gpu/collect.sh
set -uo pipefail
GPU_ROOT="${GPU_ROOT:-/tmp/gpu}"
cd "$GPU_ROOT/repo" || { echo "collect: no $GPU_ROOT/repo (run lab/gpu/campaign.sh first)"; exit 1; }
RUN="$GPU_ROOT/run"
deadline=$((SECONDS + ${WAIT:-0}))
while ((SECONDS < deadline)) && [[ ! -f "$RUN/campaign.rc" ]]; do sleep 10; done
echo "campaign rc: $(cat "$RUN/campaign.rc" 2>/dev/null || echo 'still running')"
tail -n 40 "$RUN/lab-up.log" "$RUN/campaign.log" 2>/dev/null
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv 2>/dev/null || true
[[ -n "${OUT:-}" ]] || exit 0
tar -C . -cf - results .lab/logs .lab/state.json "$RUN" 2>/dev/null | xz -6 -T0 > "$OUT/gpu-run.tar.xz"
ls -la "$OUT"
