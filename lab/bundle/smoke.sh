#!/usr/bin/env bash
# The smoke check of an unpacked offline bundle (unpack.sh runs it; run it again any time):
#   bash lab/bundle/smoke.sh            Node, node_modules, Pulumi + providers, the Kubernetes
#                                       binaries, etcd, kwok, a network namespace with loopback;
#                                       with the vLLM tree: python, vllm, torch, a vLLM kernel on the
#                                       GPU, the tokenizer, and the modules `vllm serve` would lack
#   bash lab/bundle/smoke.sh --serve    also starts real `vllm serve` on the carried model with dummy
#                                       weights, waits for /health, reads /v1/models and /metrics, asks
#                                       one chat, stops it (60-130 s more)
# Needs the environment of DIR/env.sh (sourced here when VLLM_TUNER_BUNDLE is not set).
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
if [[ -z "${VLLM_TUNER_BUNDLE:-}" ]]; then
  # shellcheck disable=SC1091
  source "$REPO/../env.sh" || exit 1
fi
fail=0
check() {
  local what=$1 out; shift
  if out=$("$@" 2>&1); then printf 'ok    %-24s %s\n' "$what" "$(echo "$out" | tail -1 | cut -c1-110)"
  else printf 'FAIL  %-24s %s\n' "$what" "$(echo "$out" | tail -3 | tr '\n' ' ' | cut -c1-300)"; fail=1; fi
}
check node node --version
check npm npm --version
check "node_modules" node -e 'require("@pulumi/pulumi"); require("@kubernetes/client-node"); require("tsx/cjs"); require("ts-node"); console.log("requires ok")'
check "tsx program" node --require tsx/cjs -e 'require("./lab/cluster/options"); console.log("lab/cluster/options.ts loads")'
check pulumi pulumi version
check "pulumi plugins" bash -o pipefail -c 'pulumi plugin ls 2>&1 | grep -E "kubernetes +resource|resource +kubernetes"'
check pulumi-language-nodejs sh -c 'test -x "$(dirname "$(command -v pulumi)")/pulumi-language-nodejs" && echo present'
for t in kube-apiserver kube-controller-manager kube-scheduler; do check "$t" "$t" --version; done
check etcd bash -o pipefail -c 'etcd --version | sed -n 1p'
check kwokctl kwokctl --version
check kwok bash -o pipefail -c 'kwok --version 2>&1 | sed -n 1p'
if llm-d-inference-sim --help >/dev/null 2>&1; then check llm-d-inference-sim echo present
else echo "--    llm-d-inference-sim      not in this bundle: the simulator engine is unavailable (--engine vllm only)"; fi
check "netns + loopback" sh -c 'unshare --net sh -c "ip link set lo up && echo netns+lo ok"'

if [[ -d "$VLLM_TUNER_BUNDLE/python/vllm" ]]; then
  check python3 python3 -c 'import sys; print(sys.executable, sys.version.split()[0])'
  check "import vllm" python3 -c 'import vllm, vllm.version as v; print(v.__version__, vllm.__file__)'
  check torch python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")'
  # vLLM's own CUDA kernels on this GPU: with --keep-sass this fails first on another architecture.
  check "vllm kernel on GPU" python3 -c 'import torch, vllm._custom_ops as ops; x=torch.randn(4,256,device="cuda",dtype=torch.bfloat16); w=torch.ones(256,device="cuda",dtype=torch.bfloat16); o=torch.empty_like(x); ops.rms_norm(o,x,w,1e-6); r=x.float()*torch.rsqrt(x.float().pow(2).mean(-1,keepdim=True)+1e-6); print("rms_norm max err", (o.float()-r).abs().max().item())'
  check transformers python3 -c 'import transformers, tokenizers; print(transformers.__version__, tokenizers.__version__)'
  check nvidia-smi sh -c 'nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader'
  echo "--- Python modules vllm serve would lack (each stubbed in turn to find the next):"
  python3 lab/bundle/missing-imports.py || fail=1
else
  echo "--    vllm                     not in this bundle (npm run bundle -- --with-vllm): the simulator engine only"
fi
if [[ -n "${VLLM_TUNER_MODEL_DIR:-}" ]]; then
  check "tokenizer (model)" python3 -c "from transformers import AutoTokenizer as A; t=A.from_pretrained('$VLLM_TUNER_MODEL_DIR'); print(len(t), repr(t.apply_chat_template([{'role':'user','content':'hi'}], tokenize=False, add_generation_prompt=True)))"
fi

if [[ "${1:-}" == "--serve" ]]; then
  [[ -n "${VLLM_TUNER_MODEL_DIR:-}" && -d "$VLLM_TUNER_BUNDLE/python/vllm" ]] || { echo "FAIL  --serve needs the vLLM tree and a model in the bundle"; exit 1; }
  port=${SMOKE_PORT:-8000} log="$VLLM_TUNER_BUNDLE/smoke-vllm.log"
  echo "--- vllm serve $(basename "$VLLM_TUNER_MODEL_DIR") (dummy weights) on 127.0.0.1:$port, log $log"
  python3 -m vllm.entrypoints.cli.main serve "$VLLM_TUNER_MODEL_DIR" --load-format dummy --served-model-name smoke \
    --max-model-len 8192 --max-num-seqs 4 --gpu-memory-utilization 0.80 --host 127.0.0.1 --port "$port" > "$log" 2>&1 &
  pid=$! t0=$SECONDS
  # curl may be absent: Python's urllib.  get URL [JSON_BODY]
  get() { python3 -c 'import sys,urllib.request as u; d=sys.argv[2].encode() if len(sys.argv)>2 else None; r=u.urlopen(u.Request(sys.argv[1], d, {"content-type":"application/json"}), timeout=60); sys.stdout.write(r.read().decode())' "$@"; }
  until get "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
    kill -0 $pid 2>/dev/null || { echo "FAIL  vllm serve exited:"; tail -30 "$log"; fail=1; break; }
    ((SECONDS - t0 > ${SMOKE_SERVE_TIMEOUT:-300})) && { echo "FAIL  no /health in ${SMOKE_SERVE_TIMEOUT:-300} s"; tail -20 "$log"; fail=1; break; }
    sleep 2
  done
  if kill -0 $pid 2>/dev/null && get "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    echo "ok    /health after $((SECONDS - t0)) s"
    get "http://127.0.0.1:$port/v1/models"; echo
    get "http://127.0.0.1:$port/metrics" | grep '^vllm:cache_config_info' | head -1
    grep -E 'GPU KV cache size|Maximum concurrency' "$log" | head -2
    get "http://127.0.0.1:$port/v1/chat/completions" \
      '{"model":"smoke","messages":[{"role":"user","content":"hi"}],"max_tokens":8}' | head -c 400; echo
  fi
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
fi
echo "smoke: $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
exit $fail
