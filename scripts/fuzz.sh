#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 20s).
#
# Go 1.26's fuzz coordinator can report "context deadline exceeded" when a
# timed -fuzztime ends while a worker is busy (golang/go#75804, fixed in Go
# 1.27, whose toolchain this module's dependencies do not build with yet): a
# failure with no failing input. A target that stops that way, without
# writing an input to its testdata/fuzz directory, is run once more for as
# many executions as the timed run reached: a budget counted in executions
# has no deadline to race. Any other failure, or a failure of the second
# run, fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-20s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fuzz_one() { # package, its directory, target
  local budget=$t attempt before after execs
  for attempt in 1 2; do
    before=$(ls "$2/testdata/fuzz/$3" 2>/dev/null || true)
    if go test -run '^$' -fuzz "^$3\$" -fuzztime "$budget" "$1" 2>&1 | tee "$log"; then
      return 0
    fi
    after=$(ls "$2/testdata/fuzz/$3" 2>/dev/null || true)
    if [ "$attempt" = 1 ] && [ "$before" = "$after" ] && grep -q "context deadline exceeded" "$log"; then
      execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
      budget="$(( ${execs:-0} > 1000 ? ${execs:-0} : 1000 ))x"
      echo "fuzz: $3 stopped at -fuzztime's end with no failing input (golang/go#75804): running it again for $budget"
      continue
    fi
    return 1
  done
}

for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' | sort -u); do
    echo "fuzz: $pkg $f for $t"
    fuzz_one "$pkg" "$dir" "$f"
  done
done
