#!/usr/bin/env bash
# npm run test:integration: the integration files in two groups at once, each group in a network
# namespace of its own (lab/isolated.sh) and a checkout of its own. A lab is one per checkout (its
# state in .lab/, its kwok cluster and cgroup root named after that path), and two labs in two
# namespaces share no directory, socket, port or cgroup (docs/lab.md, "The real node"), so the two
# groups' labs never meet. Most of a file's time is waiting (pods starting, probes, load windows
# against the simulator), which the other group's work fills on a 2-core machine
# (docs/testing.md, "Where CI's time goes").
#
# Group B runs in a copy of this checkout: the files git would see (tracked and untracked, not
# ignored) over a `git clone --shared` at this HEAD, so a tune's branches and worktrees land in the
# copy's own repository; node_modules and the program's builds (.program) are linked. Every other
# file runs in group A, here.
#
# Arguments: mocha files to run instead of all (one group, here). Environment:
#   VLLM_IT_GROUPS=1   every file in one group, here (as before the split); so also inside a namespace
#                      of the lab's already (VLLM_LAB_NETNS=1), which holds one lab at a time, and
#                      outside a git checkout
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"
MOCHA=(npx --no-install mocha --timeout 900000)

# Group B: about half of the suite's time by the per-file figures in docs/testing.md.
GROUP_B=(
  test/integration/campaign/tune-goodput.test.ts
  test/integration/campaign/tune.test.ts
  test/integration/campaign/campaign.test.ts
  test/integration/campaign/faults.test.ts
  test/integration/lab/config-faults.test.ts
  test/integration/lab/timing.test.ts
  test/integration/lab/twin-capacity.test.ts
  test/integration/lab/kv-pool.test.ts
  test/integration/lab/real-node-behaviour.test.ts
  test/integration/benchmark/simulator.test.ts
  test/integration/benchmark/capacity.test.ts
)

lab/isolated.sh npx --no-install tsx lab/cli.ts check-node

# Already inside a lab's namespace (lab/isolated.sh bash): one namespace holds one lab at a time.
# Outside a git checkout there is no clone to make for group B.
if [[ $# -gt 0 || "${VLLM_IT_GROUPS:-2}" == 1 || "${VLLM_LAB_NETNS:-}" == 1 ]] ||
  ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  [[ $# -gt 0 ]] || set -- "test/integration/**/*.test.ts"
  exec lab/isolated.sh "${MOCHA[@]}" "$@"
fi
[[ "${VLLM_IT_GROUPS:-2}" == 2 ]] || {
  echo "run-groups.sh: VLLM_IT_GROUPS=${VLLM_IT_GROUPS}: expected 1 or 2" >&2
  exit 2
}

mapfile -t ALL < <(find test/integration -name '*.test.ts' | sort)
GROUP_A=()
for f in "${ALL[@]}"; do
  [[ " ${GROUP_B[*]} " == *" $f "* ]] || GROUP_A+=("$f")
done
for f in "${GROUP_B[@]}"; do
  [[ -f "$f" ]] || { echo "run-groups.sh: group B names $f, which does not exist" >&2; exit 2; }
done

COPY_PARENT="$(mktemp -d "${TMPDIR:-/tmp}/vllm-tuner-it-b.XXXXXX")"
COPY="$COPY_PARENT/project"
cleanup() { rm -rf "$COPY_PARENT"; }
trap cleanup EXIT
git clone --quiet --shared --no-checkout "$ROOT" "$COPY"
git -C "$COPY" reset --quiet "$(git rev-parse HEAD)"
git ls-files -z --cached --others --exclude-standard |
  grep -zv '^node_modules$' | (tar --null -T - -cf - 2>/dev/null || true) | tar -xf - -C "$COPY"
ln -s "$ROOT/node_modules" "$COPY/node_modules"
# The Pulumi program's compiled builds, keyed by their sources' hash (program.js): the copy's sources
# are these, so it reuses this checkout's build instead of compiling its own.
mkdir -p "$ROOT/.program"
ln -s "$ROOT/.program" "$COPY/.program"

started=$SECONDS
run_group() {
  local name=$1 dir=$2 rc=0
  shift 2
  # pipefail: the group's exit code is mocha's (sed's is 0).
  (cd "$dir" && lab/isolated.sh "${MOCHA[@]}" "$@") 2>&1 | sed -u "s/^/[$name] /" || rc=$?
  echo "run-groups.sh: group $name ($# files) exit code $rc after $((SECONDS - started)) s"
  return "$rc"
}
run_group A "$ROOT" "${GROUP_A[@]}" &
a=$!
run_group B "$COPY" "${GROUP_B[@]}" &
b=$!
rc=0
wait "$a" || rc=1
wait "$b" || rc=1
exit "$rc"
