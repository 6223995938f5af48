#!/bin/sh
# make bench for lab 06: every variant of the sum, CUB's included, on 2^20, 2^24 and 2^28
# values, then Lagrange interpolation. Usage: bench.sh DRIVER [CSV]
set -e
prog=$1
csv=${2:+--csv $2}
for dataset in reduce-2p20 reduce-2p24 reduce-2p28; do
    "$prog" --bench --dataset "$dataset" $csv
done
"$prog" --bench --dataset lagrange-bench --variant lagrange $csv
