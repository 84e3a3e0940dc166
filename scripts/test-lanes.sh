#!/usr/bin/env bash
# `make test` once its prerequisites are done, in two lanes at once (2 cores; each lane waits on
# processes and the network much of its time): pytest but the two differential suites in the
# foreground; beside it lint, type checks, the differential suites (pure CPU) and both
# conformance runs, whose output goes to a log shown at the end. The freshness check
# (`mcp-codegen check`) is pytest's: tests/codegen/test_determinism.py runs it on the checkout.
set -u
cd "$(dirname "$0")/.."
differential=(tests/codegen/test_differential.py tests/codegen/test_reverse_differential.py)
log=.test-logs/checks.log
mkdir -p .test-logs
(
    set -e
    make --no-print-directory lint typecheck
    .venv/bin/pytest -q -p no:cacheprovider "${differential[@]}"
    make --no-print-directory conformance conformance-same-era
) >"$log" 2>&1 &
checks=$!
.venv/bin/pytest "${differential[@]/#/--ignore=}"
tests=$?
wait "$checks"
checked=$?
echo "---- lint, typecheck, check, the differential suites, conformance (log: $log) ----"
cat "$log"
echo "make test: pytest exited $tests; the other lane exited $checked"
[ "$tests" -eq 0 ] && [ "$checked" -eq 0 ]
