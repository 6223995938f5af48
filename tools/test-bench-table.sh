#!/usr/bin/env bash
# tools/bench-table.sh: record splits a make bench CSV into one file per lab and GPU (a new
# run replaces the GPU's file), update writes the tables between the markers, check fails,
# naming file and line, on a table that differs from its files; bad input is refused in one
# line. Runs on a scratch kit; last, the kit's own handouts and decks must match their files.
# usage: test-bench-table.sh
set -uo pipefail
source "$(dirname "$0")/testlib.sh"

kit=$work/kit
not_ok() { ! "$@" >/dev/null 2>&1; }
mkdir -p "$kit/tools" "$kit/labs/01-demo" "$kit/labs/02-other"
cp "$here/bench-table.sh" "$here/csv.awk" "$kit/tools/"
tool=$kit/tools/bench-table.sh
header='lab,gpu,dataset,rows,cols,steps,launch,ms_per_step,cell_updates_per_s,effective_GBps,copy_GBps,memcpy_GBps,copy_kernel_GBps,pct_of_copy,serial_ms_per_step,speedup,formula_bytes_per_cell,bound_bytes_per_cell,bound_ms_per_step,resolved'
# bench_csv FILE GPU MS: a make bench CSV with lab 01-demo's two datasets and one row of 02-other.
bench_csv() {
    { echo "$header"
      echo "01-demo,\"$2 (sm_90, 132 SMs, driver 13.0)\",big,4096,4096,1000,\"block 128x2\",$3,4.0e+10,5141.61,2943.11,2943.11,2771.03,174.70,934.5,2237.45,128,24,0.1368,1"
      echo "01-demo,\"$2 (sm_90, 132 SMs, driver 13.0)\",wet,4096,4096,1000,\"block 128x2\",0.777041,2.1e+10,2763.67,2924.13,2924.13,2747.66,94.51,624.5,803.73,128,24,0.1377,0"
      echo "02-other,\"$2 (sm_90, 132 SMs, driver 13.0)\",swe,8192,8192,1000,\"block 32x8\",1.184258,5.6e+10,2720.04,2967.54,2967.54,2783.80,91.66,1803.1,1522.60,48,48,1.0854,1"
    } >"$1"
}
bench_csv "$work/h100.csv" "NVIDIA H100 80GB HBM3" 0.417668
bench_csv "$work/h100-new.csv" "NVIDIA H100 80GB HBM3" 0.401234
bench_csv "$work/h200.csv" "NVIDIA H200" 0.360001
src=$kit/labs/01-demo/bench/nvidia-h100-80gb-hbm3.csv

# ---- record ---------------------------------------------------------------------------------
quiet() { "$@" >/dev/null; }
check "record writes one file per lab and GPU" quiet "$tool" record "$work/h100.csv" 2026-11-25
check "the lab's file holds its rows only" \
    test "$(grep -c '^01-demo,' "$src")" = 2 -a "$(grep -c '^02-other,' "$src")" = 0
check "the file says the command and the date" \
    grep -qx '# command: make bench' "$src"
check "... and the date" grep -qx '# date: 2026-11-25' "$src"
check "another lab gets its own file" test -s "$kit/labs/02-other/bench/nvidia-h100-80gb-hbm3.csv"

# ---- update and check -------------------------------------------------------------------------
doc=$kit/labs/01-demo/README.md
printf '# Demo\n\n## Measured\n\n<!-- bench-table 01-demo -->\n<!-- /bench-table -->\n\nAfter.\n\n<!-- bench-table 01-demo dataset=big style=brief -->\nstale text\n<!-- /bench-table -->\n' >"$doc"
check "check fails on an empty table" not_ok "$tool" check "$doc"
check "update fills the tables" quiet "$tool" update "$doc"
check "check passes once updated" quiet "$tool" check "$doc"
check "the full table has both datasets" grep -q '^| `wet` | block 128x2 | 1000 | 0.7770 (noise) |' "$doc"
check "the full table states command, date and GPU" \
    grep -q '^`make bench`, 2026-11-25, on an NVIDIA H100 80GB HBM3 (sm_90' "$doc"
check "the brief table is one row for one GPU" \
    test "$(grep -c '^| block 128x2 | 0.4177 | 2237x |$' "$doc")" = 1
