#!/usr/bin/env bash
# Run-to-run spread of a sum variant: run it RUNS times on one dataset (each run a fresh
# process, --gpu, checked against its tolerance) and count the distinct sums it printed, how
# far apart they are in units in the last place and as a fraction of the tolerance bound.
# A deterministic rung must print one sum; the atomic rung may print several. Needs a GPU.
#
# usage: ./spread.sh [DATASET [VARIANT [RUNS]]]   (default: reduce-2p24 atomic 20)
#   VARIANT=solution in the environment times the solution (PROG= picks any driver)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${PROG:-$here/build/${VARIANT:-student}/lab06}
dataset=${1:-reduce-2p24}
variant=${2:-atomic}
runs=${3:-20}

if [ ! -x "$prog" ]; then
    echo "spread: $prog not found: run make${VARIANT:+ VARIANT=$VARIANT} first" >&2
    exit 1
fi
case $runs in '' | *[!0-9]* | 0)
    echo "spread: RUNS must be a positive whole number, got '$runs'" >&2
    exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq "$runs"); do
    if ! "$prog" --gpu --dataset "$dataset" --variant "$variant" --out "$work/run$i.txt" \
        >"$work/log$i.txt" 2>&1; then
        echo "spread: run $i of $prog --gpu --dataset $dataset --variant $variant failed:" >&2
        cat "$work/log$i.txt" >&2
        exit 1
    fi
done

# The sum is printed with 17 significant digits: the same text is the same double.
awk -v runs="$runs" -v dataset="$dataset" -v variant="$variant" '
    $1 == "sum" { n[$2]++; if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } }
    $1 == "bound" { bound = $2 }
    END {
        if (k == 0) { print "spread: no sum in the outputs" > "/dev/stderr"; exit 1 }
        lo = hi = order[1] + 0
        for (i = 1; i <= k; i++) {
            v = order[i] + 0
            if (v < lo) lo = v
            if (v > hi) hi = v
        }
        a = hi < 0 ? -hi : hi
        if (-lo > a) a = -lo
        ulp = a > 0 ? 2 ^ (int(log(a) / log(2)) - 52) : 2 ^ -1074
        printf "%s, --variant %s, %d runs: %d distinct sum%s\n", dataset, variant, runs, k,
               (k == 1 ? "" : "s")
        for (i = 1; i <= k; i++)
            printf "  %-26s x %d\n", order[i], n[order[i]]
        printf "spread %.3g = %.0f ulp; tolerance bound %.3g: spread / bound = %.2g\n",
               hi - lo, (hi - lo) / ulp, bound, (bound > 0 ? (hi - lo) / bound : 0)
    }' "$work"/run*.txt
