#!/usr/bin/env bash
# Grading on a cluster, on a one-node Slurm cluster started here (tools/slurm-local.sh):
# `make grade SLURM=1` grades three example students of lab 01 as an array job and its merge
# writes the gradebook of a plain `make grade` with the same seed (GPU stages not run both
# ways); an array task cancelled midway leaves its student pending, and the re-run submits
# that one index only and completes the gradebook; a re-run with nothing changed submits
# nothing. Tasks of two students: a task grades two whose names share a safe folder name,
# a changed student is graded again alone. A lab folder's `make check SLURM=1` runs through
# srun with the output of a local `make check`. First, without daemons: slurm-local.sh's GRES
# lines for a count of GPUs, and the `--gpus UUID` a task derives from CUDA_VISIBLE_DEVICES
# (a stand-in nvidia-smi).
# Skipped (status 0, with the reason) without Debian's slurmctld, slurmd, slurm-client and
# munge, or when not root (the daemons run as root). Under 3 minutes on 2 cores.
# usage: test-slurm.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
unset MAKEFLAGS MFLAGS

for prog in munged slurmctld slurmd sbatch srun squeue scancel; do
    if ! command -v "$prog" >/dev/null && [ ! -x "/usr/sbin/$prog" ]; then
        echo "test-slurm.sh: skipped: $prog not found (install Debian's slurmctld, slurmd," \
            "slurm-client and munge; .ci/run does)"
        exit 0
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    echo "test-slurm.sh: skipped: the local cluster's daemons start as root (.ci/run is root)"
    exit 0
fi

# Student code runs as nobody when the grader is root: it must reach the reports' work folders.
chmod 755 "$work"
if [ ! -d "$top/grader/examples" ]; then
    echo "test-slurm.sh: skipped: no grader/examples (a student distribution) to grade"
    exit 0
fi

echo "a node's GPUs as GRES, and the task's GPU as that GPU of the node:"
LK_SLURM_GPUS=2 "$here/slurm-local.sh" config "$work/conf2" >/dev/null
check "2 GPUs: slurm.conf declares the GRES type" grep -qx 'GresTypes=gpu' "$work/conf2/slurm.conf"
check "... and the node has gpu:2" grep -q '^NodeName=.* Gres=gpu:2 ' "$work/conf2/slurm.conf"
check "... gres.conf names /dev/nvidia0 and 1" \
    grep -q '^NodeName=.* Name=gpu File=/dev/nvidia\[0-1\]$' "$work/conf2/gres.conf"
check "... and slurmd may set up its cgroups without systemd's D-Bus (a container)" \
    grep -qx 'IgnoreSystemdOnFailure=yes' "$work/conf2/cgroup.conf"
LK_SLURM_GPUS=0 "$here/slurm-local.sh" config "$work/conf0" >/dev/null
check "no GPUs: no GRES" bash -c "! grep -q Gres '$work/conf0/slurm.conf' && [ ! -e '$work/conf0/gres.conf' ]"
status=0
LK_SLURM_GPUS=two "$here/slurm-local.sh" config "$work/conf3" 2>"$work/conf3.err" || status=$?
check "a GPU count that is not a number is refused" test "$status" -ne 0
check "... saying what to give" grep -q 'LK_SLURM_GPUS=two: give a number of GPUs' "$work/conf3.err"
# A stand-in nvidia-smi for a node of two GPUs, answering `--query-gpu=uuid ... -i N`.
mkdir -p "$work/fakebin"
cat >"$work/fakebin/nvidia-smi" <<'SMI'
#!/bin/sh
[ "$1" = "--query-gpu=uuid" ] && [ "$3" = "-i" ] || exit 2
case "$4" in 0) echo GPU-aaaa-0000 ;; 1) echo GPU-bbbb-1111 ;; *) exit 6 ;; esac
SMI
chmod +x "$work/fakebin/nvidia-smi"
sbatch_options() { # sbatch_options [VAR=VALUE...]: what slurm_options asks Slurm for
    # shellcheck disable=SC2016  # the inner bash expands them
    env "$@" bash -c \
        'slurm_who=test; . "$0"; slurm_options; echo "${slurm_opts[*]}"' "$here/slurm-lib.sh"
}
check "SLURM_CPUS_PER_TASK=3 asks for 3 cores a task" \
    grep -q -- '--cpus-per-task=3' <<<"$(sbatch_options SLURM_CPUS_PER_TASK=3)"
