#!/bin/sh
# make bench for lab 06: every variant of the sum, CUB's included, on 2^20, 2^24 and 2^28
# values, then Lagrange interpolation. A step is one sum (one evaluation of the polynomial):
# enough steps that the copy of the input, timed apart (0 steps) and subtracted, does not
# drown them. Usage: bench.sh DRIVER [CSV]
set -e
prog=$1
csv=${2:+--csv $2}
"$prog" --bench --dataset reduce-2p20 --steps 2000 $csv
"$prog" --bench --dataset reduce-2p24 --steps 1000 $csv
"$prog" --bench --dataset reduce-2p28 --steps 1000 $csv
"$prog" --bench --dataset lagrange-bench --variant lagrange --steps 50 $csv
