#!/usr/bin/env bash
# npm run demo: the whole campaign on the GPU-less lab, from a fresh clone, in one command.
#   1. Node >= 22 (lab/setup-node.sh), npm dependencies if missing
#   2. the lab toolchain if missing (lab/toolchain/build.sh: Pulumi CLI, providers, kube-apiserver,
#      etcd, kwok, llm-d-inference-sim, built from the Go module proxy; needs Go, once, ~tens of minutes)
#   3. the real node's Debian packages (containerd, runc, CNI plugins, iptables, busybox-static:
#      lab/toolchain/build.sh node-packages, apt-get as root), then everything below inside the
#      lab's own network namespace (lab/isolated.sh), unless already in one
#   4. npm run lab:up (a local API server and a real node: kubelet, containerd, kube-proxy; vLLM
#      pods run the lab's simulator image)
#   5. a short campaign: each candidate deployed with pulumi up, benchmarked with short load
#      windows, two at a time in the campaign's slots (baseline in each as its control), then
#      baseline restored and verified; report and recommendation printed
#   6. the tuner's next step: `campaign propose --target-concurrency 8` on the campaign's results
#      (deploys nothing): the one-knob change it would measure next, and the figures why; then the
#      command that measures and promotes it (`campaign tune` with the demo's scenario, one proposal,
#      a branch of its own, the demo's extra arguments), to run on a running lab
# In a namespace of its own the demo stops the lab at the end (nothing outside it can reach the
# lab) and says how to get a shell with one; started inside one (`lab/isolated.sh bash`), or with
# --engine vllm, it leaves the lab running on baseline: stop it with `npm run lab:down`.
#
# Environment:
#   DEMO_STACKS   candidates (default: the seed's ten)
#   DEMO_ORDER    fixed | shuffle | alternate (default alternate: consecutive demos run in opposite orders)
#   DEMO_RESUME=1 keep earlier demo results whose config is unchanged instead of measuring again
#   DEMO_SLOTS    candidates measured at once, one lab GPU each (campaign --parallel; default 2 with
#                 the simulator, 1 with --engine vllm, which has this machine's GPUs only)
# Extra arguments go to the campaign, e.g. `npm run demo -- --verbose`, except the lab's engine
# options, which go to lab:up: `npm run demo -- --engine vllm [--vllm-python PATH] [--model-dir DIR]
# [--emulate-gpu-memory-gib N]` runs every candidate on a real vLLM on this machine's GPU (kwok's
# node and the lab's kubelet, on this machine's loopback: no namespace, no node packages).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
T0=$SECONDS
say() { printf '[demo %4ss] %s\n' "$((SECONDS - T0))" "$*" >&2; }

# shellcheck source=setup-node.sh
source lab/setup-node.sh

