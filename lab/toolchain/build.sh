#!/usr/bin/env bash
# Offline toolchain for the vLLM lab: builds every tool from source via the Go
# module proxy (no GitHub, no release-binary downloads) into
#   BIN="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}/bin"
# Pinned versions live in versions.env next to this script.
#
# Usage: lab/toolchain/build.sh [TOOL...]     (default: all, in this order)
#   tools: k8s pulumi pulumi-language-nodejs kubernetes-provider command-provider
#          plugins etcd kwok llm-d-inference-sim actionlint k8s-node local-path-provisioner
#          node-packages
#   (plugins = `pulumi plugin install resource kubernetes|command <ver> --file ...` into
#    $PULUMI_HOME/plugins; it is skipped when the identical binary is already there.)
#   command-provider is built from ../shared/third-party/ next to the repository (not served by
#   the Go proxy); without those sources it is skipped with one line that says what needs it
#   (benchmarkOnDeploy, campaign run --via-deploy) and how to get it, and the run still exits 0.
#   k8s-node (kubelet, kube-proxy), local-path-provisioner and node-packages (containerd, runc, the
#   CNI plugins, iptables, busybox-static from Debian's archive) serve the lab's real node (the simulator engine's): when either cannot be had, one line says
#   the real node is unavailable and why, and the run still exits 0. node-packages only checks,
#   unless named (`build.sh node-packages`, as root): then it apt-get installs what is missing.
#
# Idempotent: each tool writes BIN/.NAME.version; when the binary exists and the
# marker matches the pinned version (+RECIPE_REV) the tool is skipped, so a warm
# run takes a second or two. Builds run sequentially under `nice` (2 cores) and
# use the default Go caches (~/go/pkg/mod, ~/.cache/go-build), so a rebuild after
# a version bump only recompiles what changed.
#
# Environment:
#   VLLM_LAB_HOME      cache root (default ~/.cache/vllm-lab); bin/ and src/ below it
#   VLLM_LAB_TOOL_<NAME>  an executable to use instead of building NAME (e.g.
#                      VLLM_LAB_TOOL_ETCD=/usr/bin/etcd); the same rule as common/tools.ts:
#                      override, then BIN, then PATH
#   VLLM_LAB_USE_PATH  auto (default): a non-Pulumi tool (kube-apiserver, etcd,
#                        kwok, ...) already on PATH outside BIN is used as is and
#                        not built. Pulumi CLI/language host/providers are always
#                        built, because the SDK pins their exact versions.
#                      1: also accept pulumi + pulumi-language-nodejs from PATH.
#                      0: ignore PATH, build everything.
#   PULUMI_HOME        honoured by `pulumi plugin install` (default ~/.pulumi)
#   VLLM_LAB_FORCE=1   rebuild even if the version marker matches
#   VLLM_LAB_THIRD_PARTY  where the command provider's sources are (default ../shared/third-party
#                      beside the repository root)
#
# Using the result: export PATH="$BIN:$PATH" PULUMI_SKIP_UPDATE_CHECK=1 and, to make the
# CLI take providers from the plugin cache instead of the ambient pulumi-resource-* in BIN
# (it warns "using pulumi-resource-kubernetes from $PATH" otherwise; both work),
# PULUMI_IGNORE_AMBIENT_PLUGINS=true. The language host is found next to `pulumi`.
# Cold build times per part: docs/toolchain.md.
#
# Only CGO-free static builds (CGO_ENABLED=0, -trimpath, -ldflags "-s -w").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"

LAB_HOME="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}"
BIN="$LAB_HOME/bin"
SRC="$LAB_HOME/src"
USE_PATH="${VLLM_LAB_USE_PATH:-auto}"
FORCE="${VLLM_LAB_FORCE:-0}"
mkdir -p "$BIN" "$SRC"

export CGO_ENABLED=0
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="-buildvcs=false -mod=mod"
export GOBIN="$BIN"
GOBUILD=(nice -n 10 go build -trimpath)
LDFLAGS_BASE="-s -w"