check "the text around the markers stays" grep -qx 'After.' "$doc"
cp "$doc" "$work/before.md"
"$tool" update "$doc" >/dev/null
check "update twice changes nothing" cmp -s "$doc" "$work/before.md"

# A hand-edited number: check names the file and the block's line.
sed -i 's/| 0.4177 |/| 0.4000 |/' "$doc"
out=$("$tool" check "$doc" 2>&1); status=$?
check "check fails on a hand-edited row" test "$status" = 1
check "... naming the file and the marker's line" \
    grep -qF "$doc:5: the table differs from its source files" <<<"$out"
"$tool" update "$doc" >/dev/null

# A new run replaces the GPU's file: the old numbers go, the table is stale until updated.
"$tool" record "$work/h100-new.csv" 2026-11-28 >/dev/null
check "a new run of the same GPU replaces its file" \
    test "$(ls "$kit/labs/01-demo/bench" | wc -l)" = 1 -a "$(grep -c '0.417668' "$src")" = 0
check "check fails after a new run until update" not_ok "$tool" check "$doc"
"$tool" record "$work/h200.csv" 2026-11-28 >/dev/null
"$tool" update "$doc" >/dev/null
check "a second GPU: one row per GPU in the brief table, with its name" \
    test "$(grep -cE '^\| NVIDIA (H100 80GB HBM3|H200), 2026-11-28 \| block 128x2 \|' "$doc")" = 2
check "... and no row of the replaced run" not_ok grep -q '0.4177' "$doc"
printf '<!-- bench-table 01-demo dataset=big gpu=nvidia-h200 style=brief -->\n<!-- /bench-table -->\n' >"$work/one-gpu.md"
"$tool" update "$work/one-gpu.md" >/dev/null
check "gpu= keeps that GPU's file only" \
    test "$(grep -c '^| block 128x2 | 0.3600 | 2237x |$' "$work/one-gpu.md")" = 1 -a "$(grep -c '^|.*0.4012' "$work/one-gpu.md")" = 0

# ---- bad input: one line, file:line, non-zero ---------------------------------------------------
# refused WHAT EXPECTED COMMAND...: fails with status 1 and a message holding EXPECTED.
refused() {
    local what=$1 want=$2 out status
    shift 2
    out=$("$@" 2>&1); status=$?
    if [ "$status" = 1 ] && grep -qF -- "$want" <<<"$out"; then echo "  ok    refused: $what"
    else echo "  FAIL  refused: $what: status $status, wanted '$want', got: $out" >&2; fails=$((fails + 1)); fi
}
refused "a date not YYYY-MM-DD" "'25.11.2026': give the run's date as YYYY-MM-DD" \
    "$tool" record "$work/h100.csv" 25.11.2026
echo "not,a,bench" >"$work/other.csv"
refused "a CSV that is not make bench's" "$work/other.csv:1: not a make bench CSV" \
    "$tool" record "$work/other.csv" 2026-11-28
sed 's/^01-demo,/09-none,/' "$work/h100.csv" >"$work/unknown.csv"
refused "a lab the kit does not have" "$work/unknown.csv:2: lab '09-none' has no folder" \
    "$tool" record "$work/unknown.csv" 2026-11-28
printf 'x\n<!-- bench-table 01-demo colour=red -->\n<!-- /bench-table -->\n' >"$work/bad-option.md"
refused "an unknown marker option" "$work/bad-option.md:2: unknown option 'colour=red'" \
    "$tool" check "$work/bad-option.md"
printf '<!-- bench-table 01-demo -->\n' >"$work/unclosed.md"
refused "a block without its end" "$work/unclosed.md:1: the bench-table block has no closing" \
    "$tool" check "$work/unclosed.md"
printf '<!-- bench-table 01-demo gpu=nvidia-a100 -->\n<!-- /bench-table -->\n' >"$work/no-gpu.md"
refused "a GPU without a file" "$work/no-gpu.md:1: no file labs/01-demo/bench/nvidia-a100.csv" \
    "$tool" check "$work/no-gpu.md"
printf '<!-- bench-table 07-gone -->\n<!-- /bench-table -->\n' >"$work/no-lab.md"
refused "a marker naming no lab" "$work/no-lab.md:1: no lab '07-gone'" "$tool" check "$work/no-lab.md"

# ---- the kit's own tables ------------------------------------------------------------------------
check "the kit's handouts and decks match labs/*/bench/" quiet "$here/bench-table.sh" check
checks_done test-bench-table
