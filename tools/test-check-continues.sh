#!/usr/bin/env bash
# make check past a build that fails: a lab whose kernels.cu does not compile is one failed suite
# (labNN-VARIANT-build) with what to do in the summary, and the labs after it still run; the lab
# folder's own make check says the same and fails; the summary has one row per area. Without a
# GPU: only builds are exercised.
# usage: test-check-continues.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
printf '__global__ void broken( { }\n' >"$work/broken.cu"
unset MAKEFLAGS MFLAGS

echo "a lab's make check with a kernels.cu that does not compile:"
status=0
make --no-print-directory -C "$top/labs/01-straightforward" check KERNELS="$work/broken.cu" \
    B="$work/lab" >"$work/lab.log" 2>&1 || status=$?
check "it fails" test "$status" -ne 0
check "its summary names the build as a failed suite" \
    grep -Eq '^lab01-student-build +0 +1 +0 !!' "$work/lab.log"
check "its summary says what to do" \
    grep -q 'labs/01-straightforward (student) did not build: fix the first error above' "$work/lab.log"
check "it ends with make check: FAILED" grep -q '^make check: FAILED' "$work/lab.log"

echo "the top level's suites of two labs, both failing to build:"
status=0
make --no-print-directory -C "$top" check-labs LABS="01-straightforward 02-coalescing" \
    KERNELS="$work/broken.cu" B="$work/top" REPORTS="$work/reports" >"$work/top.log" 2>&1 || status=$?
check "the loop over the labs succeeds (the summary decides)" test "$status" = 0
for lab in 01 02; do
    variant=student
    [ -d "$top/solutions" ] && variant=solution
    check "lab $lab: a failed build suite ($variant)" test -s "$work/reports/lab$lab-$variant-build.tap"
    if [ -d "$top/solutions" ]; then
        check "lab $lab: the skeleton's failed build is reported too" \
            test -s "$work/reports/lab$lab-skeleton-build.tap"
    fi
done
status=0
"$here/summary.sh" "$work/reports" >"$work/summary.log" 2>&1 || status=$?
check "the summary fails" test "$status" = 1
check "the summary names lab 02's build, after lab 01's failed" grep -q 'lab02-.*-build:' "$work/summary.log"

echo "the summary: every suite's counts, two a line, the failed ones named:"
r=$work/grouped
mkdir -p "$r"
tap() { printf 'TAP version 13\n%s\n' "$2" >"$r/$1.tap"; echo "${3:-0}" >"$r/$1.status"; }
tap lab04-solution-gpu $'ok 1 - a\nok 2 - b\nnot ok 3 - c' 1
tap lab04-solution-cli $'ok 1 - a\nok 2 - b\nok 3 - c\nok 4 - d # SKIP no GPU on this machine'
echo 139 >"$r/lab04-solution-serial.status" # crashed before its report
tap grader-score $'ok 1 - a\nok 2 - b'
tap grader-build $'ok 1 - a' # a suite named build, not a failed build
status=0
"$here/summary.sh" "$r" >"$work/grouped.log" 2>&1 || status=$?
check "a failed suite: its counts, marked" grep -Eq 'lab04-solution-gpu +2 +1 +0 !!' "$work/grouped.log"
check "... and named below" grep -q '^!!!!!!!! FAILED lab04-solution-gpu: 1 test(s) failed' "$work/grouped.log"
check "a suite without a report: marked, named, its exit status" \
    grep -q '^!!!!!!!! FAILED lab04-solution-serial: NO REPORT (exit status 139' "$work/grouped.log"
check "a suite that passed: its counts, unmarked" grep -Eq 'grader-score +2 +0 +0( |$)' "$work/grouped.log"
check "... and a skipped test counted" grep -Eq 'lab04-solution-cli +3 +0 +1( |$)' "$work/grouped.log"
check "a suite named build is no build failure" sh -c "! grep -q 'grader-build:' '$work/grouped.log'"
check "five suites on three lines" test "$(grep -Ec '^(lab04|grader)' "$work/grouped.log")" = 3
check "the summary fails" test "$status" = 1

echo "the summary's last line says what was tested:"
r=$work/last
mkdir -p "$r"
tap lab01-student-gpu $'ok 1 - a # SKIP no GPU on this machine\nok 2 - b # SKIP no GPU on this machine'
tap lab01-student-serial $'ok 1 - a\nok 2 - b'
status=0
"$here/summary.sh" "$r" >"$work/last.log" 2>&1 || status=$?
check "without a GPU it passes (CI depends on the status)" test "$status" = 0
check "... and says the GPU code was not tested" grep -qx \
    'make check: CPU suites passed; the GPU code was NOT tested (2 GPU tests skipped: no GPU on this machine)' \
    "$work/last.log"
rm "$r/lab01-student-gpu.tap" "$r/lab01-student-gpu.status"
"$here/summary.sh" "$r" >"$work/last.log" 2>&1
check "with nothing skipped it says all suites passed" grep -qx 'make check: all suites passed' \
    "$work/last.log"

checks_done test-check-continues
