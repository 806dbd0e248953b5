#!/usr/bin/env bash
# The unit suite under CPU pressure: BUSY busy loops (default 4) beside RUNS runs (default 5) of
# `npm run build && npm run test:unit`; stops at the first failure. No test may depend on a quiet machine.
#   bash scripts/stress-unit.sh            BUSY=8 RUNS=3 bash scripts/stress-unit.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=../lab/setup-node.sh
source lab/setup-node.sh > /dev/null
busy=()
for _ in $(seq "${BUSY:-4}"); do
  (while :; do :; done) &
  busy+=($!)
done
trap 'kill "${busy[@]}" 2> /dev/null' EXIT
for i in $(seq "${RUNS:-5}"); do
  start=$SECONDS
  log="$(mktemp)"
  if npm run build > "$log" 2>&1 && npm run test:unit >> "$log" 2>&1; then
    echo "run $i: passed in $((SECONDS - start)) s ($(grep -Eo '[0-9]+ passing' "$log"))"
  else
    echo "run $i: FAILED after $((SECONDS - start)) s; log: $log"
    exit 1
  fi
done
