#!/usr/bin/env bash
# Block-shape sweep on the large grid: `--bench` once per shape, then one Markdown table to
# paste into your report. Labs 01 and 02 (block shapes) and 03 (tile shapes) use it.
#
# usage: ./sweep.sh [WxH ...]        (no shapes: the list below)
# environment: VARIANT=student|solution  which build (default student)
#              STEPS=N                   GPU steps per timed run (default 500)
#              EXTRA="options"           more driver options, e.g. "--dataset swe-dam-1000"
set -euo pipefail
kit=$(cd "$(dirname "$0")/../.." && pwd)
cd "${LAB_DIR:-$(dirname "$0")}"
lab=$(basename "$PWD")
prog=${PROG:-build/${VARIANT:-student}/lab${lab%%-*}}
# Each timed run holds the GPU lock the grader and make bench take.
locked=("$kit/tools/gpu-lock.sh" -)
if [ ! -x "$prog" ]; then
    echo "sweep: $prog not found: run make${VARIANT:+ VARIANT=$VARIANT} first" >&2
    exit 1
fi
if [ $# -gt 0 ]; then
    shapes=("$@")
else
    read -r -a shapes <<<"${SHAPES:-32x1 64x1 128x1 256x1 1024x1 32x2 32x4 32x8 32x16 32x32 16x16 8x32 64x4 128x2 1x32 1x256}"
fi
printf '| block | ms per step | effective GB/s | %% of copy | speedup vs serial | speedup vs given |\n'
printf '|---|---|---|---|---|---|\n'
for s in "${shapes[@]}"; do
    # shellcheck disable=SC2086
    if ! out=$("${locked[@]}" "$prog" --bench --block "$s" --steps "${STEPS:-500}" --repeat 3 ${EXTRA:-} 2>&1); then
        printf '| %s | failed: %s |\n' "$s" "$(tail -n 1 <<<"$out")"
        continue
    fi
    ms=$(awk '/time per step/ {print $4}' <<<"$out")
    grep -q '^  NOISE' <<<"$out" && ms="$ms (noise)"
    gbs=$(awk '/effective bandwidth/ {print $3}' <<<"$out")
    pct=$(awk '/% of copy/ {print $4}' <<<"$out")
    vs_serial=$(awk '/speedup vs serial/ {print $NF}' <<<"$out")
    vs_given=$(awk '/speedup vs/ && !/serial/ {print $NF}' <<<"$out")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$s" "$ms" "$gbs" "$pct" "$vs_serial" "${vs_given:--}"
done
