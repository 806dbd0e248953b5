#!/usr/bin/env bash
# Runs a command in a network namespace of its own that has only a loopback interface, so every
# server the lab and the tests start (llm-d-inference-sim listens on all interfaces and has no
# bind-address flag) can be reached from nowhere but this command, and no load can leave it.
# Needs root or unprivileged user namespaces; without them it says so and runs the command as is.
set -euo pipefail
if [ "${VLLM_LAB_NETNS:-}" = "1" ]; then exec "$@"; fi
if unshare --net --map-root-user true 2>/dev/null || unshare --net true 2>/dev/null; then
  flags=(--net)
  [ "$(id -u)" -eq 0 ] || flags+=(--map-root-user)
  exec unshare "${flags[@]}" env VLLM_LAB_NETNS=1 bash -c 'ip link set lo up 2>/dev/null || true; exec "$@"' isolated "$@"
fi
echo "isolated.sh: cannot create a network namespace here; running on the host's loopback instead" >&2
exec "$@"
