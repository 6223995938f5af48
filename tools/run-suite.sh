#!/usr/bin/env bash
# Run one Criterion test binary, keep its TAP report for the summary, pass its output through.
# usage: run-suite.sh REPORT_DIR SUITE_NAME BINARY [criterion options...]
set -u
report_dir=$1 name=$2 bin=$3
shift 3
mkdir -p "$report_dir"
tap="$report_dir/$name.tap"
rm -f "$tap" "$report_dir/$name.status"
"$bin" --tap="$tap" "$@"
status=$?
echo "$status" > "$report_dir/$name.status"
exit 0
