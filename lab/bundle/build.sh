#!/usr/bin/env bash
# Builds the offline bundle (docs/offline-bundle.md): ONE archive with what an air-gapped GPU host
# needs to run the lab with the real engine, plus its .sha256. Runs where the checkout is, with the
# toolchain built (lab/toolchain/build.sh) and, for --with-vllm, network to PyPI once (cached).
#
#   npm run bundle -- [--with-vllm] [--with-model DIR] [--no-sim] [--with-kubectl] [--keep-sass ARCH|all]
#                     [--xz-level 0-9] [--out DIR]
#
# Archive members (extracted side by side into the host's DIR by unpack.sh):
#   unpack.sh            first member, so `tar -xJf B --occurrence=1 unpack.sh` is instant
#   MANIFEST             commit, versions, components with their sizes and sha256s
#   SHA256SUMS           every file's sha256 (unpack.sh checks them after extracting)
#   repo/                the checkout: shallow .git at HEAD + the working tree's files + trimmed node_modules
#   node/bin/node        the Node that runs here (24)
#   bin/                 the toolchain binaries the lab executes (VLLM_LAB_HOME=DIR -> DIR/bin)
#   python/              --with-vllm: the trimmed vLLM 0.24.0 wheel tree + carried wheels (PYTHONPATH)
#   models/NAME/         --with-model DIR (lab/bundle/make-model.sh builds the gemma3-like one)
# Each component is its own xz stream of a tar without the end-of-archive blocks; the streams are
# concatenated (one valid .tar.xz), so the vLLM tree is compressed once and reused from the cache.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
LAB_HOME="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}"
WORK="$LAB_HOME/bundle"
OUT_DIR="$REPO"
WITH_VLLM=0 MODEL_DIR="" WITH_SIM=1 WITH_KUBECTL=0 KEEP_SASS=90 XZ_LEVEL=9
die() { echo "bundle: $*" >&2; exit 2; }
log() { printf '[bundle %4ss] %s\n' "$SECONDS" "$*" >&2; }
while (($#)); do
  case $1 in
    --with-vllm) WITH_VLLM=1 ;;
    --with-model) [[ -d "${2:-}" && -f "${2:-}/config.json" ]] || die "--with-model: '${2:-}' is not a model directory (needs config.json)"
      MODEL_DIR="$(cd "$2" && pwd)"; shift ;;
    --no-sim) WITH_SIM=0 ;;
    --with-kubectl) WITH_KUBECTL=1 ;;
    --keep-sass) [[ "${2:-}" =~ ^([0-9]{2,3}|all)$ ]] || die "--keep-sass: '${2:-}' is not a GPU architecture like 90 (Hopper) or 'all'"
      KEEP_SASS=$2; shift ;;
    --xz-level) [[ "${2:-}" =~ ^[0-9]$ ]] || die "--xz-level: '${2:-}' is not 0-9"; XZ_LEVEL=$2; shift ;;
    --out) [[ -n "${2:-}" ]] || die "--out needs a directory"; mkdir -p "$2"; OUT_DIR="$(cd "$2" && pwd)"; shift ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown option '$1' (allowed: --with-vllm --with-model DIR --no-sim --with-kubectl --keep-sass ARCH|all --xz-level N --out DIR)" ;;
  esac
  shift
done
XZ=(xz "-$XZ_LEVEL" -T0)
command -v xz >/dev/null || die "xz is needed to build the bundle"
NODE="$(command -v node)"
[[ "$("$NODE" -p 'process.versions.node.split(".")[0]')" -ge 22 ]] || die "node $("$NODE" --version) is too old; run: source lab/setup-node.sh"
[[ -d "$REPO/node_modules/@pulumi/pulumi" ]] || die "$REPO/node_modules is missing: run npm ci --ignore-scripts first (the bundle carries it)"

COMMIT="$(git -C "$REPO" rev-parse HEAD)"
SHORT="$(git -C "$REPO" rev-parse --short HEAD)"
DIRTY=""; [[ -z "$(git -C "$REPO" status --porcelain)" ]] || DIRTY="-dirty"
NAME="vllm-tuner-bundle-$SHORT$DIRTY"
mkdir -p "$WORK"
STAGE="$(mktemp -d "$WORK/stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
STREAMS="$STAGE/.streams"; mkdir -p "$STREAMS"
: > "$STAGE/SHA256SUMS"; : > "$STREAMS/components"