declare -a SUMMARY=()
log() { printf '[toolchain] %s\n' "$*"; }
# Asked only when something is to be built: a warm run, or one that only skips, needs no Go.
need_go() { command -v go >/dev/null || { echo "build.sh: go not found on PATH (needed to build $1)" >&2; return 1; }; }

# marker NAME -> path of the version marker
marker() { printf '%s/.%s.version' "$BIN" "$1"; }
stamp_of() { printf '%s+r%s' "$1" "$RECIPE_REV"; }

# is_current NAME VERSION BINARY...: all binaries exist and marker matches
is_current() {
  local name=$1 ver=$2; shift 2
  [[ "$FORCE" == 1 ]] && return 1
  local b
  for b in "$@"; do [[ -x "$BIN/$b" ]] || return 1; done
  [[ -f "$(marker "$name")" ]] && [[ "$(cat "$(marker "$name")")" == "$(stamp_of "$ver")" ]]
}

# overridden BINARY: set in VLLM_LAB_TOOL_<NAME> (common/tools.ts: override, then BIN, then PATH)?
overridden() {
  local var
  var="VLLM_LAB_TOOL_$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]' | tr -c 'A-Z0-9\n' '_')"
  [[ -n "${!var:-}" && -x "${!var}" ]]
}

# on_path BINARY: found on PATH outside BIN?
on_path() {
  local p
  p="$(command -v "$1" 2>/dev/null)" || return 1
  [[ "$p" != "$BIN/$1" ]] && [[ "$(dirname "$p")" != "$BIN" ]]
}