node_gpu() { # node_gpu CUDA_VISIBLE_DEVICES: what a task passes the grader
    PATH="$work/fakebin:$PATH" CUDA_VISIBLE_DEVICES=$1 bash -c \
        'slurm_who=test; . "$0"; slurm_node_gpu; echo "${node_gpu_args[*]}"' "$here/slurm-lib.sh"
}
check "a task on Slurm's GPU 1 grades on that GPU, named by its UUID (--gpus 1 is a count)" \
    test "$(node_gpu 1)" = "--gpus GPU-bbbb-1111"
check "... and on GPU 0, on GPU 0" test "$(node_gpu 0)" = "--gpus GPU-aaaa-0000"
check "... on a GPU nvidia-smi does not know, as without --gpus" test -z "$(node_gpu 3)"
check "... on two GPUs, as without --gpus" test -z "$(node_gpu 0,1)"
check "... without a GPU, as without --gpus" test -z "$(node_gpu '')"

cluster=$work/cluster
# Ports of their own: a cluster already on this machine keeps Slurm's defaults.
export LK_SLURMCTLD_PORT=${LK_SLURMCTLD_PORT:-16817} LK_SLURMD_PORT=${LK_SLURMD_PORT:-16818}
trap '"$here/slurm-local.sh" stop "$cluster"; rm -rf "$work"' EXIT
timeout 90 "$here/slurm-local.sh" start "$cluster" >/dev/null
export SLURM_CONF=$cluster/slurm.conf
# One node: the kit and the reports are where the "compute node" sees them.
export LK_SLURM_SHARED=1
# A task of this test needs no more than one core, and the node may have two in all.
export SLURM_CPUS_PER_TASK=1

# Three students of the examples, one lab: a class that grades in a minute on 2 cores.
mkdir -p "$work/subs"
for s in correct compile-error wrong-result; do cp -r "$top/grader/examples/$s" "$work/subs/"; done
flags="--seed 7 --lab 01-straightforward"
grade() { # grade OUT [make arguments]: make grade of the class, bounded
    local out=$1
    shift
    timeout 150 make --no-print-directory -C "$top" grade SUBMISSIONS="$work/subs" OUT="$out" \
        GRADE_FLAGS="$flags" "$@"
}

echo "a plain make grade of the class:"
grade "$work/plain" >"$work/plain.log" 2>&1 || { cat "$work/plain.log"; exit 1; }
echo "make grade SLURM=1, with array task 1 cancelled midway:"
status=0
grade "$work/out" SLURM=1 >"$work/first.log" 2>&1 &
pid=$!
job=
for _ in $(seq 1 600); do
    job=$(sed -n 's/^slurm-grade.sh: array job \([0-9]*\) submitted: waiting.*/\1/p' \
        "$work/first.log")
    # Cancelled once it runs: the task is midway through grading its student.
    if [ -n "$job" ] && squeue -h -t R -o %i | grep -qx "${job}_1"; then
        sleep 2
        scancel "${job}_1"
        break
    fi
    sleep 0.2
done
wait "$pid" || status=$?
cat "$work/first.log"
check "an array job was submitted and task 1 cancelled" test -n "$job"
check "the first run fails: one student is pending" test "$status" -ne 0
check "... and names the one pending student, correct (index 1)" \
    grep -q '^  correct  *pending: ' "$work/first.log"
check "... and only that one" test "$(grep -c ' pending: ' "$work/first.log")" = 1
check "the gradebook says correct is pending" grep -q '^correct,.*pending' "$work/out/gradebook.csv"

