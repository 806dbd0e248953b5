#!/usr/bin/env bash
# The vLLM 0.24.0 tree of the offline bundle (lab/bundle/build.sh --with-vllm), for a GPU host that
# has Python 3.12 + torch 2.11 + transformers but no network:
#   bash lab/bundle/python-tree.sh WHEEL_CACHE DEST [KEEP_SASS]
# 1. pip download (once, into WHEEL_CACHE) vllm==0.24.0 and the wheels of lab/bundle/vllm-wheels.txt,
#    --no-deps: the host's torch, torchvision, torchaudio and numba are used, not shipped.
# 2. Unzip them into DEST (the host's PYTHONPATH), leaving out what a plain decoder model on Hopper
#    never loads: FA2 (Hopper uses FA3), the MoE kernels (a warning only), the vllm-rs binary,
#    DeepGEMM and the SM100 FMHA sources.
# 3. KEEP_SASS=90 (default): zero the other GPU architectures' SASS in vLLM's own kernels
#    (lab/bundle/strip-sass.py; ~53 MiB that nvcc had already compressed). `all` keeps every one.
# Env: PY312 (a Python 3.12 to run pip with; found on PATH or under pyenv otherwise).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache=$1 dest=$2 keep=${3:-90}
if [[ -z "${PY312:-}" ]]; then
  for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3 python3; do
    if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then PY312="$c"; break; fi
  done
fi
: "${PY312:?no Python 3.12 found to run pip download with; set PY312}"
plat=(--only-binary=:all: --python-version 3.12 --implementation cp)
for p in manylinux_2_31_x86_64 manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64; do plat+=(--platform "$p"); done
mkdir -p "$cache"
awk -F- 'NF{print $1"=="$2}' "$HERE/vllm-wheels.txt" > "$cache/specs.txt"
echo "python-tree: pip download vllm==0.24.0 + $(wc -l < "$cache/specs.txt") wheels into $cache" >&2
"$PY312" -m pip download -q --no-deps "${plat[@]}" -d "$cache" vllm==0.24.0 -r "$cache/specs.txt"
rm -rf "$dest"; mkdir -p "$dest"
(cd "$dest" && unzip -q "$cache"/vllm-0.24.0-*.whl -x 'vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so' \
    'vllm/_moe_C_stable_libtorch.abi3.so' 'vllm/vllm-rs' 'vllm/third_party/deep_gemm/*' 'vllm/third_party/fmha_sm100/*')
while read -r w; do
  [[ -n "$w" ]] || continue
  [[ -f "$cache/$w" ]] || { echo "python-tree: $cache/$w missing after pip download" >&2; exit 1; }
  (cd "$dest" && unzip -qo "$cache/$w")
done < "$HERE/vllm-wheels.txt"
if [[ "$keep" != all ]]; then
  find "$dest/vllm" -name '*.so' -print0 | xargs -0 python3 "$HERE/strip-sass.py" --keep "$keep" >&2
fi
echo "python-tree: $(du -sh "$dest" | cut -f1) in $dest" >&2
