#!/usr/bin/env bash
# Unpacks and checks an offline bundle (lab/bundle/build.sh) on the GPU host; needs bash, coreutils,
# tar and xz (or Python 3 for the decompression), no Node and no network:
#   tar -xJf vllm-tuner-bundle-X.tar.xz --occurrence=1 unpack.sh && bash unpack.sh vllm-tuner-bundle-X.tar.xz DIR
# 1. checks the archive against ARCHIVE.sha256 (the file build.sh wrote beside it);
# 2. extracts it into DIR and checks every file against DIR/SHA256SUMS;
# 3. installs the Pulumi providers from DIR/bin into DIR/pulumi-home, adds the `ip` shim where the
#    host has no iproute2, and with a third argument CHECKOUT links CHECKOUT/node_modules to the
#    bundle's (for a checkout of the same commit kept elsewhere);
# 4. writes DIR/env.sh, runs the smoke check (lab/bundle/smoke.sh) and prints the line to source.
# Idempotent: a second run over the same DIR skips the extraction it already did.
set -euo pipefail
die() { echo "unpack: $*" >&2; exit 2; }
say() { printf '[unpack %3ss] %s\n' "$SECONDS" "$*" >&2; }
[[ $# -ge 2 ]] || die "usage: bash unpack.sh BUNDLE.tar.xz DIR [CHECKOUT]"
archive="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" dir=$2 checkout=${3:-}
[[ -f "$archive" ]] || die "no archive at $1"
[[ -f "$archive.sha256" ]] || die "no $archive.sha256 beside the archive (build.sh writes it; bring it along)"

want="$(cut -d' ' -f1 "$archive.sha256")"
stamp="$dir/.unpacked-$want"
if [[ -f "$stamp" ]]; then
  say "already unpacked into $dir ($want)"
else
  say "checking $(basename "$archive") against its .sha256"
  have="$(sha256sum "$archive" | cut -d' ' -f1)"
  [[ "$have" == "$want" ]] || die "$archive: sha256 is $have, $archive.sha256 says $want (damaged or a different build)"
  mkdir -p "$dir"
  say "extracting into $dir"
  if command -v xz >/dev/null; then xz -dc -T0 "$archive"; else
    python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer, 1<<20)' "$archive"
  fi | tar -x -C "$dir"
  say "checking $(wc -l < "$dir/SHA256SUMS") files against SHA256SUMS"
  (cd "$dir" && sha256sum --quiet --strict -c SHA256SUMS) || die "files in $dir differ from SHA256SUMS"
  touch "$stamp"
fi
dir="$(cd "$dir" && pwd)"
repo="$dir/repo"

if ! command -v ip >/dev/null; then
  # lab/isolated.sh and lab/netns-sim.ts ask `ip` only to bring up a namespace's loopback.
  mkdir -p "$dir/shim" && cp "$repo/lab/bundle/ip" "$dir/shim/ip" && chmod +x "$dir/shim/ip"
  say "no iproute2 here: $dir/shim/ip does 'ip link set lo up'"
fi

cat > "$dir/env.sh" <<EOF
# Written by unpack.sh: the environment of the bundle in $dir.
export VLLM_TUNER_BUNDLE="$dir"
source "$repo/lab/bundle/env.sh"
EOF
# shellcheck source=env.sh
source "$dir/env.sh"

# The same as lab/toolchain/build.sh's plugins step: the providers into $PULUMI_HOME/plugins.
# shellcheck source=../toolchain/versions.env
source "$repo/lab/toolchain/versions.env"
for prov in kubernetes:$KUBERNETES_PROVIDER_VERSION command:$COMMAND_PROVIDER_VERSION; do
  name=${prov%%:*} ver=${prov#*:}
  [[ -x "$dir/bin/pulumi-resource-$name" ]] || continue
  if cmp -s "$dir/bin/pulumi-resource-$name" "$PULUMI_HOME/plugins/resource-$name-v$ver/pulumi-resource-$name"; then continue; fi
  "$dir/bin/pulumi" plugin install resource "$name" "$ver" --file "$dir/bin/pulumi-resource-$name" --reinstall >&2 \
    || die "pulumi plugin install resource $name $ver failed"
  say "provider $name v$ver installed into $PULUMI_HOME/plugins"
done

if [[ -n "$checkout" ]]; then
  [[ -f "$checkout/package.json" ]] || die "CHECKOUT '$checkout' is not a vllm-tuner checkout (no package.json)"
  if [[ -e "$checkout/node_modules" && ! -L "$checkout/node_modules" ]]; then
    die "$checkout/node_modules is a directory of its own; move it away to link the bundle's"
  fi
  ln -sfn "$repo/node_modules" "$checkout/node_modules"
  say "$checkout/node_modules -> $repo/node_modules"
fi

say "smoke check (lab/bundle/smoke.sh)"
bash "$repo/lab/bundle/smoke.sh" || die "smoke check failed (above); the bundle is unpacked in $dir"
echo
echo "unpacked and checked. In each shell: source $dir/env.sh   (then cd $repo && npm run lab:up ...)"
