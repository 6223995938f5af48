#!/usr/bin/env bash
# make check's output shows real failures only: run-suite.sh keeps a suite's output in its
# log and shows it only when the suite fails, so the errors that tests of error paths expect
# (printed by a passing suite) do not read like failures. Stand-in suites, no build needed.
# usage: test-run-suite.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
# A stand-in Criterion binary: prints an expected error, writes its TAP, exits with $1.
suite() { # suite NAME STATUS TAP_LINE
    printf '#!/bin/sh\necho "error: the planted file is bad (expected)" >&2\n' >"$work/$1"
    printf 'tap=${1#--tap=}\nprintf "TAP version 13\\n1..1\\n%s\\n" >"$tap"\nexit %s\n' \
        "$3" "$2" >>"$work/$1"
    chmod +x "$work/$1"
}
suite passing 0 'ok 1 - error_path_is_reported'
suite failing 1 'not ok 1 - error_path_is_reported'
suite skipping 0 'ok 1 - needs_a_gpu # SKIP no GPU on this machine'

echo "a passing suite that prints an expected error:"
"$here/run-suite.sh" "$work/reports" lab99-passing "$work/passing" >"$work/out" 2>&1
check "its error line is not shown" bash -c "! grep -q 'error: the planted' '$work/out'"
check "one line says it passed" grep -qx '  PASS    lab99-passing: 1 passed, 0 skipped' "$work/out"
check "its output is kept in its log" grep -q 'error: the planted' "$work/reports/lab99-passing.log"
check "its status and TAP are kept for the summary" \
    test "$(cat "$work/reports/lab99-passing.status")" = 0 -a -s "$work/reports/lab99-passing.tap"
"$here/run-suite.sh" "$work/reports" lab99-skipping "$work/skipping" >"$work/out" 2>&1
check "a skipped test is counted as such" grep -qx '  PASS    lab99-skipping: 0 passed, 1 skipped' \
    "$work/out"

echo "a failing suite:"
"$here/run-suite.sh" "$work/reports" lab99-failing "$work/failing" >"$work/out" 2>&1
check "it is named as failed" grep -q 'lab99-failing FAILED (exit status 1)' "$work/out"
check "its whole output is shown" grep -q 'error: the planted' "$work/out"
check "its status is kept" test "$(cat "$work/reports/lab99-failing.status")" = 1
checks_done test-run-suite
