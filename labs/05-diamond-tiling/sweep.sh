#!/usr/bin/env bash
# Tile sweep of lab 05: time diamonds of several widths and hexagons of several heights (the
# driver's --bench, on the DRAM-bound dataset unless told otherwise) and print one table.
# Needs a GPU.
#
# usage: ./sweep.sh [options passed to every --bench run, e.g. --dataset string-random-40k]
#   VARIANT=solution ./sweep.sh          time the solution instead of your kernels.cu
#   DIAMOND_TILES="64x32 128x64" ./sweep.sh   other diamonds (WIDTHxWIDTH/2)
#   HONEYCOMB_TILES="512x32 1024x64" ./sweep.sh   other hexagons (WIDTHxHEIGHT, 2 HEIGHT <= WIDTH)
#   CSV=sweep.csv ./sweep.sh             also write the table as CSV
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${PROG:-$here/build/${VARIANT:-student}/lab05}
locked=("$here/../../tools/gpu-lock.sh" -) # each timed run holds the grader's GPU lock
diamond_tiles=${DIAMOND_TILES:-32x16 64x32 128x64 256x128 512x256 1024x512}
honeycomb_tiles=${HONEYCOMB_TILES:-256x16 256x32 256x64 512x16 512x32 512x64 512x128 1024x32 1024x64 1024x128 1024x256}
csv=${CSV:-}

if [ ! -x "$prog" ]; then
    echo "sweep: $prog not found: run make${VARIANT:+ VARIANT=$VARIANT} first" >&2
    exit 1
fi

[ -n "$csv" ] && echo "variant,tile,width_over_height,ms_per_step,speedup_vs_linear" > "$csv"
printf '%-10s %-9s %6s %12s %10s\n' variant tile "W/H" "ms/step" "vs linear"
printf '%-10s %-9s %6s %12s %10s\n' ---------- --------- ------ ------------ ----------
device=""
for v in diamond honeycomb; do
    tiles=$diamond_tiles
    [ "$v" = honeycomb ] && tiles=$honeycomb_tiles
    for t in $tiles; do
        w=${t%x*} h=${t#*x}
        # One serial step is enough to check the result; the GPU steps are the bench's.
        out=$("${locked[@]}" "$prog" --bench --serial-steps 1 --variant "$v" --tile "$t" "$@" 2>&1)
        status=$?
        if [ $status -ne 0 ] && echo "$out" | grep -q "no CUDA device\|no GPU"; then
            echo "$out" | tail -n 1 >&2
            exit 1
        fi
        if [ $status -ne 0 ]; then
            printf '%-10s %-9s %6s %s\n' "$v" "$t" "" "failed: $(echo "$out" | tail -n 1 | cut -c1-160)"
            continue
        fi
        [ -z "$device" ] && device=$(echo "$out" | sed -n 's/^bench .* on //p' | head -n 1)
        ms=$(echo "$out" | awk '/time per step/ {print $4}')
        echo "$out" | grep -q '^  NOISE' && ms="$ms (noise)"
        vs=$(echo "$out" | awk '/speedup vs linear/ {print $4}')
        ratio=$(awk -v w="$w" -v h="$h" 'BEGIN { printf "%.1f", w / h }')
        printf '%-10s %-9s %6s %12s %10s\n' "$v" "$t" "$ratio" "$ms" "$vs"
        [ -n "$csv" ] && echo "$v,$t,$ratio,$ms,${vs%x}" >> "$csv"
    done
done
echo
echo "device: ${device:-unknown}"