# pack_tree COMPONENT PREFIX: PREFIX.sums (every file's sha256), PREFIX.xz (its tar without the end
# blocks, one xz stream), PREFIX.size ("files bytes"); the staged tree is removed after.
pack_tree() {
  local c=$1 p=$2
  (cd "$STAGE" && find "$c" -type f -print0 | sort -z | xargs -0 -r sha256sum) > "$p.sums"
  echo "$(wc -l < "$p.sums") $(du -sb "$STAGE/$c" | cut -f1)" > "$p.size"
  log "$c: $(cut -d' ' -f1 "$p.size") files, $(($(cut -d' ' -f2 "$p.size") / 1048576)) MiB; compressing (xz -$XZ_LEVEL)"
  tar -b1 --sort=name --owner=0 --group=0 -C "$STAGE" -cf - "$c" | head -c -1024 | "${XZ[@]}" > "$p.xz.tmp"
  mv "$p.xz.tmp" "$p.xz"
  rm -rf "${STAGE:?}/$c"
}
# add COMPONENT PREFIX: into SHA256SUMS, the MANIFEST's table and the archive's streams.
add() {
  local c=$1 p=$2 files bytes
  read -r files bytes < "$p.size"
  cat "$p.sums" >> "$STAGE/SHA256SUMS"
  [[ "$p" == "$STREAMS/$c" ]] || ln -sf "$p.xz" "$STREAMS/$c.xz"
  printf '  %-7s %7s files %11s bytes %11s xz-bytes  xz-sha256 %s\n' "$c" "$files" "$bytes" \
    "$(stat -L -c %s "$STREAMS/$c.xz")" "$(sha256sum < "$STREAMS/$c.xz" | cut -d' ' -f1)" >> "$STREAMS/components"
}
stream() { pack_tree "$1" "$STREAMS/$1" && add "$1" "$STREAMS/$1"; }

