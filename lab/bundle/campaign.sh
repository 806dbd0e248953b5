#!/usr/bin/env bash
# On the GPU host, after unpack.sh and `source DIR/env.sh`: the lab with the real engine (one
# `vllm serve` per pod, the carried model with dummy weights, the KV pool a smaller card would leave),
# then one campaign command, both detached with setsid so they outlive the shell that started them
# (an ssh session, a job step). Poll and pack the results with lab/bundle/collect.sh.
#   bash lab/bundle/campaign.sh                       the six-candidate run (as examples/gpu-campaign-2026-11-30)
#   bash lab/bundle/campaign.sh tune --target-concurrency 8 ...   any `npm run campaign --` command instead
# Env: RUN_DIR (default $VLLM_TUNER_BUNDLE/run), EMULATE_GPU_MEMORY_GIB (default 24; 0 = the real card),
#      MODEL_DIR (default $VLLM_TUNER_MODEL_DIR, the bundle's model), VLLM_PYTHON (default python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=host-run.sh
source lab/bundle/host-run.sh
host_run_setup campaign.sh
if (($#)); then args=("$@"); else
  args=(run --lab --engine vllm --short --scenario campaign/gpu-scenario.yaml
        --stacks baseline,seqs1,ctx4096,mem070,seqs2,ctx16384 --order fixed --fresh --verbose)
fi
up=(--engine vllm --vllm-python "${VLLM_PYTHON:-python3}" --model-dir "$MODEL_DIR")
[[ "${EMULATE_GPU_MEMORY_GIB:-24}" == 0 ]] || up+=(--emulate-gpu-memory-gib "${EMULATE_GPU_MEMORY_GIB:-24}")
printf '%q ' campaign "${args[@]}" > "$RUN/command"; echo >> "$RUN/command"
date -u +%FT%TZ > "$RUN/started"
# The lab's up comes first and inside the detached job: a real start takes minutes.
setsid bash -c '
  run=$1; shift; n=$1; shift; up=("${@:1:$n}"); shift "$n"
  node --import tsx lab/cli.ts up "${up[@]}" > "$run/lab-up.log" 2>&1 || { echo lab-up-failed > "$run/campaign.rc"; exit 1; }
  node --import tsx campaign/cli.ts "$@" > "$run/campaign.log" 2>&1
  echo $? > "$run/campaign.rc"
' campaign-job "$RUN" "${#up[@]}" "${up[@]}" "${args[@]}" < /dev/null > "$RUN/setsid.log" 2>&1 &
echo "lab (engine vllm) and \`campaign ${args[*]}\` started in the background; logs in $RUN"
