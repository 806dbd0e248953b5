#!/usr/bin/env bash
# Copies a node_modules tree for the offline bundle (lab/bundle/build.sh), without what running the
# lab, the benchmark and the campaign never reads:
#   bash lab/bundle/trim-node-modules.sh SRC_NODE_MODULES DEST
# The Pulumi program is loaded by ts-node with PULUMI_NODEJS_TRANSPILE_ONLY=true (lab/bundle/env.sh),
# so no type information (*.d.ts) is read; tsx only strips types. Type checking, the linter and the
# TypeScript server stay on the machine that builds the bundle, and so does the compiler: the bundle
# carries the Pulumi program's build (.program/, lab/bundle/build.sh).
set -euo pipefail
src="$(readlink -f "$1")" dest=$2
[[ -d "$src/@pulumi/pulumi" ]] || { echo "trim-node-modules: $src is not the project's node_modules" >&2; exit 2; }
rm -rf "$dest"; mkdir -p "$(dirname "$dest")"
cp -a "$src" "$dest"
find "$dest" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \
    -o -name '*.markdown' -o -name 'CHANGELOG*' -o -name '*.tsbuildinfo' \) -type f -delete
# (Directories named doc/ stay: yaml's dist/doc/ is code.)
rm -rf "$dest/@pulumi/pulumi/vendor"                    # TS 3.8 / ts-node 7: a fallback the project never takes
rm -rf "$dest/@biomejs" "$dest/.bin/biome"              # the linter (~100 MB)
ts="$dest/typescript/lib"
rm -f "$ts"/tsserver*.js "$ts"/_tsserver.js "$ts"/typingsInstaller.js "$ts"/_typingsInstaller.js "$ts"/watchGuard.js \
      "$ts"/tsc.js "$ts"/_tsc.js "$ts"/cancellationToken.js
rm -rf "$ts"/*/diagnosticMessages.generated.json        # translations; English is built in
echo "trim-node-modules: $(du -sh "$src" | cut -f1) -> $(du -sh "$dest" | cut -f1)" >&2
