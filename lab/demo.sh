#!/usr/bin/env bash
# npm run demo: the whole campaign on the GPU-less lab, from a fresh clone, in one command.
#   1. Node >= 22 (lab/setup-node.sh), npm dependencies if missing
#   2. the lab toolchain if missing (lab/toolchain/build.sh: Pulumi CLI, providers, kube-apiserver,
#      etcd, kwok, llm-d-inference-sim, built from the Go module proxy; needs Go, once, ~tens of minutes)
#   3. npm run lab:up (a local API server with one simulated GPU node; vLLM pods run a simulator)
#   4. a short campaign: each candidate deployed with pulumi up, benchmarked with short load
#      windows, then baseline restored and verified; report and recommendation printed
#   5. the tuner's next step: `campaign propose --target-concurrency 8` on the campaign's results
#      (deploys nothing): the one-knob change it would measure next, and the figures why
# The lab is left running on baseline; stop it with `npm run lab:down`.
#
# Environment:
#   DEMO_STACKS   candidates (default: the seed's ten)
#   DEMO_ORDER    fixed | shuffle | alternate (default alternate: consecutive demos run in opposite orders)
#   DEMO_RESUME=1 keep earlier demo results whose config is unchanged instead of measuring again
#   VLLM_LAB_NODE=real  run it all on the lab's real node (kubelet, containerd, kube-proxy; docs/lab.md),
#                 inside lab/isolated.sh; default simulated
# Extra arguments go to the campaign, e.g. `npm run demo -- --verbose`, except the lab's engine
# options, which go to lab:up: `npm run demo -- --engine vllm [--vllm-python PATH] [--model-dir DIR]
# [--emulate-gpu-memory-gib N]` runs every candidate on a real vLLM on this machine's GPU.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
T0=$SECONDS
say() { printf '[demo %4ss] %s\n' "$((SECONDS - T0))" "$*" >&2; }

# shellcheck source=setup-node.sh
source lab/setup-node.sh

LAB_ARGS=()
CAMPAIGN_ARGS=()
ENGINE=simulator
while [[ $# -gt 0 ]]; do
  case "$1" in
    --engine | --vllm-python | --model-dir | --emulate-gpu-memory-gib)
      [[ $# -ge 2 ]] || { echo "demo: $1 needs a value" >&2; exit 2; }
      [[ "$1" == --engine ]] && ENGINE="$2"
      LAB_ARGS+=("$1" "$2")
      shift 2
      ;;
    *)
      CAMPAIGN_ARGS+=("$1")
      shift
      ;;
  esac
done

if [[ ! -d node_modules/@pulumi/pulumi || ! -x node_modules/.bin/tsx ]]; then
  say "installing npm dependencies (npm ci --ignore-scripts)"
  npm ci --ignore-scripts --no-audit --no-fund >&2
fi

LAB_BIN="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}/bin"
# The one tool rule (common/tools.ts): VLLM_LAB_TOOL_<NAME>, then $LAB_BIN, then PATH. The real
# engine needs no simulator.
TOOLS=(pulumi pulumi-language-nodejs pulumi-resource-kubernetes kube-apiserver etcd kwokctl kwok)
[[ "$ENGINE" == vllm ]] || TOOLS+=(llm-d-inference-sim)
mapfile -t missing < <(npx --no-install tsx common/tools.ts missing "${TOOLS[@]}")
if [[ ${#missing[@]} -gt 0 ]]; then
  say "building the lab toolchain into $LAB_BIN (missing: ${missing[*]}); the first build takes a while, later runs skip it"
  command -v go >/dev/null || { echo "demo: the toolchain is built from source and needs Go on PATH (https://go.dev/dl/), then rerun npm run demo" >&2; exit 1; }
  bash lab/toolchain/build.sh >&2
else
  say "toolchain present in $LAB_BIN"
fi

say "starting the lab (npm run lab:up -- ${LAB_ARGS[*]:-}; engine $ENGINE)"
npm run --silent lab:up -- "${LAB_ARGS[@]}" >/dev/null

STACKS="${DEMO_STACKS:-baseline,mem070,mem075,mem085,ctx4096,ctx16384,seqs1,seqs2,seqs4,cold}"
ORDER="${DEMO_ORDER:-alternate}"
FRESH=(--fresh)
[[ "${DEMO_RESUME:-0}" == 1 ]] && FRESH=()
say "running the campaign on the lab: $STACKS (order $ORDER, short load windows)"
set +e
# node --import tsx, not the tsx CLI: its signal relay turns one Ctrl-C into two (campaign/detach.ts).
node --import tsx campaign/cli.ts run --lab --engine "$ENGINE" --short --scenario campaign/demo-scenario.yaml --stacks "$STACKS" --order "$ORDER" "${FRESH[@]}" "${CAMPAIGN_ARGS[@]}"
status=$?
set -e

say "campaign done in $((SECONDS - T0)) s (exit code $status)"
# Where the campaign wrote: with --lab its default is results/lab (campaign/options.ts), unless --results.
RESULTS=results/lab
for ((i = 0; i < ${#CAMPAIGN_ARGS[@]}; i++)); do
  [[ "${CAMPAIGN_ARGS[$i]}" == --results ]] && RESULTS="${CAMPAIGN_ARGS[$((i + 1))]:-results}"
done
if [[ $status == 0 || $status == 6 ]]; then
  say "the tuner's next step: npm run campaign -- propose --results $RESULTS --target-concurrency 8"
  set +e
  node --import tsx campaign/cli.ts propose --results "$RESULTS" --target-concurrency 8 >&2
  set -e
  echo "To measure and promote it: npm run campaign -- tune --lab --short --target-concurrency 8 --branch tune/demo (docs/tune.md)" >&2
fi
# Where baseline answers: the lab's loopback URL, or on the real node (VLLM_LAB_NODE=real, no such
# URL) its Service's ClusterIP.
ENDPOINT="$(node -p 'require("./.lab/state.json").endpoint ?? ""' 2>/dev/null || true)"
[[ -n "$ENDPOINT" ]] || ENDPOINT="$(node --import tsx lab/cli.ts endpoint gemmaforge gemma4-12b 2>/dev/null || echo "http://127.0.0.1:8100")"
# Exit codes: common/exit-codes.ts (0 ok, 6 some candidate invalid: baseline is verified either way).
if [[ $status == 0 || $status == 6 ]]; then
  echo "The lab is still running, back on baseline (verified):" >&2
else
  echo "The campaign did not end with a verified baseline (exit code $status); see the report above. The lab is still running:" >&2
fi
cat >&2 <<MSG
  export KUBECONFIG=$ROOT/.lab/kubeconfig    # kubectl -n gemmaforge get deploy,pods,pvc
  curl $ENDPOINT/v1/models
Stop it with: npm run lab:down
MSG
exit "$status"
