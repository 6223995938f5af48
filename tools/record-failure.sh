#!/usr/bin/env bash
# Record, for the summary, a suite that could not run: its programs did not build. Writes a
# one-test TAP report that fails with MESSAGE, so the summary counts it, and MESSAGE in
# NAME.fix, which the summary prints as what to do.
# usage: record-failure.sh REPORT_DIR SUITE_NAME MESSAGE
set -u
report_dir=${1:?usage: record-failure.sh REPORT_DIR SUITE_NAME MESSAGE} name=${2:?suite name}
message=${3:?message}
mkdir -p "$report_dir"
printf 'TAP version 13\n1..1\nnot ok 1 - %s\n' "$message" > "$report_dir/$name.tap"
echo 1 > "$report_dir/$name.status"
printf '%s\n' "$message" > "$report_dir/$name.fix"
