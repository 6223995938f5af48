#!/usr/bin/env bash
# Lab 07's suites on the untouched skeleton end at once, before any mpirun: the CPU tests skip
# with exchange.c's "not written yet", the GPU tests skip without a GPU and fail with the
# skeleton's TODO message on a GPU (a failed mpirun job ends in MPI_Abort, whose teardown took
# 23-62 s per test there). A stand-in mpirun records every start. Against the solution the
# tests do start mpirun. On a GPU machine this is the check of the GPU path too.
# usage: test-lab07-skeleton.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
unset MAKEFLAGS MFLAGS
lab=$top/labs/07-mpi-split
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "$*" >>"%s/mpirun.record"\necho "stand-in mpirun" >&2\nexit 1\n' \
    "$work" >"$work/bin/mpirun"
chmod +x "$work/bin/mpirun"
gpu=0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=1

# The solution where the kit has it (not in the student distribution).
variants=student
[ -d "$top/solutions/07-mpi-split" ] && variants="student solution"
for variant in $variants; do
    make -s --no-print-directory -C "$lab" VARIANT=$variant B="$work/$variant" \
        "$work/$variant/tests/test_mpi" "$work/$variant/tests/test_gpu" \
        "$work/$variant/tests/test_cli" >/dev/null
done

echo "the skeleton (VARIANT=student):"
for suite in mpi cli gpu; do
    rm -f "$work/mpirun.record"
    start=$SECONDS
    PATH=$work/bin:$PATH "$work/student/tests/test_$suite" --tap="$work/$suite.tap" \
        >"$work/$suite.log" 2>&1 || true
    took=$((SECONDS - start))
    check "test_$suite: no mpirun started" test ! -e "$work/mpirun.record"
    check "test_$suite: done in under 20 s ($took s)" test "$took" -lt 20
done
check "test_mpi: every test skipped with exchange.c's TODO" \
    bash -c "! grep -v '# SKIP exchange.c: lab07_halo_begin is not written yet: start with TODO 1' \
        '$work/mpi.tap' | grep -q '^ok\|^not ok'"
check "test_cli: its mpirun test skipped with exchange.c's TODO" \
    grep -q 'one_rank_on_the_cpu_matches_serial *# SKIP exchange.c: lab07_halo_begin is not written yet' \
    "$work/cli.tap"
if [ "$gpu" = 1 ]; then
    check "test_gpu on a GPU: every test failed with the TODO message" \
        bash -c "! grep -q '^ok' '$work/gpu.tap' && \
            test \$(grep -c 'lab07_halo_begin is not written yet' '$work/gpu.log') -gt 0"
else
    check "test_gpu without a GPU: every test skipped (no GPU on this machine)" \
        bash -c "! grep '^ok\|^not ok' '$work/gpu.tap' | grep -vq '# SKIP no GPU on this machine'"
fi

[ "$variants" = student ] && checks_done test-lab07-skeleton
echo "the solution (its functions are written):"
rm -f "$work/mpirun.record"
PATH=$work/bin:$PATH "$work/solution/tests/test_mpi" --filter 'ranks_cpu/tiny_two_steps' \
    --tap="$work/solution.tap" >"$work/solution.log" 2>&1 || true
check "test_mpi starts mpirun (nothing taken for the skeleton)" test -s "$work/mpirun.record"
if [ "$gpu" = 1 ]; then
    rm -f "$work/mpirun.record"
    PATH=$work/bin:$PATH "$work/solution/tests/test_gpu" --filter 'staged_sync/tiny_two_steps' \
        --tap="$work/solution-gpu.tap" >"$work/solution-gpu.log" 2>&1 || true
    check "test_gpu on a GPU starts mpirun" test -s "$work/mpirun.record"
fi
checks_done test-lab07-skeleton
