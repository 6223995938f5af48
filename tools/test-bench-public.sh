#!/usr/bin/env bash
# bench-public.sh without a GPU: stand-ins for nvidia-smi, nvcc (it "builds" a public program
# that prints the step-loop time and writes a result, a wrong one for the halo program at one
# block shape), make (labkit-gen and the kit's lab 01 reference) and a make bench CSV. Checks
# the refusals (bad PUBLIC_DIR, no GPU, bad options, a reference off the manifest's md5), the
# best block shape, the ms per step, the bandwidth columns and the wrong result in the launch.
# usage: test-bench-public.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"

bin=$work/bin public=$work/public build=$work/build
mkdir -p "$bin" "$public/code" "$build"
for p in naive tiled_basic_halo tiled_basic_no_halo tiled_CfAMe tiled_CfAMo; do
    echo "// stand-in" >"$public/code/sciddicaT_$p.cu"
done
cat >"$bin/nvidia-smi" <<'SH'
#!/usr/bin/env bash
[ "${FAKE_GPU:-1}" = 1 ] || exit 0
case "$*" in
    -L) echo "GPU 0: Fake GPU (UUID: GPU-0)" ;;
    *compute_cap*) echo "9.0" ;;
esac
SH
# nvcc -O3 -arch=sm_90 -w -include H -o OUT SRC: OUT prints " BX; BY; SECONDS" as their main
# does. Seconds per step: 0.5 ms at 32x8, 0.6 ms otherwise; the halo program's result is wrong
# at 32x8.
cat >"$bin/nvcc" <<'SH'
#!/usr/bin/env bash
[ "$2" = -arch=sm_90 ] && [ -f "$5" ] || { echo "nvcc: unexpected $*" >&2; exit 1; }
src=${*: -1}; out=$7
cat >"$out" <<PROG
#!/usr/bin/env bash
grep -q '^ncols' "\$1" || { echo "\$1 configuration header file not found"; exit 0; }
ms=0.6; [ "\$6x\$7" = 32x8 ] && ms=0.5
result="\$(cat "\$3") after \$5 steps"
[ "\$6x\$7" = 32x8 ] && [ "$(basename "$src")" = sciddicaT_tiled_basic_halo.cu ] && result=wrong
echo "\$result" >"\$4"; echo bin >"\$4.bin"
awk -v ms=\$ms -v n=\$5 -v x=\$6 -v y=\$7 'BEGIN { printf " %2d; %2d; %7.3f\n", x, y, ms * n / 1000 }'
PROG
chmod +x "$out"
SH
# make ... TARGET: labkit-gen (writes a 4 x 5 grid whose source names the dataset) and lab01
# (--out writes what the public programs write after the same steps).
cat >"$bin/make" <<'SH'
#!/usr/bin/env bash
target=${*: -1}
mkdir -p "$(dirname "$target")"
case $target in
*/labkit-gen) cat >"$target" <<'GEN'
#!/usr/bin/env bash
[ "$1" = --manifest ] && shift 2
printf 'ncols 5\nnrows 4\n' >"$3/$2_header.txt"; echo dem >"$3/$2_dem.txt"; echo "$2" >"$3/$2_source.txt"
GEN
;;
*/lab01) cat >"$target" <<'LAB'
#!/usr/bin/env bash
while [ $# -gt 0 ]; do case $1 in --dataset) ds=$2; shift ;; --steps) n=$2; shift ;; --out) out=$2; shift ;; esac; shift; done
echo "$ds after $n steps" >"$out"
LAB
;;
*) echo "make: unexpected target $target" >&2; exit 1 ;;
esac
chmod +x "$target"
SH
chmod +x "$bin"/*
{
    printf '# name model generator steps stored md5\n'
    printf 'sciddicat-large sciddicat valley 10 no %s\n' "$(echo "sciddicat-large after 10 steps" | md5sum | cut -d' ' -f1)"
    printf 'sciddicat-large-wet sciddicat flood 10 no %s\n' "$(echo "sciddicat-large-wet after 10 steps" | md5sum | cut -d' ' -f1)"
} >"$work/MANIFEST"
# A make bench CSV: copy 2000 GB/s, serial 900 ms per step; lab 02's row must not be copied.
header=lab,gpu,dataset,rows,cols,steps,launch,ms_per_step,cell_updates_per_s,effective_GBps,copy_GBps,memcpy_GBps,copy_kernel_GBps,pct_of_copy,serial_ms_per_step,speedup,formula_bytes_per_cell,bound_bytes_per_cell,bound_ms_per_step,resolved
{
    echo "$header"
    for ds in sciddicat-large sciddicat-large-wet; do
        echo "01-straightforward,\"Fake GPU (sm_90, 1 SMs)\",$ds,4,5,1000,\"block 128x2\",0.4,1,1,2000,2100,1900,50,900,2250,128,24,0.1,1"
        echo "04-halo-tiling,\"Fake GPU (sm_90, 1 SMs)\",$ds,4,5,1000,\"variant halo, tile 30x6\",0.9,1,1,2000,2100,1900,50,900,1000,128,24,0.1,1"
    done
    echo "02-coalescing,\"Fake GPU (sm_90, 1 SMs)\",swe-large,4,5,1000,\"block 32x8\",0.9,1,1,2000,2100,1900,50,900,1000,96,24,0.1,1"
} >"$work/kit.csv"

run() { # run ARG...: bench-public.sh with the stand-ins; output in $work/out
    PATH="$bin:$PATH" LK_BUILD="$build" "$here/bench-public.sh" "$@" >"$work/out" 2>&1
}
fails_with() { # fails_with TEXT ARG...
    local text=$1; shift
    ! run "$@" && grep -qF -- "$text" "$work/out"
}
common=(--kit-csv "$work/kit.csv" --manifest "$work/MANIFEST" --csv "$work/public.csv")

echo "bench-public.sh's refusals:"
check "a folder without their sources" fails_with "sciddicaT_naive.cu: not found: give a checkout" "${common[@]}" "$work"
check "no PUBLIC_DIR: usage" fails_with "usage: bench-public.sh" "${common[@]}"
check "a bad block shape" fails_with "--blocks: '32' is not WxH" --blocks 32 "${common[@]}" "$public"
check "an unknown program" fails_with "no program 'fast'" --programs naive,fast "${common[@]}" "$public"
check "a kit CSV that is not make bench's" fails_with "not a make bench CSV" --kit-csv "$work/MANIFEST" "$public"
check "no GPU" env FAKE_GPU=0 bash -c "$(declare -f run fails_with); here=$here work=$work bin=$bin build=$build;
    fails_with 'no GPU on this machine' ${common[*]} $public"
sed 's/\(sciddicat-large-wet .*\) [0-9a-f]*$/\1 0123456789abcdef0123456789abcdef/' "$work/MANIFEST" >"$work/MANIFEST.bad"
check "a reference off the manifest's md5" fails_with "fix the solution first" \
    --kit-csv "$work/kit.csv" --manifest "$work/MANIFEST.bad" --csv "$work/public.csv" "$public"

echo "bench-public.sh's rows:"
check "runs with the stand-ins" run "${common[@]}" --programs naive,halo "$public"
row() { grep -q "^$1,.*,$2,.*$3" "$work/public.csv"; }
check "the kit's rows of labs 01 and 04 kept, lab 02's not" \
    bash -c "[ \$(grep -c '^0[14]-.*block 128x2\|^0[14]-.*variant halo' '$work/public.csv') = 4 ] && ! grep -q '^02-' '$work/public.csv'"
check "header as make bench's" bash -c "head -n1 '$work/public.csv' | grep -qx '$header'"
check "naive: best block 32x8, 0.5 ms per step, right" \
    bash -c "$(declare -f row); work=$work; row 01-straightforward sciddicat-large '\"public naive, block 32x8\",0.500000,'"
check "naive on the wet grid too" \
    bash -c "$(declare -f row); work=$work; row 01-straightforward sciddicat-large-wet '\"public naive, block 32x8\",0.500000,'"
check "halo: a wrong result says so" \
    bash -c "$(declare -f row); work=$work; row 04-halo-tiling sciddicat-large '\"public tiled with halo, block 32x8, WRONG result\"'"
# 128 B x 20 cells / 0.5 ms = 0.00512 GB/s, 0.000256 % of 2000 GB/s; 900 / 0.5 = 1800x.
check "GB/s, % of copy, speedup from the kit's row" \
    bash -c "grep -q '\"public naive, block 32x8\",0.500000,4.000000e+04,0.01,2000.00,2100.00,1900.00,0.00,900.0000,1800.00,128,24,0.1,1$' '$work/public.csv'"
check "the gpu field quoted as make bench's" bash -c "grep -q '^01-straightforward,\"Fake GPU (sm_90, 1 SMs)\",sciddicat-large,4,5,1000,\"public naive' '$work/public.csv'"
check "each shape reported" grep -q "public tiled with halo .*sciddicat-large .*block 16x16 .*0.600000 ms per step, result right" "$work/out"
check "bench-table.sh reads the CSV" bash -c "cd '$work' && mkdir -p kit/tools kit/labs/01-straightforward kit/labs/04-halo-tiling &&
    cp '$here/bench-table.sh' '$here/csv.awk' kit/tools/ && kit/tools/bench-table.sh record '$work/public.csv' 2026-11-28 tools/bench-public.sh >/dev/null &&
    grep -q 'public naive, block 32x8' kit/labs/01-straightforward/bench/fake-gpu.csv"
checks_done test-bench-public.sh
