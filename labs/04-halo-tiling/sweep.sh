#!/usr/bin/env bash
# Tile-size sweep of lab 04: time every variant with every tile (the driver's --bench, on the
# large dataset unless told otherwise) and print one table. Needs a GPU.
#
# usage: ./sweep.sh [options passed to every --bench run, e.g. --steps 100]
#   VARIANT=solution ./sweep.sh        time the solution instead of your kernels.cu
#   VARIANTS="halo nohalo" ./sweep.sh  only these variants
#   HALO_TILES="8x4 32x8" NOHALO_TILES=... FUSED_TILES=... FAST_TILES=... ./sweep.sh   other tiles
#   CSV=sweep.csv ./sweep.sh           also write the table as CSV
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${PROG:-$here/build/${VARIANT:-student}/lab04}
locked=("$here/../../tools/gpu-lock.sh" -) # each timed run holds the grader's GPU lock
variants=${VARIANTS:-halo nohalo fused fast}
halo_tiles=${HALO_TILES:-8x4 8x8 16x4 16x8 32x4 32x8 30x6 62x6 14x14 30x14 30x30}
nohalo_tiles=${NOHALO_TILES:-8x4 8x8 16x4 16x8 32x4 32x8 32x16 64x4 128x2 16x16 32x32}
fused_tiles=${FUSED_TILES:-8x4 16x8 30x6 62x6 14x14 30x14 62x14 30x30}
fast_tiles=${FAST_TILES:-16x8 32x4 32x8 32x16 64x4 64x8 32x32}
csv=${CSV:-}

if [ ! -x "$prog" ]; then
    echo "sweep: $prog not found: run make${VARIANT:+ VARIANT=$VARIANT} first" >&2
    exit 1
fi

# Halo and fused blocks are the tile plus a one-cell ring; nohalo and fast blocks are the tile.
block_of() {
    local v=$1 tx=${2%x*} ty=${2#*x}
    if [ "$v" = nohalo ] || [ "$v" = fast ]; then echo "${tx}x${ty}"; else echo "$((tx + 2))x$((ty + 2))"; fi
}

[ -n "$csv" ] && echo "variant,tile,block,ms_per_step,effective_GBps,pct_of_copy" > "$csv"
printf '%-8s %-7s %-7s %12s %12s %10s\n' variant tile block "ms/step" "eff. GB/s" "% copy"
printf '%-8s %-7s %-7s %12s %12s %10s\n' -------- ------- ------- ------------ ------------ ----------
device=""
for v in $variants; do
    case $v in
        halo) tiles=$halo_tiles ;;
        nohalo) tiles=$nohalo_tiles ;;
        fused) tiles=$fused_tiles ;;
        fast) tiles=$fast_tiles ;;
        *) echo "sweep: unknown variant '$v': use halo, nohalo, fused or fast" >&2; exit 1 ;;
    esac
    for t in $tiles; do
        b=$(block_of "$v" "$t")
        # One serial step is enough to check the result; the GPU steps are the bench's.
        out=$("${locked[@]}" "$prog" --bench --serial-steps 1 --variant "$v" --tile "$t" "$@" 2>&1)
        status=$?
        if [ $status -ne 0 ] && echo "$out" | grep -q "no CUDA device"; then
            echo "$out" | tail -n 1 >&2
            exit 1
        fi
        if [ $status -ne 0 ]; then
            printf '%-8s %-7s %-7s %s\n' "$v" "$t" "$b" "failed: $(echo "$out" | tail -n 1 | cut -c1-160)"
            continue
        fi
        [ -z "$device" ] && device=$(echo "$out" | sed -n 's/^bench .* on //p' | head -n 1)
        ms=$(echo "$out" | awk '/time per step/ {print $4}')
        echo "$out" | grep -q '^  NOISE' && ms="$ms (noise)"
        gbs=$(echo "$out" | awk '/effective bandwidth/ {print $3}')
        pct=$(echo "$out" | awk '/% of copy/ {print $4}')
        printf '%-8s %-7s %-7s %12s %12s %10s\n' "$v" "$t" "$b" "$ms" "$gbs" "$pct"
        [ -n "$csv" ] && echo "$v,$t,$b,$ms,$gbs,$pct" >> "$csv"
    done
done
echo
echo "device: ${device:-unknown}"
echo "effective GB/s counts the three-kernel step's 128 B per cell for every variant (the fused"
echo "step moves about 24 B per cell, so its figure can exceed the copy bandwidth)."
