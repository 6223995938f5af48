#!/usr/bin/env bash
# gpu-lock.sh without a GPU: a command runs while the lock is free and keeps it while it runs;
# it waits, and says why, while another holder (flock(2), as the grader takes it) has the lock;
# its exit status comes through; a command already under it takes it again at once; with
# --needs-gpu on a machine without a GPU it says so at once instead of waiting (make bench in
# a lab folder too). Then
# every timed command of make bench, of the sweep scripts and of lab 07's scaling.sh goes
# through it, with the lock file the grader uses by default (and scaling.sh's --csv rows come
# from its long one-rank run).
# usage: test-gpu-lock.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
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

echo "nesting and the kit's lock file:"
# (make bench runs scaling.sh under the lock, and scaling.sh each mpirun: the shell in between
# keeps holding it while its child asks.)
status=0
timeout 5 "$here/gpu-lock.sh" "$lock" bash -c '"$1" "$2" true && echo inner' _ "$here/gpu-lock.sh" \
    "$lock" > "$work/nested" 2>&1 || status=$?
check "a command already under the lock takes it again at once (status $status)" \
    grep -qx inner "$work/nested"

echo "without a GPU (stand-in nvidia-smi that lists none):"
mkdir -p "$work/nogpu" "$work/gpu"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' > "$work/nogpu/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: stand-in"\n' > "$work/gpu/nvidia-smi"
chmod +x "$work/nogpu/nvidia-smi" "$work/gpu/nvidia-smi"
(exec 8>>"$lock" && flock 8 && exec sleep 30) & holder=$!
for _ in $(seq 50); do flock -n "$lock" true 2>/dev/null || break; sleep 0.1; done
status=0
PATH=$work/nogpu:$PATH timeout 5 "$here/gpu-lock.sh" --needs-gpu "$lock" touch "$work/ran" \
    2>"$work/err" || status=$?
check "--needs-gpu, a held lock: it fails at once, status 1 ($status)" test "$status" = 1
check "--needs-gpu: it says there is no GPU" grep -q 'no GPU on this machine' "$work/err"
check "--needs-gpu: it did not wait for the lock" bash -c "! grep -q waiting '$work/err'"
rm -f "$work/ran"
status=0
PATH=$work/gpu:$PATH timeout 2 "$here/gpu-lock.sh" --needs-gpu "$lock" touch "$work/ran" \
    2>/dev/null || status=$?
check "--needs-gpu with a GPU: it waits for the held lock (timeout's 124: $status)" \
    test "$status" = 124
# A lab folder's make bench, its driver a stand-in (make -o: not rebuilt), the lock held.
mkdir -p "$work/bench"
printf '#!/bin/sh\necho "stand-in driver ran"\n' > "$work/bench/lab01"
chmod +x "$work/bench/lab01"
status=0
PATH=$work/nogpu:$PATH timeout 20 make --no-print-directory -C "$top/labs/01-straightforward" \
    bench B="$work/bench" LK_GPU_LOCK="$lock" -o "$work/bench/lab01" >"$work/bench.log" 2>&1 ||
    status=$?
check "make bench without a GPU fails at once, not after the lock (status $status)" \
    test "$status" != 0 -a "$status" != 124
check "make bench without a GPU says so" grep -q 'no GPU on this machine' "$work/bench.log"
check "make bench without a GPU ran no driver" bash -c "! grep -q 'stand-in driver ran' '$work/bench.log'"
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=

echo "make bench:"
lab=$top/labs/01-straightforward
dry=$(make -n -C "$lab" bench VARIANT=student 2>/dev/null)
lock_path=$(printf '%s\n' "$dry" | sed -n 's|.*tools/gpu-lock.sh --needs-gpu \([^ ]*\) .*|\1|p' | head -1)
check "lab 01's bench runs under gpu-lock.sh --needs-gpu" test -n "$lock_path"
unlocked=$(printf '%s\n' "$dry" | grep -- '--bench' | grep -v '^ *echo' | grep -vc 'tools/gpu-lock.sh' || true)
check "every --bench command of lab 01 holds the lock ($unlocked do not)" test "$unlocked" = 0
dry7=$(make -n -C "$top/labs/07-mpi-split" bench VARIANT=student 2>/dev/null)
check "lab 07's scaling.sh runs under the lock" \
    grep -q "tools/gpu-lock.sh --needs-gpu $lock_path .*scaling.sh" <<<"$dry7"
