#!/usr/bin/env bash
# On the GPU host, after unpack.sh and `source DIR/env.sh` (a bundle with --with-vllm and a model;
# the lab's toolchain is not used): real `vllm serve` with one stack's own args
# (scripts/gpu/serve-plan.ts: as the lab's engine starts its pod, KV pool emulated for a 24 GiB
# card), then the benchmark against it without a cluster (lab/bundle/bench-steps.sh):
#   1. closed loop at concurrency 1, 2, 4, 8 (campaign/gpu-scenario.yaml over the short preset), with
#      identity, sequential and context phases;
#   2. open loop at RATES (default 80 % and 120 % of the capacity 1. measured), Poisson arrivals;
#   3. the sweep preset (GuideLLM-style: synchronous, throughput, then rates between).
# Detached with setsid so it outlives the shell that started it; poll and pack with collect.sh.
#   GPU_STACK=baseline bash lab/bundle/bench.sh     Env: RUN_DIR, MODEL_DIR, EMULATE_GPU_MEMORY_GIB as campaign.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=host-run.sh
source lab/bundle/host-run.sh
host_run_setup bench.sh
STACK="${GPU_STACK:-baseline}"
PORT=8000
date -u +%FT%TZ > "$RUN/started"
card=(); [[ "${EMULATE_GPU_MEMORY_GIB:-24}" == 0 ]] || card=(--emulate-gpu-memory-gib "${EMULATE_GPU_MEMORY_GIB:-24}")
node --import tsx scripts/gpu/serve-plan.ts --stack "$STACK" --port "$PORT" --model-dir "$MODEL_DIR" \
  "${card[@]}" --out "$RUN/plan" | tee "$RUN/plan.txt"
# Started from node, which holds the argv as a list (no shell quoting of the JSON flag values).
setsid node -e '
  const { spawn } = require("node:child_process"); const fs = require("node:fs");
  const argv = JSON.parse(fs.readFileSync(process.argv[1] + "/plan/argv.json", "utf8"));
  const log = fs.openSync(process.argv[1] + "/vllm.log", "a");
  const p = spawn("python3", argv, { stdio: ["ignore", log, log], detached: true });
  fs.writeFileSync(process.argv[1] + "/vllm.pid", String(p.pid)); p.unref();
' "$RUN" < /dev/null > /dev/null 2>&1
export RUN STACK PORT
setsid bash lab/bundle/bench-steps.sh < /dev/null > "$RUN/setsid.log" 2>&1 &
echo "vLLM ($STACK) and the benchmarks started in the background; logs in $RUN"