echo "the re-run:"
status=0
grade "$work/out" SLURM=1 >"$work/second.log" 2>&1 || status=$?
cat "$work/second.log"
check "the re-run succeeds" test "$status" = 0
check "... submitting only the cancelled task's index" \
    grep -q 'submitting 1 of 3 students (array indices 1)$' "$work/second.log"
# With a GPU the performance points are measured again, and differ run to run.
if nvidia-smi -L >/dev/null 2>&1; then
    echo "  (a GPU: the plain run's timed scores differ from the array's; rows compared below)"
else
    check "the gradebook equals a plain make grade's with the same seed" \
        cmp "$work/plain/gradebook.csv" "$work/out/gradebook.csv"
fi
# part_rows: the rows of every part's task gradebook (a task of one student here), as the
# merge must have taken them.
part_rows() { for s in compile-error correct wrong-result; do
    tail -n +2 "$work/out/parts/$s/task-gradebook.csv"; done; }
check "each row of the merged gradebook is its part's row" \
    diff <(tail -n +2 "$work/out/gradebook.csv") <(part_rows)
# GPU stages not run both ways, or run both ways on a machine with a GPU.
check "the GPU stages are reported as not run exactly when the plain run says so" \
    test "$(grep -c 'GPU STAGES NOT RUN' "$work/plain.log")" = \
    "$(grep -c 'GPU STAGES NOT RUN' "$work/second.log")"
check "a report says the node, job and array task that graded it" \
    grep -Eq '^Slurm job [0-9]+, array task 1 \(job id [0-9]+\), node [^ ]+, GPU ' \
    "$work/out/students/correct/report.md"
check "the session's seed is in no file but the instructor's" \
    test "$(stat -c %a "$work/out/.slurm")" = 700
status=0
grade "$work/out" SLURM=1 >"$work/third.log" 2>&1 || status=$?
cat "$work/third.log"
check "a re-run with nothing changed submits nothing and merges" \
    grep -q 'all 3 parts .* are up to date: merging them' "$work/third.log"
check "... and succeeds" test "$status" = 0

echo "a re-run while a task is still queued or running does not submit its student again:"
# A new file for correct: its part is stale, and SLURM_WAIT=0 returns once it is submitted.
echo "// resubmitted" >>"$work/subs/correct/labs/01-straightforward/kernels.cu"
grade "$work/out" SLURM=1 SLURM_WAIT=0 >"$work/fourth.log" 2>&1
status=0
grade "$work/out" SLURM=1 SLURM_WAIT=0 >"$work/fifth.log" 2>&1 || status=$?
cat "$work/fourth.log" "$work/fifth.log"
check "the first submits correct" grep -q 'submitting 1 of 3 students (array indices 1)$' \
    "$work/fourth.log"
check "the second, right after, names it as queued and submits nothing" \
    grep -Eq '^slurm-grade.sh: correct: still queued or running in Slurm \(job [0-9]+_1\)' \
    "$work/fifth.log"
check "... and submits no array job" bash -c "! grep -q 'Submitted\|submitting' '$work/fifth.log'"
for _ in $(seq 1 600); do squeue -h -o %i | grep -q . || break; sleep 0.2; done
check "the queue empties (the task and the merge job end)" test -z "$(squeue -h -o %i)"
status=0
grade "$work/out" SLURM=1 >"$work/sixth.log" 2>&1 || status=$?
check "then a re-run submits nothing: the task's part is up to date" \
    grep -q 'all 3 parts .* are up to date: merging them' "$work/sixth.log"
check "... and no submit's list of students is left behind" \
    bash -c "! ls '$work/out/.slurm' | grep -q '^students\\.'"