grader=$top/build/grader/labkit-grade
make -s -C "$top" "$grader" >/dev/null
check "the grader's default lock is make bench's ($lock_path)" \
    grep -q "(default: $lock_path)" <<<"$("$grader" --help 2>&1)"

# "-" is that same file, for the scripts students run outside make.
"$here/gpu-lock.sh" - sleep 3 & holder=$!
sleep 0.5
check "gpu-lock.sh - takes $lock_path" bash -c "! flock -n '$lock_path' true"
wait "$holder"; holder=

# The sweep scripts: a stand-in driver records whether each timed run holds the lock (a
# stand-in nvidia-smi and mpirun let lab 07's scaling.sh run without GPU or MPI).
echo "sweeps and scaling:"
mkdir -p "$work/bin"
cat > "$work/bin/driver" <<EOS
#!/usr/bin/env bash
if flock -n '$lock_path' true; then echo free; else echo held; fi >> "\$RECORD"
printf '  time per step      0.1000 ms\n  effective bandwidth 1.0 GB/s\n  %% of copy          1.0 %%\n'
# As lab07 --bench: its CSV row (here: the steps it ran) where --csv says.
steps=0; while [ \$# -gt 0 ]; do case \$1 in
    --steps) steps=\$2; shift ;; --csv) printf 'lab,steps\n07,%s\n' "\$steps" > "\$2"; shift ;;
esac; shift; done
EOS
printf '#!/bin/sh\necho "GPU 0: stand-in"\n' > "$work/bin/nvidia-smi"
printf '#!/usr/bin/env bash\nwhile [ "${1#-}" != "$1" ] || [[ $1 =~ ^[0-9]+$ ]]; do shift; done\nexec "$@"\n' \
    > "$work/bin/mpirun"
chmod +x "$work/bin/driver" "$work/bin/nvidia-smi" "$work/bin/mpirun"
sweep() { # sweep NAME SCRIPT ARGS...: every driver run of SCRIPT holds the lock
    local name=$1 script=$2; shift 2
    : > "$work/record"
    PATH=$work/bin:$PATH RECORD=$work/record PROG=$work/bin/driver "$script" "$@" \
        >/dev/null 2>&1 || true
    local runs held
    runs=$(wc -l < "$work/record"); held=$(grep -c '^held$' "$work/record" || true)
    check "$name: every timed run holds the lock ($held of $runs)" \
        test "$runs" -gt 0 -a "$held" = "$runs"
}
sweep "lab 01 sweep.sh" "$top/labs/01-straightforward/sweep.sh" 32x8
sweep "lab 02 sweep.sh" "$top/labs/02-coalescing/sweep.sh" 32x8 32x4
sweep "lab 03 sweep.sh" "$top/labs/03-shared-memory/sweep.sh" 32x4
VARIANTS=fast FAST_TILES="32x4 32x8" sweep "lab 04 sweep.sh" "$top/labs/04-halo-tiling/sweep.sh"
DIAMOND_TILES=128x64 HONEYCOMB_TILES=512x64 \
    sweep "lab 05 sweep.sh" "$top/labs/05-diamond-tiling/sweep.sh"
RANKS="1 2" WEAK_RANKS=1 LOGS=$work/logs \
    sweep "lab 07 scaling.sh" "$top/labs/07-mpi-split/scaling.sh" --csv "$work/bench.csv"
# Its --csv rows come from one more one-rank run of CSV_STEPS steps, not from the tables' runs
# (100 steps: the harness's timing called them noise).
check "lab 07 scaling.sh --csv: make bench's rows from the 1000-step run only" \
    test "$(cat "$work/bench.csv" 2>/dev/null)" = "$(printf 'lab,steps\n07,1000')"

checks_done test-gpu-lock
