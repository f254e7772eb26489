#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 20s).
#
# Go 1.26's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime ends while a worker is busy (golang/go#75804, fixed in Go 1.27):
# a failure with no failing input. A target that stops that way, without
# writing an input to its testdata/fuzz directory, is run once more; any
# other failure, or the same one twice, fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-20s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fuzz_one() { # package, its directory, target
  local attempt before after
  for attempt in 1 2; do
    before=$(ls "$2/testdata/fuzz/$3" 2>/dev/null || true)
    if go test -run '^$' -fuzz "^$3\$" -fuzztime "$t" "$1" 2>&1 | tee "$log"; then
      return 0
    fi
    after=$(ls "$2/testdata/fuzz/$3" 2>/dev/null || true)
    if [ "$attempt" = 1 ] && [ "$before" = "$after" ] && grep -q "context deadline exceeded" "$log"; then
      echo "fuzz: $3 stopped at -fuzztime's end with no failing input (golang/go#75804): running it again"
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
