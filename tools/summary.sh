#!/usr/bin/env bash
# One-screen summary of the suites run by `make check`: passed / failed / skipped per suite,
# and a loud line when GPU tests were skipped. Exit 1 if any suite failed or did not report.
# usage: summary.sh REPORT_DIR
set -u
report_dir=$1
bad=0 total_skip=0 no_gpu=0
# Every suite's counts, two suites a line so that 45 of them fit a screen ("!!" marks a suite
# that failed), then the failed ones named with what went wrong.
cells=() failed=()
for status_file in "$report_dir"/*.status; do
    [ -e "$status_file" ] || { echo "no test suite reported in $report_dir"; exit 1; }
    name=$(basename "$status_file" .status)
    tap="$report_dir/$name.tap"
    status=$(cat "$status_file")
    if [ ! -s "$tap" ]; then
        cells+=("$(printf '%-22s %5s %4s %4s !!' "$name" - - -)")
        failed+=("$name: NO REPORT (exit status $status: the test binary crashed or did not start)")
        bad=1; continue
    fi
    read -r pass fail skip < <(awk '
        /^ok .*# SKIP/ { s++; next }
        /^ok /         { p++; next }
        /^not ok /     { f++ }
        END { print p+0, f+0, s+0 }' "$tap")
    mark="  "
    if [ "$fail" -gt 0 ] || [ "$status" != 0 ]; then
        mark="!!" bad=1
        failed+=("$name: $fail test(s) failed${status:+, exit status $status}")
    fi
    cells+=("$(printf '%-22s %5d %4d %4d %s' "$name" "$pass" "$fail" "$skip" "$mark")")
    total_skip=$((total_skip + skip))
done
head=$(printf '%-22s %5s %4s %4s' suite passed fail skip)
printf '\n%s       %s\n' "$head" "$head"
half=$(( (${#cells[@]} + 1) / 2 ))
for ((i = 0; i < half; i++)); do
    printf '%s' "${cells[i]}"
    [ $((i + half)) -lt "${#cells[@]}" ] && printf '    %s' "${cells[i + half]}"
    printf '\n'
done | sed 's/ *$//'
if [ "${#failed[@]}" -gt 0 ]; then
    echo
    printf '!!!!!!!! FAILED %s\n' "${failed[@]}"
fi
if [ "$total_skip" -gt 0 ]; then
    # The reason the GPU tests give on a machine without a GPU (LK_NO_GPU, labkit/cuda_check.h).
    no_gpu_reason="no GPU on this machine"
    reasons=$(grep -h '# SKIP' "$report_dir"/*.tap | sed 's/.*# SKIP *//')
    no_gpu=$(grep -cx "$no_gpu_reason" <<<"$reasons")
    others=$(grep -vx "$no_gpu_reason" <<<"$reasons" | sort | uniq -c | sort -rn | head -n 3)
    echo
    if [ "$no_gpu" -gt 0 ]; then
        echo "!!!!!!!! $no_gpu GPU TEST(S) SKIPPED: $no_gpu_reason: the GPU code was NOT tested here"
    fi
    if [ -n "$others" ]; then
        echo "!!!!!!!! $((total_skip - no_gpu)) TEST(S) SKIPPED for other reasons (most frequent first):"
        echo "$others" | sed 's/^/!!!!!!!!   /'
    fi
fi
# Suites that could not run (tools/record-failure.sh): what to fix first.
fixes=("$report_dir"/*.fix)
if [ -e "${fixes[0]}" ]; then
    echo
    for fix in "${fixes[@]}"; do
        echo "!!!!!!!! $(basename "$fix" .fix): $(cat "$fix")"
    done
fi
echo
if [ "$bad" -ne 0 ]; then echo "make check: FAILED"; exit 1; fi
# The last line says what was tested: without a GPU the GPU code was not (the status stays 0).
if [ "$no_gpu" -gt 0 ]; then
    echo "make check: CPU suites passed; the GPU code was NOT tested ($no_gpu GPU tests skipped: $no_gpu_reason)"
else
    echo "make check: all suites passed"
fi
