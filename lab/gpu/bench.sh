#!/usr/bin/env bash
# Runs ON the device after lab/gpu/unpack.sh (components py, node, model; no lab toolchain needed):
# real `vllm serve` with one stack's own args (scripts/gpu/serve-plan.ts: as the lab's engine starts its
# pod, KV pool emulated for a 24 GiB card), then the benchmark against it without a cluster:
#   1. closed loop at concurrency 1, 2, 4, 8 (campaign/gpu-scenario.yaml over the short preset), with
#      identity, sequential and context phases;
#   2. open loop at RATES (default 80 % and 120 % of the measured capacity of 1.), POISSON arrivals;
#   3. the sweep preset (GuideLLM-style: synchronous, throughput, then rates between).
# Detached with setsid so it outlives the call (a device command runs at most 10 minutes); poll and
# fetch with `WAIT=S bash lab/gpu/collect.sh` (same $GPU_ROOT/run layout as lab/gpu/campaign.sh).
#   GPU_STACK=baseline bash lab/gpu/bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=env.sh
source lab/gpu/env.sh
REPO="$GPU_ROOT/repo"
mkdir -p "$REPO"
# The device re-syncs the checkout on every call; the run uses a copy. Its .git is left out: the
# device's copy of it can be stale, and a result's gitCommit is better null than wrong.
tar --exclude=./.gpu --exclude=./.git -cf - . | tar -xf - -C "$REPO"
cd "$REPO"
RUN="$GPU_ROOT/run"
mkdir -p "$RUN"
STACK="${GPU_STACK:-baseline}"
PORT=8000
date -u +%FT%TZ > "$RUN/started"
node --import tsx scripts/gpu/serve-plan.ts --stack "$STACK" --port "$PORT" --model-dir "$VLLM_GEMMA3_DIR" \
  --emulate-gpu-memory-gib 24 --out "$RUN/plan" | tee "$RUN/plan.txt"
# Started from node, which holds the argv as a list (no shell quoting of the JSON flag values).
setsid node -e '
  const { spawn } = require("node:child_process"); const fs = require("node:fs");
  const argv = JSON.parse(fs.readFileSync(process.argv[1] + "/plan/argv.json", "utf8"));
  const log = fs.openSync(process.argv[1] + "/vllm.log", "a");
  const p = spawn("python3", argv, { stdio: ["ignore", log, log], detached: true });
  fs.writeFileSync(process.argv[1] + "/vllm.pid", String(p.pid)); p.unref();
' "$RUN" < /dev/null > /dev/null 2>&1
export RUN STACK PORT
setsid bash lab/gpu/bench-steps.sh < /dev/null > "$RUN/setsid.log" 2>&1 &
echo "vLLM ($STACK) and the benchmarks started in the background; logs in $RUN"
