#!/usr/bin/env bash
# A lab is one folder (labs/README.md, "Adding a lab"): its rubric block and its Makefile
# settings live in it, and a folder missing either fails with a message that names the file
# to fix. A scratch kit holds copies of labs 01 and 07 (the rest of the kit linked in); the
# grader (labkit-grade, already built) and make are run on it. Without a GPU: nothing runs.
# usage: test-lab-folder.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
unset MAKEFLAGS MFLAGS
build=${LK_BUILD:-$top/build}
grader=$build/grader/labkit-grade
[ -x "$grader" ] || { echo "test-lab-folder: $grader: not built: make grader first" >&2; exit 1; }

kit=$work/kit
mkdir -p "$kit/labs"
for d in Makefile common datasets grader tools; do ln -s "$top/$d" "$kit/$d"; done
cp "$top/labs/lab.mk" "$kit/labs/"
cp -r "$top/labs/01-straightforward" "$top/labs/07-mpi-split" "$kit/labs/"
rm -rf "$kit"/labs/*/build
lab=$kit/labs/07-mpi-split

# The grader's two ways in: a session (make grade) and one lab's static rules (make check).
grade() {
    "$grader" --kit "$kit" --lib "$build/common/liblabkit.a" --submissions self --no-gpu \
        --out "$work/out" -q
}
static_rules() {
    "$grader" --kit "$kit" --lib "$build/common/liblabkit.a" --static 07-mpi-split \
        --objects "$work/no-objects" KERNELS="$lab/kernels.cu" EXCHANGE="$lab/exchange.c"
}
build_plan() { make --no-print-directory -n -C "$lab" B="$work/lab07" build >"$work/plan.log" 2>&1; }

echo "the copied labs as they are:"
status=0
static_rules >"$work/static.log" 2>&1 || status=$?
check "the grader reads lab 07's rubric and goes on to its objects" \
    grep -q 'kernels.o: missing: build the lab first' "$work/static.log"
check "make plans lab 07's build" build_plan
check "the plan compiles exchange.c as the student's file with MPI's flags" \
    grep -q "OMPI_SKIP_MPICXX.*-c $lab/exchange.c" "$work/plan.log"

echo "lab 07 without its rubric:"
mv "$lab/rubric" "$work/rubric"
status=0
grade >"$work/grade.log" 2>&1 || status=$?
check "make grade's session stops (exit status $status)" test "$status" = 1
check "it names the file to add" \
    grep -q "$lab/rubric: missing: every lab folder holds its rubric block: add the file with 'lab 07-mpi-split'" \
    "$work/grade.log"
status=0
static_rules >"$work/static.log" 2>&1 || status=$?
check "make check's static rules fail (exit status $status)" test "$status" -ne 0
check "they name the file to add" grep -q "$lab/rubric: missing" "$work/static.log"
mv "$work/rubric" "$lab/rubric"

echo "lab 07's Makefile without its settings:"
cp "$lab/Makefile" "$work/Makefile"
grep -v '^STUDENT_C' "$work/Makefile" >"$lab/Makefile"
status=0
build_plan || status=$?
check "make stops without STUDENT_C (exit status $status)" test "$status" -ne 0
check "it says which setting to write where" \
    grep -q "labs/07-mpi-split/Makefile: STUDENT_C is '' but labs/07-mpi-split/rubric's student-file lines name 'exchange.c': write STUDENT_C := exchange.c above include ../lab.mk" \
    "$work/plan.log"
grep -v '^USES_MPI' "$work/Makefile" >"$lab/Makefile"
status=0
build_plan || status=$?
check "make stops without USES_MPI (exit status $status)" test "$status" -ne 0
check "it says which setting to write" \
    grep -q "labs/07-mpi-split/rubric says 'launcher mpirun' but USES_MPI is not 1: write USES_MPI := 1 above include ../lab.mk" \
    "$work/plan.log"
cp "$work/Makefile" "$lab/Makefile"

echo "a new lab folder (a copy of lab 01 as 08-copy) before its rubric names it:"
cp -r "$top/labs/01-straightforward" "$kit/labs/08-copy"
rm -rf "$kit/labs/08-copy/build"
status=0
grade >"$work/grade.log" 2>&1 || status=$?
check "the session stops (exit status $status)" test "$status" = 1
check "it points at the block in the copied rubric (file:line)" \
    grep -q "$kit/labs/08-copy/rubric:2: lab 01-straightforward: this is the rubric of labs/08-copy, which describes that lab only: write 'lab 08-copy'" \
    "$work/grade.log"
checks_done test-lab-folder
