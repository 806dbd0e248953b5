#!/usr/bin/env bash
# Runs ON the device after lab/gpu/unpack.sh: the lab with the real engine (one `vllm serve` per pod,
# gemma3-like model with dummy weights, KV pool as the seed's 24 GiB card would leave it), then the
# campaign over GPU_STACKS, detached with setsid so it outlives this call (a device command runs at
# most 10 minutes). Poll and fetch with lab/gpu/collect.sh.
#   bash lab/gpu/campaign.sh            GPU_STACKS=baseline,seqs1 bash lab/gpu/campaign.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=env.sh
source lab/gpu/env.sh
# The device re-syncs the checkout on every call; the campaign runs from a copy of its own.
REPO="$GPU_ROOT/repo"
mkdir -p "$REPO"
tar --exclude=./.gpu -cf - . | tar -xf - -C "$REPO"
cd "$REPO"
RUN="$GPU_ROOT/run"
mkdir -p "$RUN"
STACKS="${GPU_STACKS:-baseline,seqs1,ctx4096,mem070,seqs2,ctx16384}"
echo "$STACKS" > "$RUN/stacks"
date -u +%FT%TZ > "$RUN/started"
setsid bash -c "
  node --import tsx lab/cli.ts up --engine vllm --vllm-python python3 --model-dir '$VLLM_GEMMA3_DIR' \
    --emulate-gpu-memory-gib 24 > '$RUN/lab-up.log' 2>&1 || { echo lab-up-failed > '$RUN/campaign.rc'; exit 1; }
  node --import tsx campaign/cli.ts run --lab --engine vllm --short --scenario campaign/gpu-scenario.yaml \
    --stacks '$STACKS' --order fixed --fresh --verbose > '$RUN/campaign.log' 2>&1
  echo \$? > '$RUN/campaign.rc'
" < /dev/null > "$RUN/setsid.log" 2>&1 &
echo "campaign started in the background ($STACKS); logs in $RUN"