# run_step NAME VERSION PATHCLASS FUNC BINARY...
#   PATHCLASS: "pulumi" (PATH only with USE_PATH=1), "tool" (PATH unless USE_PATH=0), "none"
run_step() {
  local name=$1 ver=$2 pclass=$3 fn=$4; shift 4
  local bins=("$@")
  if is_current "$name" "$ver" "${bins[@]}"; then
    log "$name $ver: up to date (skip)"
    SUMMARY+=("$name|$ver|cached")
    return 0
  fi
  if [[ ${#bins[@]} -gt 0 ]]; then
    local b over=1
    for b in "${bins[@]}"; do overridden "$b" || over=0; done
    if [[ $over == 1 ]]; then
      log "$name: ${bins[*]} set by VLLM_LAB_TOOL_*, not building"
      SUMMARY+=("$name|override|0")
      return 0
    fi
  fi
  if [[ ${#bins[@]} -gt 0 && "$pclass" != none ]]; then
    local use=0
    if [[ "$pclass" == tool && "$USE_PATH" != 0 ]]; then use=1; fi
    if [[ "$pclass" == pulumi && "$USE_PATH" == 1 ]]; then use=1; fi
    if [[ $use == 1 ]]; then
      local all=1 b
      for b in "${bins[@]}"; do on_path "$b" || all=0; done
      if [[ $all == 1 ]]; then
        log "$name: using ${bins[*]} from PATH ($(command -v "${bins[0]}")), not building"
        SUMMARY+=("$name|PATH|0")
        return 0
      fi
    fi
  fi
  [[ ${#bins[@]} -eq 0 ]] || need_go "$name" || return 1
  log "$name $ver: building/installing ..."
  local t0=$SECONDS
  "$fn" "$ver" || return 1
  local dt=$((SECONDS - t0))
  if [[ ${#bins[@]} -gt 0 ]]; then stamp_of "$ver" > "$(marker "$name")"; fi
  log "$name $ver: done in ${dt}s"
  SUMMARY+=("$name|$ver|$dt")
}

# fresh_wrapper DIR: recreate a throwaway wrapper module dir
fresh_wrapper() { rm -rf "$1"; mkdir -p "$1"; }

# writable_copy MODULE@VERSION DIR: copy module source out of the read-only module cache
writable_copy() {
  local modver=$1 dir=$2 src
  src="$(go mod download -json "$modver" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$src" && -d "$src" ]] || { echo "cannot download $modver" >&2; return 1; }
  rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
  cp -r "$src" "$dir"; chmod -R u+w "$dir"
}

###############################################################################
# 1. Pulumi CLI
build_pulumi() {
  local ver=$1 w="$SRC/pulumi"
  fresh_wrapper "$w"
  cat > "$w/go.mod" <<EOF
module vllmlab.local/pulumi-wrapper

go 1.26.6

require (
	github.com/pulumi/pulumi/pkg/v3 $ver
	github.com/pulumi/pulumi/sdk/v3 $ver
)

tool github.com/pulumi/pulumi/pkg/v3/cmd/pulumi

// copied from pkg/v3 and sdk/v3 go.mod (replaces do not apply to dependencies)
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e

replace golang.org/x/text => golang.org/x/text v0.41.0
EOF
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" \
      -ldflags "$LDFLAGS_BASE -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$ver" \
      -o "$BIN/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
  "$BIN/pulumi" version
}

###############################################################################
# 2. Node.js language host (see versions.env for why it comes from sdk/v3@v3.68.0)
build_language_nodejs() {
  local ver=$1 w="$SRC/pulumi-language-nodejs" pkg=github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs
  fresh_wrapper "$w"
  cat > "$w/go.mod" <<EOF
module vllmlab.local/pulumi-language-nodejs-wrapper

go 1.24

require github.com/pulumi/pulumi/sdk/v3 $ver

tool $pkg
EOF
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" \
      -ldflags "$LDFLAGS_BASE -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$ver" \
      -o "$BIN/pulumi-language-nodejs" "$pkg")
  # The CLI tarball also ships this shim (used by pulumi.dynamic.Resource providers).
  local sdkdir
  sdkdir="$(go mod download -json "github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
  install -m 0755 "$sdkdir/nodejs/dist/pulumi-resource-pulumi-nodejs" "$BIN/pulumi-resource-pulumi-nodejs"
}

###############################################################################
# 3. Kubernetes provider: module source copied out of the module cache, schema-embed.json
#    generated by the package's own generate.go (go:generate), version stamped.
build_kubernetes_provider() {
  local ver=$1 w="$SRC/pulumi-kubernetes-provider"
  writable_copy "github.com/pulumi/pulumi-kubernetes/provider/v4@$KUBERNETES_PROVIDER_MODULE_VERSION" "$w"
  (
    cd "$w"
    # upstream replaces sdk/v4 with ../sdk (not part of the module zip)
    go mod edit -replace "github.com/pulumi/pulumi-kubernetes/sdk/v4=github.com/pulumi/pulumi-kubernetes/sdk/v4@v$ver"
    (cd cmd/pulumi-resource-kubernetes && VERSION="$ver" go run ./generate.go)
    "${GOBUILD[@]}" -ldflags "$LDFLAGS_BASE -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$ver" \
      -o "$BIN/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
  )
}

###############################################################################
# 4. Command provider (@pulumi/command's plugin). The Go proxy refuses its module and the
#    pulumi-go-provider it requires (403), so it is built from their public sources in
#    ../shared/third-party/ next to the repository (its README), copied to a scratch directory
#    (never written in place); everything else comes from the proxy.
third_party_dir() {
  local d="${VLLM_LAB_THIRD_PARTY:-$HERE/../../../shared/third-party}"
  [[ -d "$d/pulumi-command-$COMMAND_PROVIDER_VERSION/provider" && -d "$d/pulumi-go-provider-$COMMAND_GO_PROVIDER_VERSION" ]] || return 1
  (cd "$d" && pwd)
}
# The one line said when the plugin is neither built nor buildable here (once per run), unless
# the plugin cache already has it (Pulumi downloads it there when it has internet).
COMMAND_SKIP_SAID=0
say_command_skipped() {
  ((COMMAND_SKIP_SAID)) && return 0
  COMMAND_SKIP_SAID=1
  local cached="${PULUMI_HOME:-$HOME/.pulumi}/plugins/resource-command-v$COMMAND_PROVIDER_VERSION"
  if [[ -x "$cached/pulumi-resource-command" ]]; then
    log "pulumi-resource-command $COMMAND_PROVIDER_VERSION: not built (no sources), the plugin cache has it: $cached"
    return 0
  fi
  log "pulumi-resource-command $COMMAND_PROVIDER_VERSION: skipped, no sources in" \
    "${VLLM_LAB_THIRD_PARTY:-$(cd "$HERE/../../.." && pwd)/shared/third-party}" \
    "(pulumi-command-$COMMAND_PROVIDER_VERSION/provider, pulumi-go-provider-$COMMAND_GO_PROVIDER_VERSION);" \
    "only benchmarkOnDeploy and campaign run --via-deploy need it: with internet Pulumi installs the plugin itself," \
    "offline point VLLM_LAB_THIRD_PARTY at a folder with those sources and run: bash lab/toolchain/build.sh command-provider plugins"
}
build_command_provider() {
  local ver=$1 w="$SRC/pulumi-command-provider" tp gp="pulumi-go-provider-$COMMAND_GO_PROVIDER_VERSION"
  tp="$(third_party_dir)"
  rm -rf "$w"; mkdir -p "$w"
  cp -r "$tp/pulumi-command-$ver" "$tp/$gp" "$w/"; chmod -R u+w "$w"
  (
    cd "$w/pulumi-command-$ver/provider"
    go mod edit -replace "github.com/pulumi/pulumi-go-provider=../../$gp"
    "${GOBUILD[@]}" -ldflags "$LDFLAGS_BASE -X github.com/pulumi/pulumi-command/provider/pkg/version.Version=$ver" \
      -o "$BIN/pulumi-resource-command" ./cmd/pulumi-resource-command
  )
}

###############################################################################
# 5. Install the providers into the Pulumi plugin cache ($PULUMI_HOME/plugins, default ~/.pulumi)
install_plugin() {
  local name=$1 ver=$2 file="$BIN/pulumi-resource-$1"
  local dir="${PULUMI_HOME:-$HOME/.pulumi}/plugins/resource-$name-v$ver"
  if [[ ! -x "$file" ]]; then
    if [[ "$name" == command ]] && ! third_party_dir >/dev/null; then say_command_skipped; else log "plugin $name: $file missing, not installing"; fi
    return 0
  fi
  if [[ "$FORCE" != 1 && -f "$dir/pulumi-resource-$name" ]] && cmp -s "$file" "$dir/pulumi-resource-$name"; then
    log "plugin resource $name v$ver: already installed in $dir"
    return 0
  fi
  "$PULUMI" plugin install resource "$name" "$ver" --file "$file" --reinstall
}
install_plugins() {
  PULUMI="${VLLM_LAB_TOOL_PULUMI:-$BIN/pulumi}"; [[ -x "$PULUMI" ]] || PULUMI="$(command -v pulumi || echo pulumi)"
  install_plugin kubernetes "$KUBERNETES_PROVIDER_VERSION"
  install_plugin command "$COMMAND_PROVIDER_VERSION"
}

###############################################################################
# 6. Kubernetes control plane + kubectl (one go build for all four -> shared compilation)
# k8s_wrapper DIR VERSION CMD...: a throwaway module whose go.mod requires k8s.io/kubernetes VERSION
# with its staging repos, and the -ldflags that stamp VERSION into what it builds (printed).
k8s_wrapper() {
  local w=$1 ver=$2 m c; shift 2
  fresh_wrapper "$w"
  {
    printf 'module vllmlab.local/k8s-wrapper\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\n' "$ver"
    printf 'tool (\n'
    for c in "$@"; do printf '\tk8s.io/kubernetes/cmd/%s\n' "$c"; done
    printf ')\n\n'
    printf '// k8s.io/kubernetes requires its staging repos at v0.0.0 (local replaces upstream)\nreplace (\n'
    for m in $K8S_STAGING_MODULES; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$K8S_STAGING_VERSION"; done
    printf ')\n'
  } > "$w/go.mod"
  local major minor
  major="${ver#v}"; major="${major%%.*}"
  minor="${ver#v*.}"; minor="${minor%%.*}"
  local vpkg=k8s.io/component-base/version cpkg=k8s.io/client-go/pkg/version
  local ld="$LDFLAGS_BASE" p
  for p in $vpkg $cpkg; do
    ld+=" -X $p.gitVersion=$ver -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$ld"
}

build_k8s() {
  local ver=$1 w="$SRC/kubernetes" ld
  ld="$(k8s_wrapper "$w" "$ver" kube-apiserver kube-controller-manager kube-scheduler kubectl)"
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" -ldflags "$ld" -o "$BIN/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler \
      k8s.io/kubernetes/cmd/kubectl)
  "$BIN/kube-apiserver" --version
}

###############################################################################
# 6b. The real node's kubelet and kube-proxy: the same release and wrapper recipe as step 6, a
#     step of its own so the control plane's marker (and binaries) stay as they are.
build_k8s_node() {
  local ver=$1 w="$SRC/kubernetes-node" ld
  ld="$(k8s_wrapper "$w" "$ver" kubelet kube-proxy)" &&
    (cd "$w" && go mod tidy && "${GOBUILD[@]}" -ldflags "$ld" -o "$BIN/" \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy) &&
    "$BIN/kubelet" --version
}

###############################################################################
# 6c. rancher's local-path-provisioner for the real node's claims (the provisioner k3s ships): a
#     wrapper module building its main package; optional like k8s-node.
build_local_path_provisioner() {
  local ver=$1 w="$SRC/local-path-provisioner" pkg=github.com/rancher/local-path-provisioner
  fresh_wrapper "$w"
  cat > "$w/go.mod" <<EOF
module vllmlab.local/local-path-provisioner-wrapper

go 1.25.5

require $pkg $ver

tool $pkg
EOF
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" -ldflags "$LDFLAGS_BASE" -o "$BIN/local-path-provisioner" "$pkg") &&
    "$BIN/local-path-provisioner" --version
}

###############################################################################
# 7. etcd: 3-line main around etcdmain (the top-level go.etcd.io/etcd/v3 module has local replaces)
build_etcd() {
  local ver=$1 w="$SRC/etcd"
  fresh_wrapper "$w"
  cat > "$w/go.mod" <<EOF
module vllmlab.local/etcd-wrapper

go 1.24

require go.etcd.io/etcd/server/v3 $ver
EOF
  cat > "$w/main.go" <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" -ldflags "$LDFLAGS_BASE" -o "$BIN/etcd" .)
  "$BIN/etcd" --version | sed -n 1p
}

###############################################################################
# 8. kwok + kwokctl (plain go install; kwokctl's default kube version = ours)
build_kwok() {
  local ver=$1 kv="${K8S_VERSION#v}"
  (cd "$SRC" && nice -n 10 go install -trimpath \
      -ldflags "$LDFLAGS_BASE -X sigs.k8s.io/kwok/pkg/consts.Version=${ver#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=$kv" \
      "sigs.k8s.io/kwok/cmd/kwok@$ver" "sigs.k8s.io/kwok/cmd/kwokctl@$ver")
  "$BIN/kwokctl" --version
}

###############################################################################
# 9. llm-d inference simulator (pure Go; run it with --force-dummy-tokenizer offline)
build_llmd_sim() {
  # wrapper module instead of `go install pkg@ver`: go install also fetches @v/list to check
  # deprecations, which the module proxy here refuses (403) for this module.
  local ver=$1 w="$SRC/llm-d-inference-sim" pkg=github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim
  fresh_wrapper "$w"
  cat > "$w/go.mod" <<EOF
module vllmlab.local/llm-d-inference-sim-wrapper

go 1.25.7

require github.com/llm-d/llm-d-inference-sim $ver

tool $pkg
EOF
  (cd "$w" && go mod tidy && "${GOBUILD[@]}" -ldflags "$LDFLAGS_BASE" -o "$BIN/llm-d-inference-sim" "$pkg")
  "$BIN/llm-d-inference-sim" --help >/dev/null 2>&1 || true
}

###############################################################################
# 10. actionlint (plain go install; lints .github/workflows in .ci/run)
build_actionlint() {
  local ver=$1
  (cd "$SRC" && nice -n 10 go install -trimpath -ldflags "$LDFLAGS_BASE" "github.com/rhysd/actionlint/cmd/actionlint@$ver")
  "$BIN/actionlint" -version | sed -n 1p
}

###############################################################################
# 11. The real node's runtime from Debian's archive (apt-get: seconds, where a Go build of
#     containerd, runc and the plugins would take minutes): containerd (its ctr and runc shim),
#     runc, the CNI plugins (in /usr/lib/cni), iptables and a static busybox (the local-path helper
#     image's), at NODE_DEBIAN_PACKAGES' versions.
#     Nothing to do when they are already installed; without root or apt-get, one line says so.
NODE_RUNTIME_BINARIES=(containerd containerd-shim-runc-v2 ctr runc iptables iptables-save iptables-restore busybox gcc)
CNI_PLUGINS=(bridge host-local loopback portmap)
node_runtime_missing() {
  local b missing=()
  for b in "${NODE_RUNTIME_BINARIES[@]}"; do command -v "$b" >/dev/null || missing+=("$b"); done
  for b in "${CNI_PLUGINS[@]}"; do [[ -x "/usr/lib/cni/$b" || -x "/opt/cni/bin/$b" ]] || missing+=("cni/$b"); done
  # The pause image is a static C program (lab/images): gcc and the static libc.
  command -v gcc >/dev/null && [[ "$(gcc -print-file-name=libc.a)" == /* ]] || missing+=("libc.a")
  printf '%s' "${missing[*]}"
}
install_node_packages() {
  local missing
  missing="$(node_runtime_missing)"
  if [[ -z "$missing" ]]; then
    log "node-packages: containerd $(containerd --version | awk '{print $3}'), $(runc --version | sed -n 1p), CNI plugins and iptables present"
    SUMMARY+=("node-packages|present|0")
    return 0
  fi
  # System packages only when asked by name (`build.sh node-packages`, as .ci/run, `npm test`'s
  # pretest:integration and the demo do), never as a side effect of building everything; and only as root with apt-get.
  if [[ "$NAMED" != 1 || "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    log "node-packages: real node unavailable (the lab's simulator runs on it): missing $missing; as root on Debian bookworm: bash lab/toolchain/build.sh node-packages (apt-get install $NODE_DEBIAN_PACKAGES)"
    SUMMARY+=("node-packages|missing|skipped")
    return 0
  fi
  local t0=$SECONDS p unpinned=()
  for p in $NODE_DEBIAN_PACKAGES; do unpinned+=("${p%%=*}"); done
  log "node-packages: apt-get install $NODE_DEBIAN_PACKAGES ..."
  # The pinned versions first; when the archive has moved on (a point release), its current ones.
  # shellcheck disable=SC2086
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $NODE_DEBIAN_PACKAGES >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $NODE_DEBIAN_PACKAGES >/dev/null; } ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${unpinned[@]}" >/dev/null; then
    missing="$(node_runtime_missing)"
  fi
  if [[ -n "$missing" ]]; then
    log "node-packages: real node unavailable (the lab's simulator runs on it): apt-get could not install $NODE_DEBIAN_PACKAGES (still missing: $missing)"
    SUMMARY+=("node-packages|failed|$((SECONDS - t0))")
    return 0
  fi
  log "node-packages: installed containerd $(containerd --version | awk '{print $3}'), $(runc --version | sed -n 1p) in $((SECONDS - t0))s"
  SUMMARY+=("node-packages|apt|$((SECONDS - t0))")
}

###############################################################################
ALL_TOOLS=(k8s pulumi pulumi-language-nodejs kubernetes-provider command-provider plugins etcd kwok llm-d-inference-sim actionlint k8s-node local-path-provisioner node-packages)
TOOLS=("$@")
NAMED=1
[[ ${#TOOLS[@]} -eq 0 ]] && TOOLS=("${ALL_TOOLS[@]}") && NAMED=0

T_ALL=$SECONDS
for t in "${TOOLS[@]}"; do
  case "$t" in
    pulumi) run_step pulumi "$PULUMI_VERSION" pulumi build_pulumi pulumi ;;
    pulumi-language-nodejs) run_step pulumi-language-nodejs "$PULUMI_LANGUAGE_NODEJS_SDK_VERSION" pulumi build_language_nodejs pulumi-language-nodejs pulumi-resource-pulumi-nodejs ;;
    kubernetes-provider) run_step pulumi-resource-kubernetes "$KUBERNETES_PROVIDER_VERSION" none build_kubernetes_provider pulumi-resource-kubernetes ;;
    command-provider)
      if overridden pulumi-resource-command || is_current pulumi-resource-command "$COMMAND_PROVIDER_VERSION" pulumi-resource-command || third_party_dir >/dev/null; then
        run_step pulumi-resource-command "$COMMAND_PROVIDER_VERSION" none build_command_provider pulumi-resource-command
      else
        # Optional: the lab, the demo and most tests run without it (the line says what needs it).
        say_command_skipped
        SUMMARY+=("pulumi-resource-command|$COMMAND_PROVIDER_VERSION|skipped")
      fi ;;
    plugins) run_step plugin-install "kubernetes-$KUBERNETES_PROVIDER_VERSION+command-$COMMAND_PROVIDER_VERSION" none install_plugins ;;
    k8s) run_step kubernetes "$K8S_VERSION" tool build_k8s kube-apiserver kube-controller-manager kube-scheduler kubectl ;;
    etcd) run_step etcd "$ETCD_VERSION" tool build_etcd etcd ;;
    kwok) run_step kwok "$KWOK_VERSION" tool build_kwok kwok kwokctl ;;
    llm-d-inference-sim) run_step llm-d-inference-sim "$LLMD_SIM_VERSION" tool build_llmd_sim llm-d-inference-sim ;;
    actionlint) run_step actionlint "$ACTIONLINT_VERSION" tool build_actionlint actionlint ;;
    k8s-node)
      # Only the real node needs it; a failed build leaves the rest of the toolchain as it is.
      run_step kubernetes-node "$K8S_VERSION" tool build_k8s_node kubelet kube-proxy || {
        log "kubernetes-node: build failed; real node unavailable (the lab's simulator runs on it): bash lab/toolchain/build.sh k8s-node shows why"
        SUMMARY+=("kubernetes-node|$K8S_VERSION|failed")
      } ;;
    local-path-provisioner)
      # Only the real node needs it (its claims).
      run_step local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION" tool build_local_path_provisioner local-path-provisioner || {
        log "local-path-provisioner: build failed; real node unavailable (the lab's simulator runs on it): bash lab/toolchain/build.sh local-path-provisioner shows why"
        SUMMARY+=("local-path-provisioner|$LOCAL_PATH_PROVISIONER_VERSION|failed")
      } ;;
    node-packages) install_node_packages ;;
    *) echo "unknown tool: $t (known: ${ALL_TOOLS[*]})" >&2; exit 2 ;;
  esac
done

echo
printf '%-28s %-22s %s\n' TOOL VERSION SECONDS
for row in "${SUMMARY[@]}"; do
  IFS='|' read -r n v s <<<"$row"
  printf '%-28s %-22s %s\n' "$n" "$v" "$s"
done
echo "total: $((SECONDS - T_ALL))s   BIN=$BIN"
