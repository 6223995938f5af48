#!/usr/bin/env bash
# A lab's make check applies the grader's static rules (labkit-grade --static, the grader's
# own code): lab 01's skeleton with a call of the kit's per-cell flows, which make grade
# rejects, fails the lab's make check with the grader's reason, as a failed suite; the
# examples make grade rejects get the same verdict from labkit-grade --static; the skeleton
# itself passes them. Without a GPU: only builds and the static checks run.
# usage: test-grader-rules.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
unset MAKEFLAGS MFLAGS
lab=$top/labs/01-straightforward
# The skeleton plus a kernel that calls the kit's flows instead of porting them.
cp "$lab/kernels.cu" "$work/kernels.cu"
cat >>"$work/kernels.cu" <<'EOF'
__global__ void kit_flows(const double *z, const double *h, double *f)
{
    sciddicat_flows_cell(1, 1, 3, 3, z, h, f, SCIDDICAT_P_R, SCIDDICAT_P_EPSILON);
}
EOF
call_line=$(grep -n 'sciddicat_flows_cell(1, 1' "$work/kernels.cu" | cut -d: -f1)

echo "lab 01's make check with a kernels.cu that calls sciddicat_flows_cell:"
status=0
make --no-print-directory -C "$lab" check KERNELS="$work/kernels.cu" B="$work/lab" \
    >"$work/lab.log" 2>&1 || status=$?
check "it fails" test "$status" -ne 0
check "the rules are a failed suite of the summary" \
    grep -Eq 'lab01-student-rules +0 +1 +0 !!' "$work/lab.log"
check "it gives the grader's reason with the file and line ($call_line)" \
    grep -q "rejected: kernels.cu:$call_line: uses sciddicat_flows_cell: this lab asks you to write" \
    "$work/lab.log"
check "it says make grade gives the lab 0" grep -q 'make grade gives this lab 0' "$work/lab.log"
check "the lab's tests still ran" grep -Eq 'lab01-student-serial +[1-9]' "$work/lab.log"
check "it ends with make check: FAILED" grep -q '^make check: FAILED' "$work/lab.log"

echo "the grader's own verdict on the same file (make grade's static stage):"
grader=${LK_BUILD:-$top/build}/grader/labkit-grade
status=0
"$grader" --lib "${LK_BUILD:-$top/build}/common/liblabkit.a" --static 01-straightforward \
    --objects "$work/lab" KERNELS="$work/kernels.cu" >"$work/static.log" 2>&1 || status=$?
check "labkit-grade --static rejects it: exit status 3 ($status)" test "$status" = 3
status=0
"$grader" --static 01-straightforward KERNELS="$work/kernels.cu" >"$work/usage.log" 2>&1 ||
    status=$?
check "--static without --objects: usage, exit status 2 ($status)" test "$status" = 2

# The example submissions make grade rejects without a GPU (their README's table, where the
# instructor's kit has them): the same verdict, naming what the table says it mentions.
examples=$top/grader/examples
if [ -d "$examples" ]; then
    echo "the example submissions make grade rejects:"
    while read -r name lab_id mentions; do
        dir=$(cd "$top/labs" && echo "$lab_id"-*)
        file=$examples/$name/labs/$dir/kernels.cu
        make -s --no-print-directory -C "$top/labs/$dir" B="$work/$name" KERNELS="$file" \
            "$work/$name/kernels.o" </dev/null >/dev/null 2>&1 || true
        status=0
        "$grader" --lib "${LK_BUILD:-$top/build}/common/liblabkit.a" --static "$dir" \
            --objects "$work/$name" KERNELS="$file" </dev/null >"$work/$name.log" 2>&1 ||
            status=$?
        check "$name: rejected (exit status $status), naming $mentions" \
            bash -c "[ $status = 3 ] && grep -q 'rejected: .*$mentions' '$work/$name.log'"
    done < <(awk -F'|' '/^\| [a-z]/ { gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $8)
                                      r = $7; gsub(/^ +| +$/, "", r)
                                      if ($8 == "rejected") print $2, $3, r }' "$examples/README.md")
fi

echo "lab 01's skeleton:"
status=0
"$grader" --lib "${LK_BUILD:-$top/build}/common/liblabkit.a" --static 01-straightforward \
    --objects "$work/skeleton" KERNELS="$lab/kernels.cu" >"$work/skeleton.log" 2>&1 || status=$?
check "without its object: an error that says to build first ($status)" \
    grep -q 'kernels.o: missing: build the lab first' "$work/skeleton.log"
make -s --no-print-directory -C "$lab" B="$work/skeleton" "$work/skeleton/kernels.o" >/dev/null
status=0
"$grader" --lib "${LK_BUILD:-$top/build}/common/liblabkit.a" --static 01-straightforward \
    --objects "$work/skeleton" KERNELS="$lab/kernels.cu" >"$work/skeleton.log" 2>&1 || status=$?
check "it passes the grader's rules ($status)" test "$status" = 0
checks_done test-grader-rules
