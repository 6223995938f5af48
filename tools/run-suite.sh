#!/usr/bin/env bash
# Run one Criterion test binary, keep its TAP report for the summary. Its output goes to
# REPORT_DIR/SUITE_NAME.log and is shown only when the suite fails: tests of error paths print
# the errors they expect, which would read like failures. A passing suite is one line.
# usage: run-suite.sh REPORT_DIR SUITE_NAME BINARY [criterion options...]
set -u
report_dir=$1 name=$2 bin=$3
shift 3
mkdir -p "$report_dir"
tap="$report_dir/$name.tap" log="$report_dir/$name.log"
rm -f "$tap" "$log" "$report_dir/$name.status"
"$bin" --tap="$tap" "$@" >"$log" 2>&1
status=$?
echo "$status" > "$report_dir/$name.status"
if [ "$status" -ne 0 ] || grep -q '^not ok' "$tap" 2>/dev/null; then
    echo "-------- $name FAILED (exit status $status); its output, also in $log:"
    cat "$log"
    echo "-------- end of $name's output"
else
    counts=$(awk '/^ok .*# SKIP/ { s++; next } /^ok / { p++ }
                  END { printf "%d passed, %d skipped", p, s }' "$tap" 2>/dev/null)
    printf '  %-7s %s: %s\n' PASS "$name" "$counts"
fi
exit 0