echo "two students a task: a task grades two, and the merge gives each their own part:"
# "x y" and "x_y" share a safe folder name: in the task's session the second is x_y-2.
mkdir -p "$work/subs3"
cp -r "$top/grader/examples/wrong-result" "$work/subs3/x y"
cp -r "$top/grader/examples/compile-error" "$work/subs3/x_y"
# A name that a part set aside while it is replaced must not be mistaken for.
cp -r "$top/grader/examples/compile-error" "$work/subs3/x_y.old"
grade3() { # grade3 LOG: the class of three as tasks of two students
    local status=0
    timeout 150 make --no-print-directory -C "$top" grade SUBMISSIONS="$work/subs3" \
        OUT="$work/out3" GRADE_FLAGS="$flags" SLURM=1 SLURM_STUDENTS_PER_TASK=2 >"$1" 2>&1 ||
        status=$?
    date +%s >"$1.end"
    cat "$1"
    return "$status"
}
check "the class of three grades" grade3 "$work/chunk.log"
check "... as two array tasks of up to two students" \
    grep -q 'submitting 3 of 3 students (array indices 0-1, up to 2 students a task)$' \
    "$work/chunk.log"
# squeue every 5 s: sbatch --wait would look again only 32 s after its last look.
lag=$(($(cat "$work/chunk.log.end") - $(stat -c %Y "$work/out3/parts/"* | sort -n | tail -1)))
check "... and merged within 12 s of the last task's end (took ${lag} s)" test "$lag" -le 12
row() { # row GRADEBOOK NAME: the student's row, less the name
    awk -F, -v n="$2" '$1 == n { sub(/^[^,]*,/, ""); print }' "$1"; }
plain_row() { row "$work/plain/gradebook.csv" "$1"; }
chunk_row() { row "$work/out3/gradebook.csv" "$1"; }
check "x y's row is wrong-result's (its files) and not empty" bash -c \
    "[ -n \"\$1\" ] && [ \"\$1\" = \"\$2\" ]" _ "$(chunk_row 'x y')" "$(plain_row wrong-result)"
check "x_y's row is compile-error's (its files)" \
    test "$(chunk_row x_y)" = "$(plain_row compile-error)"
check "... each part holds its own student's report folder" bash -c \
    "[ -d '$work/out3/parts/x y/students/x_y' ] && [ -d '$work/out3/parts/x_y/students/x_y-2' ]"
check "... and the class's reports say the one task that graded them" bash -c \
    "grep -q 'array task 0 ' '$work/out3/students/x_y/report.md' &&
     grep -q 'array task 0 ' '$work/out3/students/x_y-2/report.md'"
echo "// changed" >>"$work/subs3/x_y/labs/01-straightforward/kernels.cu"
check "a changed student is graded again" grade3 "$work/chunk2.log"
check "... alone, in the task of its class position" \
    grep -q 'submitting 1 of 3 students (array indices 0, up to 2 students a task)$' \
    "$work/chunk2.log"
check "... and the others' rows stay" \
    test "$(chunk_row 'x y')" = "$(plain_row wrong-result)"
check "... x_y.old's too, whose part is not taken for x_y's old one" \
    test "$(chunk_row x_y.old)" = "$(plain_row compile-error)"
status=0
make --no-print-directory -C "$top" grade SUBMISSIONS="$work/subs3" OUT="$work/out3" \
    GRADE_FLAGS="$flags" SLURM=1 SLURM_STUDENTS_PER_TASK=none >"$work/chunk3.log" 2>&1 || status=$?
check "SLURM_STUDENTS_PER_TASK=none is refused" test "$status" -ne 0
check "... saying what to give" \
    grep -q 'SLURM_STUDENTS_PER_TASK=none: give the number of students a task grades' \
    "$work/chunk3.log"

echo "a lab folder's make check SLURM=1 runs through srun with the same output:"
lab_check() { # lab_check LOG [make arguments]
    local log=$1
    shift
    timeout 120 make --no-print-directory -C "$top/labs/01-straightforward" check \
        B="$work/lab01" "$@" >"$log" 2>&1 || true
}
lab_check "$work/build.log" # builds what both runs below use
lab_check "$work/local.log"
lab_check "$work/srun.log" SLURM=1
check "make check SLURM=1 prints what make check prints" diff "$work/local.log" "$work/srun.log"
check "... a summary line, as make check" grep -q '^make check: ' "$work/srun.log"
check "... from a Slurm job" grep -q 'JobName=labkit-01-straightforward ' \
    <(scontrol show job -o 2>/dev/null)

checks_done test-slurm.sh
