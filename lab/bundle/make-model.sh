#!/usr/bin/env bash
# A Gemma-3-12B-like text model directory to serve with dummy weights (`--load-format dummy`), for
# `npm run bundle -- --with-model DIR`: lab/bundle/gemma3/ (config, generation config, tokenizer
# config, chat template) plus a tokenizer.json trained offline (lab/bundle/make-tokenizer.py).
#   bash lab/bundle/make-model.sh DIR
# The model's vocabulary is 32000: a BPE trained on the repo alone stops near 8k tokens, and ids the
# random weights sample beyond the tokenizer's vocabulary cannot be detokenized, so the corpus adds
# JavaScript and Markdown from node_modules until the vocabulary fills, so it runs after `npm ci`.
# Needs a Python 3.12, and network to PyPI the first time: a venv with tokenizers + transformers,
# cached under $VLLM_LAB_HOME/bundle/tokvenv; later runs are offline.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
dest=${1:?usage: make-model.sh DIR}
work="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}/bundle"
venv="$work/tokvenv"
if [[ -z "${PY312:-}" ]]; then
  for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3 python3; do
    if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then PY312="$c"; break; fi
  done
fi
[[ -d "$REPO/node_modules" ]] || { echo "make-model: $REPO/node_modules is missing: run npm ci --ignore-scripts first (part of the tokenizer's corpus)" >&2; exit 2; }
if ! "$venv/bin/python" -c 'import tokenizers, transformers' 2>/dev/null; then
  echo "make-model: creating $venv with tokenizers and transformers from PyPI (network needed this once)" >&2
  "${PY312:?no Python 3.12 found; set PY312}" -m venv "$venv"
  "$venv/bin/pip" install -q 'tokenizers==0.23.2' 'transformers==5.17.0' || {
    echo "make-model: pip install into $venv failed; it needs PyPI once (no network? run it where there is, then copy $venv here)" >&2
    exit 1
  }
fi
mkdir -p "$dest" "$work"
corpus="$work/corpus.txt"
{ (cd "$REPO" && git ls-files -z '*.ts' '*.md' '*.yaml' '*.sh' | xargs -0 cat)
  (set +o pipefail; find "$REPO/node_modules/" -type f \( -name '*.js' -o -name '*.md' \) -size -200k -print0 | head -z -n 4000 | xargs -0 cat) || true
} > "$corpus"
"$venv/bin/python" "$HERE/make-tokenizer.py" "$corpus" "$work/tok" >&2
cp "$HERE"/gemma3/* "$dest/"
cp "$work/tok/tokenizer.json" "$dest/"
echo "make-model: $dest: $(ls "$dest" | tr '\n' ' ')" >&2
