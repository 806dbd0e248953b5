#!/usr/bin/env bash
# A test suite under CPU pressure: BUSY busy loops (default 4) beside RUNS runs (default 5) of
# `npm run build && npm run $SUITE` (default test:unit; `SUITE=test` is unit and integration, ~45 min
# a run on 2 cores); stops at the first failure. No test may depend on a quiet machine. For example:
#   bash scripts/stress-tests.sh
#   BUSY=8 RUNS=3 SUITE=test bash scripts/stress-tests.sh
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
  if npm run build > "$log" 2>&1 && npm run "${SUITE:-test:unit}" >> "$log" 2>&1; then
    echo "run $i: passed in $((SECONDS - start)) s ($(grep -Eo '[0-9]+ passing' "$log" | paste -sd ' '))"
  else
    echo "run $i: FAILED after $((SECONDS - start)) s; log: $log"
    exit 1
  fi
done