# ---------------------------------------------------------------- repo
log "repo: $COMMIT$DIRTY"
git init -q "$STAGE/repo"
git -C "$STAGE/repo" fetch -q --depth 1 "$REPO" "$COMMIT" 2>/dev/null || git -C "$STAGE/repo" fetch -q --depth 1 "$REPO" HEAD
git -C "$STAGE/repo" checkout -q -B "$(git -C "$REPO" branch --show-current | grep . || echo bundle)" FETCH_HEAD
# The working tree as it is (uncommitted and untracked files too; MANIFEST says dirty), minus ignored.
(cd "$REPO" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -x -C "$STAGE/repo"
(cd "$REPO" && git ls-files -z -d) | (cd "$STAGE/repo" && xargs -0 -r rm -f)
bash "$HERE/trim-node-modules.sh" "$REPO/node_modules" "$STAGE/repo/node_modules"
# The Pulumi program's build for these sources (program.js): the trimmed tree has no compiler to build it.
built="$(cd "$REPO" && node program.js)" || die "building the Pulumi program (node program.js) failed"
mkdir -p "$STAGE/repo/.program" && cp -a "$REPO/$(dirname "$built")" "$STAGE/repo/.program/"
stream repo

# ---------------------------------------------------------------- node
# Node and npm (the `npm run` scripts are the documented commands; npm ships apart from the Node binary).
NPM_CLI="$(readlink -f "$(command -v npm)")"
[[ "$NPM_CLI" == */npm/bin/npm-cli.js ]] || die "npm at $(command -v npm) is not an npm package's bin/npm-cli.js"
mkdir -p "$STAGE/node/bin" "$STAGE/node/lib/node_modules"
cp "$(readlink -f "$NODE")" "$STAGE/node/bin/node"
cp -a "$(dirname "$(dirname "$NPM_CLI")")" "$STAGE/node/lib/node_modules/npm"
for t in npm npx; do
  printf '#!/bin/sh\nd="$(dirname "$(readlink -f "$0")")"\nexec "$d/node" "$d/../lib/node_modules/npm/bin/%s-cli.js" "$@"\n' "$t" > "$STAGE/node/bin/$t"
  chmod +x "$STAGE/node/bin/$t"
done
NODE_VERSION="$("$NODE" --version), npm $("$NODE" "$NPM_CLI" --version)"
stream node

# ---------------------------------------------------------------- bin
# What the lab executes (lab/lifecycle/cluster.ts, common/tools.ts, campaign/pulumi.ts): kwokctl + kwok, the
# control plane, etcd, the Pulumi CLI + language host + providers (unpack.sh installs the providers
# into DIR/pulumi-home), the Node.js dynamic provider host (`up`'s rollout wait, components/rollout-ready.ts;
# the CLI finds it next to itself), llm-d-inference-sim for the simulator engine.
TOOLS=(kwokctl kwok kube-apiserver kube-controller-manager kube-scheduler etcd pulumi pulumi-language-nodejs pulumi-resource-pulumi-nodejs pulumi-resource-kubernetes)
((WITH_SIM)) && TOOLS+=(llm-d-inference-sim)
((WITH_KUBECTL)) && TOOLS+=(kubectl)
[[ -x "$LAB_HOME/bin/pulumi-resource-command" ]] && TOOLS+=(pulumi-resource-command)
mkdir -p "$STAGE/bin"
for t in "${TOOLS[@]}"; do
  [[ -x "$LAB_HOME/bin/$t" ]] || die "$LAB_HOME/bin/$t is missing (npm run toolchain)"
  cp "$LAB_HOME/bin/$t" "$STAGE/bin/"
done
cp "$LAB_HOME"/bin/.*.version "$STAGE/bin/" 2>/dev/null || true
if ((!WITH_SIM)); then
  # lab/process-engine/controller.ts looks the simulator up at start even with --engine vllm: a stub that says why.
  printf '#!/bin/sh\necho "llm-d-inference-sim is not in this bundle (built with --no-sim)" >&2\nexit 1\n' > "$STAGE/bin/llm-d-inference-sim"
  chmod +x "$STAGE/bin/llm-d-inference-sim"
fi
stream bin

# ---------------------------------------------------------------- python (cached)
VLLM_LINE="not included (--with-vllm)"
if ((WITH_VLLM)); then
  key="$WORK/vllm-0.24.0-sass$KEEP_SASS-xz$XZ_LEVEL-$(sha256sum < "$HERE/vllm-wheels.txt" | cut -c1-12)"
  if [[ -s "$key.xz" ]]; then log "python: from the cache ($key.xz)"; else
    bash "$HERE/python-tree.sh" "$WORK/wheels" "$STAGE/python" "$KEEP_SASS"
    pack_tree python "$key"
  fi
  add python "$key"
  VLLM_LINE="0.24.0 wheel, trimmed, + $(grep -c . "$HERE/vllm-wheels.txt") carried wheels (lab/bundle/vllm-wheels.txt); SASS kept: $KEEP_SASS"
fi

# ---------------------------------------------------------------- model
MODEL_LINE="not included (--with-model DIR)"
if [[ -n "$MODEL_DIR" ]]; then
  mkdir -p "$STAGE/models" && cp -rL "$MODEL_DIR" "$STAGE/models/$(basename "$MODEL_DIR")"
  MODEL_LINE="models/$(basename "$MODEL_DIR") ($(cd "$MODEL_DIR" && ls | tr '\n' ' '))"
  stream models
fi

# ---------------------------------------------------------------- head: unpack.sh, MANIFEST, SHA256SUMS
# shellcheck source=../toolchain/versions.env
source "$REPO/lab/toolchain/versions.env"
{
  echo "vllm-tuner offline bundle $NAME"
  echo "commit:     $COMMIT${DIRTY:+ (working tree had uncommitted changes; they are included)}"
  echo "built:      $(date -u +%FT%TZ) on $(uname -m)"
  echo "node:       $NODE_VERSION"
  echo "toolchain:  pulumi $PULUMI_VERSION, kubernetes provider $KUBERNETES_PROVIDER_VERSION, kubernetes $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION, llm-d-inference-sim $( ((WITH_SIM)) && echo "$LLMD_SIM_VERSION" || echo 'not included (stub)')"
  echo "bin:        ${TOOLS[*]}"
  echo "vllm:       $VLLM_LINE"
  echo "model:      $MODEL_LINE"
  echo "components (each an xz stream of the archive, in this order after the head):"
  cat "$STREAMS/components"
} > "$STAGE/MANIFEST"
cp "$HERE/unpack.sh" "$STAGE/unpack.sh"
tar -b1 --owner=0 --group=0 -C "$STAGE" -cf - unpack.sh MANIFEST SHA256SUMS | head -c -1024 | "${XZ[@]}" > "$STREAMS/head.xz"
head -c 1024 /dev/zero | xz -0 > "$STREAMS/end.xz"

ARCHIVE="$OUT_DIR/$NAME.tar.xz"
order=(head repo node bin); ((WITH_VLLM)) && order+=(python); [[ -n "$MODEL_DIR" ]] && order+=(models)
for c in "${order[@]}" end; do cat "$STREAMS/$c.xz"; done > "$ARCHIVE.tmp"
mv "$ARCHIVE.tmp" "$ARCHIVE"
(cd "$OUT_DIR" && sha256sum "$NAME.tar.xz" > "$NAME.tar.xz.sha256")
cat "$STAGE/MANIFEST" >&2
log "wrote $ARCHIVE ($(stat -c %s "$ARCHIVE") bytes) and $NAME.tar.xz.sha256"
echo "$ARCHIVE"
