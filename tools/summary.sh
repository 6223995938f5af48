#!/usr/bin/env bash
# One-screen summary of the suites run by `make check`: passed / failed / skipped per area,
# and a loud line when GPU tests were skipped. Exit 1 if any suite failed or did not report.
# usage: summary.sh REPORT_DIR
set -u
report_dir=$1
bad=0 total_skip=0
# One row per area (common, datasets, labNN-VARIANT, grader): its suites' counts summed, and
# the suites that failed or did not report named, so that the table fits a screen.
declare -A pass_of=() fail_of=() skip_of=() bad_of=()
areas=()
for status_file in "$report_dir"/*.status; do
    [ -e "$status_file" ] || { echo "no test suite reported in $report_dir"; exit 1; }
    name=$(basename "$status_file" .status)
    case $name in
        lab[0-9]*-*-*) area=${name%-*} ;;
        *-*) area=${name%%-*} ;;
        *) area=$name ;;
    esac
    suite=${name#"$area"-}
    [ -n "${pass_of[$area]+set}" ] || { areas+=("$area"); pass_of[$area]=0 fail_of[$area]=0 skip_of[$area]=0 bad_of[$area]=""; }
    tap="$report_dir/$name.tap"
    status=$(cat "$status_file")
    if [ ! -s "$tap" ]; then
        bad_of[$area]+=" $suite (NO REPORT, exit status $status: the test binary crashed or did not start)"
        bad=1; continue
    fi
    read -r pass fail skip < <(awk '
        /^ok .*# SKIP/ { s++; next }
        /^ok /         { p++; next }
        /^not ok /     { f++ }
        END { print p+0, f+0, s+0 }' "$tap")
    pass_of[$area]=$((pass_of[$area] + pass)) fail_of[$area]=$((fail_of[$area] + fail))
    skip_of[$area]=$((skip_of[$area] + skip))
    if [ "$fail" -gt 0 ] || [ "$status" != 0 ]; then bad_of[$area]+=" $suite"; bad=1; fi
    total_skip=$((total_skip + skip))
done
printf '\n%-22s %7s %7s %7s\n' tests passed failed skipped
printf '%-22s %7s %7s %7s\n' ---------------------- ------ ------ -------
for area in "${areas[@]}"; do
    mark=""
    [ -z "${bad_of[$area]}" ] || mark="  <-- FAILED:${bad_of[$area]}"
    printf '%-22s %7d %7d %7d%s\n' "$area" "${pass_of[$area]}" "${fail_of[$area]}" "${skip_of[$area]}" "$mark"
done
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
echo "make check: all suites passed"