ARGS=("$@")
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
[[ "$ENGINE" == vllm ]] || TOOLS+=(llm-d-inference-sim kubelet kube-proxy local-path-provisioner)
mapfile -t missing < <(npx --no-install tsx common/tools.ts missing "${TOOLS[@]}")
if [[ ${#missing[@]} -gt 0 ]]; then
  say "building the lab toolchain into $LAB_BIN (missing: ${missing[*]}); the first build takes a while, later runs skip it"
  command -v go >/dev/null || { echo "demo: the toolchain is built from source and needs Go on PATH (https://go.dev/dl/), then rerun npm run demo" >&2; exit 1; }
  bash lab/toolchain/build.sh >&2
else
  say "toolchain present in $LAB_BIN"
fi

if [[ "$ENGINE" != vllm ]]; then
  # Before the namespace: apt-get needs the network (as root; elsewhere one line says what is missing).
  bash lab/toolchain/build.sh node-packages >&2
  # The real node adds a bridge and iptables rules: it runs in a network namespace of the lab's own.
  # DEMO_OWN_NETNS marks the second pass, so a machine that cannot make one does not loop (lab:up then says why).
  if [[ "${VLLM_LAB_NETNS:-}" != 1 && "${DEMO_OWN_NETNS:-}" != 1 ]]; then
    say "entering a network namespace of the lab's own (lab/isolated.sh); nothing outside it can reach the lab"
    exec env DEMO_OWN_NETNS=1 lab/isolated.sh bash lab/demo.sh "${ARGS[@]}"
  fi
fi

SLOTS="${DEMO_SLOTS:-$([[ "$ENGINE" == vllm ]] && echo 1 || echo 2)}"
[[ "$SLOTS" =~ ^[1-9][0-9]*$ ]] || { echo "demo: DEMO_SLOTS must be a positive integer, got \"$SLOTS\"" >&2; exit 2; }
# Each slot is one more Deployment beside baseline's, one GPU each: the simulator's lab gets that many.
if [[ "$ENGINE" != vllm && "$SLOTS" -gt 1 ]]; then LAB_ARGS+=(--gpus "$SLOTS"); fi
say "starting the lab (npm run lab:up -- ${LAB_ARGS[*]:-}; engine $ENGINE)"
npm run --silent lab:up -- "${LAB_ARGS[@]}" >/dev/null

STACKS="${DEMO_STACKS:-baseline,mem070,mem075,mem085,ctx4096,ctx16384,seqs1,seqs2,seqs4,cold}"
ORDER="${DEMO_ORDER:-alternate}"
FRESH=(--fresh)
[[ "${DEMO_RESUME:-0}" == 1 ]] && FRESH=()
say "running the campaign on the lab: $STACKS (order $ORDER, short load windows, $SLOTS at once)"
set +e
# node --import tsx, not the tsx CLI: its signal relay turns one Ctrl-C into two (campaign/detach.ts).
node --import tsx campaign/cli.ts run --lab --engine "$ENGINE" --short --scenario campaign/demo-scenario.yaml --stacks "$STACKS" --order "$ORDER" --parallel "$SLOTS" "${FRESH[@]}" "${CAMPAIGN_ARGS[@]}"
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
  # The tune measures what the demo measured (its scenario, so baseline runs at the target c=8) and
  # promotes the proposal the demo just printed: one candidate, on a branch of this run's own.
  NEXT=(npm run campaign -- tune --lab --short --scenario campaign/demo-scenario.yaml --target-concurrency 8
    --max-candidates 1 --branch "tune/demo-$(date -u +%Y%m%d-%H%M%S)" "${CAMPAIGN_ARGS[@]}")
  printf -v next '%q ' "${NEXT[@]}"
  echo "To measure and promote it (docs/tune.md), on a running lab: ${next% }" >&2
fi
# Exit codes: common/exit-codes.ts (0 ok, 6 some candidate invalid: baseline is verified either way).
verified=0
[[ $status == 0 || $status == 6 ]] && verified=1
if [[ "${DEMO_OWN_NETNS:-}" == 1 ]]; then
  # Nothing outside this namespace can reach the lab, and the namespace ends with the demo.
  npm run --silent lab:down 2>/dev/null || say "npm run lab:down failed; see .lab/"
  if [[ $verified == 1 ]]; then
    echo "Baseline restored and verified." >&2
  else
    echo "The campaign did not end with a verified baseline (exit code $status); see the report above." >&2
  fi
  cat >&2 <<MSG
The lab ran in the demo's own network namespace, which nothing outside it reaches: the demo stopped it.
For a shell with a running lab: lab/isolated.sh bash, then npm run lab:up (npm run lab:down before leaving that shell)
MSG
  exit "$status"
fi
# Where baseline answers, as the lab says (labServiceUrl): with --engine vllm its loopback URL, on the real node its ClusterIP.
ENDPOINT="$(node --import tsx lab/cli.ts endpoint gemmaforge gemma4-12b 2>/dev/null || echo "(no endpoint: npx tsx lab/cli.ts endpoint gemmaforge gemma4-12b says why)")"
if [[ $verified == 1 ]]; then
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
