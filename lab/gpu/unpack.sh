#!/usr/bin/env bash
# Runs ON the device, from the repo root: extracts every component of the payload (lab/gpu/pack.sh)
# whose pieces have all arrived under .gpu/p*/, in parallel, into $GPU_ROOT (default /tmp/gpu).
# Idempotent and incremental: call it after each device call that brought a part; components
# already extracted are skipped, incomplete ones wait for their other pieces.
#   bash lab/gpu/unpack.sh [PAYLOAD_DIR]      (default: .gpu)
# Then: source lab/gpu/env.sh
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="${1:-$REPO/.gpu}"
GPU_ROOT="${GPU_ROOT:-/tmp/gpu}"
mkdir -p "$GPU_ROOT"
say() { printf '[unpack %3ss] %s\n' "$SECONDS" "$*" >&2; }

# Pieces of a component that is not complete yet are copied to $GPU_ROOT/incoming, so a later call
# finds them even if the earlier part's folder is gone from the checkout there.
INCOMING="$GPU_ROOT/incoming"
mkdir -p "$INCOMING"
for m in "$SRC"/p*/MANIFEST; do [[ -f "$m" ]] && cp "$m" "$INCOMING/MANIFEST"; done
manifest="$INCOMING/MANIFEST"
[[ -f "$manifest" ]] || { echo "unpack: no $SRC/p*/MANIFEST (carry .gpu/pN)" >&2; exit 1; }

# decompressor: xz (multithreaded where this xz can), else Python's lzma
if command -v xz >/dev/null; then unxz_() { xz -dc -T0; }; else
  unxz_() { python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer, 1<<20)'; }
fi
dest_of() { case $1 in py) echo "$GPU_ROOT/site" ;; bin) echo "$GPU_ROOT/bin" ;; node) echo "$GPU_ROOT" ;; model) echo "$GPU_ROOT/models" ;; *) echo "$GPU_ROOT/$1" ;; esac; }

pids=() names=() pending=() rc_sha=0
while read -r comp size _sha; do
  [[ -n "$comp" ]] || continue
  if [[ -f "$GPU_ROOT/.done-$comp" ]]; then say "$comp: already extracted"; continue; fi
  # one file per piece index, from this call's parts or from $INCOMING
  mapfile -t pieces < <(ls "$SRC"/p*/"$comp".tar.xz.[0-9]* "$INCOMING/$comp".tar.xz.[0-9]* 2>/dev/null \
                        | awk -F. '!seen[$NF]++ {print $NF" "$0}' | sort -n | cut -d' ' -f2-)
  have=0; for p in "${pieces[@]}"; do have=$((have + $(stat -c %s "$p"))); done
  if ((have != size)); then
    for p in "${pieces[@]}"; do [[ "$p" == "$INCOMING"/* ]] || cp "$p" "$INCOMING/"; done
    say "$comp: $have of $size bytes here (kept in $INCOMING), waiting for the other part(s)"; pending+=("$comp"); continue
  fi
  if [[ "$(cat "${pieces[@]}" | sha256sum | cut -d' ' -f1)" != "$_sha" ]]; then
    say "$comp: sha256 mismatch (pieces of two different packs?); not extracted"; rm -f "$INCOMING/$comp".tar.xz.*; rc_sha=1; continue
  fi
  dest="$(dest_of "$comp")"; mkdir -p "$dest"
  say "$comp: extracting ${#pieces[@]} piece(s), $((size / 1048576)) MiB -> $dest"
  ( set -o pipefail; cat "${pieces[@]}" | unxz_ | tar -x -C "$dest" && touch "$GPU_ROOT/.done-$comp" && rm -f "$INCOMING/$comp".tar.xz.* ) </dev/null &
  pids+=($!); names+=("$comp")
done < "$manifest"

rc=${rc_sha:-0}
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then say "${names[$i]}: done"; else say "${names[$i]}: FAILED"; rc=1; fi
done

# Post-steps, each once its component is there.
mkdir -p "$GPU_ROOT/shim"
cp "$REPO/lab/gpu/ip" "$GPU_ROOT/shim/ip" && chmod +x "$GPU_ROOT/shim/ip"
if [[ -f "$GPU_ROOT/.done-node" ]]; then
  # The repo's node_modules (ignored, so never carried) points at the payload's.
  if [[ ! -e "$REPO/node_modules" || -L "$REPO/node_modules" ]]; then ln -sfn "$GPU_ROOT/node_modules" "$REPO/node_modules"; fi
fi
if [[ -f "$GPU_ROOT/.done-bin" && ! -e "$GPU_ROOT/bin/llm-d-inference-sim" ]]; then
  # Not carried by default (pack.sh WITH_SIM=1 carries it); lab/controller.ts looks it up at start.
  printf '#!/bin/sh\necho "llm-d-inference-sim was not carried (lab/gpu/pack.sh WITH_SIM=1)" >&2\nexit 1\n' > "$GPU_ROOT/bin/llm-d-inference-sim"
  chmod +x "$GPU_ROOT/bin/llm-d-inference-sim"
fi
if [[ -f "$GPU_ROOT/.done-bin" && ! -f "$GPU_ROOT/.done-plugins" ]]; then
  # Same as lab/toolchain/build.sh's plugins step: the provider into $PULUMI_HOME/plugins.
  # shellcheck source=../toolchain/versions.env
  ( source "$REPO/lab/toolchain/versions.env"
    export PULUMI_HOME="$GPU_ROOT/pulumi-home" PULUMI_SKIP_UPDATE_CHECK=true
    for prov in kubernetes:$KUBERNETES_PROVIDER_VERSION command:$COMMAND_PROVIDER_VERSION; do
      name=${prov%%:*} ver=${prov#*:}
      [[ -x "$GPU_ROOT/bin/pulumi-resource-$name" ]] || continue
      "$GPU_ROOT/bin/pulumi" plugin install resource "$name" "$ver" --file "$GPU_ROOT/bin/pulumi-resource-$name" --reinstall >&2 || exit 1
    done ) && touch "$GPU_ROOT/.done-plugins" && say "plugins installed into $GPU_ROOT/pulumi-home" || { say "plugin install FAILED"; rc=1; }
fi
[[ ${#pending[@]} -eq 0 ]] || say "still waiting for: ${pending[*]}"
[[ ${#pending[@]} -eq 0 && $rc -eq 0 ]] && say "all components in $GPU_ROOT; next: source lab/gpu/env.sh"
exit $rc
