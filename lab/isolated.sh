#!/usr/bin/env bash
# Runs a command in a network namespace of its own that has only a loopback interface, so every
# server the lab and the tests start (llm-d-inference-sim listens on all interfaces and has no
# bind-address flag) can be reached from nowhere but this command, and no load can leave it.
# Needs root or unprivileged user namespaces; without them it says so and runs the command as is.
set -euo pipefail
if [ "${VLLM_LAB_NETNS:-}" = "1" ]; then exec "$@"; fi
if ! command -v ip >/dev/null; then
  echo "isolated.sh: no \`ip\` binary to bring up a namespace's loopback; running on the host's loopback instead" >&2
  exec "$@"
fi
if unshare --net --map-root-user true 2>/dev/null || unshare --net true 2>/dev/null; then
  flags=(--net)
  [ "$(id -u)" -eq 0 ] || flags+=(--map-root-user)
  exec unshare "${flags[@]}" env VLLM_LAB_NETNS=1 bash -c 'ip link set lo up || { echo "isolated.sh: cannot bring up loopback in the new network namespace (ip link set lo up failed); nothing could reach the lab" >&2; exit 1; }; exec "$@"' isolated "$@"
fi
echo "isolated.sh: cannot create a network namespace here; running on the host's loopback instead" >&2
exec "$@"
