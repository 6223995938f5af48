#!/usr/bin/env bash
# gpu-lock.sh without a GPU: a command runs while the lock is free and keeps it while it runs;
# it waits, and says why, while another holder (flock(2), as the grader takes it) has the lock;
# its exit status comes through. Then every timed command of make bench goes through it, with
# the lock file the grader uses by default.
# usage: test-gpu-lock.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d)
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
fails=0
check() { # check WHAT COMMAND...
    local what=$1; shift
    if "$@"; then echo "  ok    $what"; else echo "  FAIL  $what" >&2; fails=$((fails + 1)); fi
}
lock=$work/gpu.lock
run() { "$here/gpu-lock.sh" "$lock" "$@"; }

echo "gpu-lock.sh:"
status=0; "$here/gpu-lock.sh" "$lock" 2>/dev/null || status=$?
check "no command: usage, status 2" test "$status" = 2
status=0; run sh -c 'exit 7' || status=$?
check "a free lock: the command runs and its status (7) comes through" test "$status" = 7

# Another holder, as the grader holds it: the command must wait, and say so.
(exec 8>>"$lock" && flock 8 && exec sleep 30) & holder=$! # sleep itself holds it
for _ in $(seq 50); do flock -n "$lock" true 2>/dev/null || break; sleep 0.1; done
status=0; timeout 2 "$here/gpu-lock.sh" "$lock" touch "$work/ran" 2>"$work/err" || status=$?
check "a held lock: the command waits (timeout's 124)" test "$status" = 124
check "a held lock: the command did not run" test ! -e "$work/ran"
check "a held lock: it says what it waits for" grep -q "waiting for the GPU lock $lock" "$work/err"
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=
check "a released lock: the command runs" run touch "$work/ran"

# While the command runs it holds the lock: a grader's try fails.
run sleep 3 & holder=$!
sleep 0.5
check "the command holds the lock while it runs" bash -c "! flock -n '$lock' true"
wait "$holder"; holder=
check "and releases it when it exits" flock -n "$lock" true

echo "make bench:"
lab=$top/labs/01-straightforward
dry=$(make -n -C "$lab" bench VARIANT=student 2>/dev/null)
lock_path=$(printf '%s\n' "$dry" | sed -n 's|.*tools/gpu-lock.sh \([^ ]*\) .*|\1|p' | head -1)
check "lab 01's bench runs under gpu-lock.sh" test -n "$lock_path"
unlocked=$(printf '%s\n' "$dry" | grep -- '--bench' | grep -v '^ *echo' | grep -vc 'tools/gpu-lock.sh' || true)
check "every --bench command of lab 01 holds the lock ($unlocked do not)" test "$unlocked" = 0
dry7=$(make -n -C "$top/labs/07-mpi-split" bench VARIANT=student 2>/dev/null)
check "lab 07's scaling.sh runs under the lock" \
    grep -q "tools/gpu-lock.sh $lock_path .*scaling.sh" <<<"$dry7"
grader=$top/build/grader/labkit-grade
make -s -C "$top" "$grader" >/dev/null
check "the grader's default lock is make bench's ($lock_path)" \
    grep -q "(default: $lock_path)" <<<"$("$grader" --help 2>&1)"

if [ "$fails" -ne 0 ]; then
    echo "test-gpu-lock: $fails check(s) failed" >&2
    exit 1
fi
echo "test-gpu-lock: all checks passed"
