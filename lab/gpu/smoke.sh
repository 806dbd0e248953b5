#!/usr/bin/env bash
# Device smoke test after lab/gpu/unpack.sh. Checks the carried Python tree, Node, the Pulumi CLI and
# plugins, the Kubernetes binaries, and lists the Python modules `vllm serve` would lack.
#   bash lab/gpu/smoke.sh            checks only (~30 s: importing vllm + torch dominates)
#   bash lab/gpu/smoke.sh --serve    also starts real `vllm serve` on the carried gemma3 dir with
#                                    --load-format dummy, waits for /health, reads /v1/models and
#                                    /metrics' cache_config_info, stops it (60-130 s more)
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
# shellcheck source=env.sh
source lab/gpu/env.sh
fail=0
check() { local what=$1; shift; local out; if out=$("$@" 2>&1); then printf 'ok    %-22s %s\n' "$what" "$(echo "$out" | tail -1 | cut -c1-110)"; else printf 'FAIL  %-22s %s\n' "$what" "$(echo "$out" | tail -3 | tr '\n' ' ' | cut -c1-300)"; fail=1; fi; }
check python3 python3 -c 'import sys; print(sys.executable, sys.version.split()[0])'
check "import vllm" python3 -c 'import vllm, vllm.version as v; print(v.__version__, vllm.__file__)'
check torch python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")'
# vLLM's own CUDA kernels on this GPU (pack.sh zeroes the SASS of other architectures: this would fail first)
check "vllm _C op on GPU" python3 -c 'import torch, vllm._custom_ops as ops; x=torch.randn(4,256,device="cuda",dtype=torch.bfloat16); w=torch.ones(256,device="cuda",dtype=torch.bfloat16); o=torch.empty_like(x); ops.rms_norm(o,x,w,1e-6); r=x.float()*torch.rsqrt(x.float().pow(2).mean(-1,keepdim=True)+1e-6); print("rms_norm max err", (o.float()-r).abs().max().item())'
check "transformers" python3 -c 'import transformers, tokenizers; print(transformers.__version__, tokenizers.__version__)'
check "tokenizer (gemma3)" python3 -c "from transformers import AutoTokenizer as A; t=A.from_pretrained('$VLLM_GEMMA3_DIR'); print(len(t), repr(t.apply_chat_template([{'role':'user','content':'hi'}], tokenize=False, add_generation_prompt=True)))"
check node node --version
check "node_modules" node -e 'require("@pulumi/pulumi"); require("@kubernetes/client-node"); require("tsx/cjs"); require("ts-node"); console.log("requires ok")'
check "tsx program" node --require tsx/cjs -e 'require("./lab/options"); console.log("lab/options.ts loads")'
check pulumi pulumi version
check "pulumi plugins" bash -o pipefail -c 'pulumi plugin ls 2>&1 | grep -E "resource +kubernetes"'
check pulumi-language-nodejs sh -c 'test -x "$(dirname "$(command -v pulumi)")/pulumi-language-nodejs" && echo present'
check kube-apiserver kube-apiserver --version
check kube-controller-manager kube-controller-manager --version
check kube-scheduler kube-scheduler --version
check etcd bash -o pipefail -c 'etcd --version | head -1'
check kwokctl kwokctl --version
check kwok bash -o pipefail -c 'kwok --version 2>&1 | head -1'
check llm-d-inference-sim sh -c 'test -x "$VLLM_LAB_HOME/bin/llm-d-inference-sim" && echo present'
check unshare sh -c 'unshare --net sh -c "ip link set lo up && echo netns+lo ok"'
check nvidia-smi sh -c 'nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader'
echo "--- Python modules vllm serve would lack (stubbed one by one):"
python3 lab/gpu/missing_imports.py || fail=1

if [[ "${1:-}" == "--serve" ]]; then
  port=${SMOKE_PORT:-8000}; log=${OUT:-/tmp}/smoke-vllm.log
  echo "--- vllm serve gemma3 (dummy weights) on 127.0.0.1:$port, log $log"
  python3 -m vllm.entrypoints.cli.main serve "$VLLM_GEMMA3_DIR" --load-format dummy --served-model-name gemma-4-12b-q4 \
    --max-model-len 8192 --max-num-seqs 4 --gpu-memory-utilization 0.80 --host 127.0.0.1 --port "$port" > "$log" 2>&1 &
  pid=$!; t0=$SECONDS
  # curl may be absent there: Python's urllib instead. get URL [JSON_BODY]
  get() { python3 -c 'import sys,urllib.request as u; d=sys.argv[2].encode() if len(sys.argv)>2 else None; r=u.urlopen(u.Request(sys.argv[1], d, {"content-type":"application/json"}), timeout=60); sys.stdout.write(r.read().decode())' "$@"; }
  until get "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
    kill -0 $pid 2>/dev/null || { echo "FAIL  vllm serve exited:"; tail -30 "$log"; fail=1; break; }
    ((SECONDS - t0 > ${SMOKE_SERVE_TIMEOUT:-300})) && { echo "FAIL  no /health in time"; tail -20 "$log"; fail=1; break; }
    sleep 2
  done
  if kill -0 $pid 2>/dev/null && get "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    echo "ok    /health after $((SECONDS - t0)) s"
    get "http://127.0.0.1:$port/v1/models"; echo
    get "http://127.0.0.1:$port/metrics" | grep '^vllm:cache_config_info' | head -1
    grep -E 'GPU KV cache size|Maximum concurrency' "$log" | head -2
    get "http://127.0.0.1:$port/v1/chat/completions" \
      '{"model":"gemma-4-12b-q4","messages":[{"role":"user","content":"hi"}],"max_tokens":8}' | head -c 400; echo
  fi
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
fi
echo "smoke: $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
exit $fail
