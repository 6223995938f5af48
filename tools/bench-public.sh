#!/usr/bin/env bash
# The course's public SciddicaT CUDA codes (D'Ambrosio et al., "Tiled algorithms for
# flow-based stencil computation", github.com/teledon/Tiled_Algorithms_for_Flow-based_Stencil_Computation)
# timed beside this kit's lab 01 and lab 04 solutions on the inputs `make bench` uses. The kit
# never downloads or ships that code: give a checkout of it.
#
# Their programs are built as the comparison states (nvcc -O3 -arch=sm_XX of this GPU; with
# CUDA 13 a header of this script supplies an API call that toolkit dropped) and run
# unchanged: they read the course's three text files (header, DEM, source), which labkit-gen
# writes for sciddicat-large and sciddicat-large-wet, and print the seconds of their step loop.
# Each runs STEPS steps at each block shape; its row is the best shape's ms per step, and its
# text result is hashed against the kit's lab 01 solution after the same steps (equal to the
# serial reference's bits, which `make check` tests; the solution's own hash at the manifest's
# steps is checked against datasets/MANIFEST first). A wrong result says so in the row's launch.
#
# The CSV has `make bench`'s columns: the kit's rows of labs 01 and 04 (a new `make bench` of
# both, or the rows of --kit-csv), then one row per public program and dataset under the lab
# of its kind (naive: 01; tiled: 04) with the copy bandwidth and serial time of the kit's row
# of the same dataset. `tools/bench-table.sh record CSV DATE "tools/bench-public.sh"` files it.
#
# usage: bench-public.sh [--csv FILE] [--kit-csv FILE] [--steps N] [--blocks WxH,...]
#                        [--programs NAME,...] [--manifest FILE] PUBLIC_DIR
#   PUBLIC_DIR   the checkout (or its code/ folder)
#   --csv        where to write (default: $LK_BUILD/bench/public.csv, LK_BUILD default build/)
#   --kit-csv    take the kit's rows from this `make bench` CSV instead of running make bench
#   --steps      steps per timed run (default 1000, as make bench)
#   --blocks     block shapes (default 16x16,32x8,32x16)
#   --programs   naive, halo, nohalo, cfame, cfamo (default: all five)
#   --manifest   the datasets' steps and md5s (default: datasets/MANIFEST, which the kit's
#                drivers read too)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
usage="usage: bench-public.sh [--csv FILE] [--kit-csv FILE] [--steps N] [--blocks WxH,...] [--programs NAME,...] [--manifest FILE] PUBLIC_DIR"
die() { echo "bench-public: $*" >&2; exit 1; }

build=${LK_BUILD:-$top/build}
manifest=$top/datasets/MANIFEST csv="" kit_csv="" steps=1000 blocks=16x16,32x8,32x16 programs=naive,halo,nohalo,cfame,cfamo
args=("$@")
while [ $# -gt 0 ]; do
    case $1 in
        --csv) csv=${2:?$usage}; shift 2 ;;
        --kit-csv) kit_csv=${2:?$usage}; shift 2 ;;
        --steps) steps=${2:?$usage}; shift 2 ;;
        --blocks) blocks=${2:?$usage}; shift 2 ;;
        --programs) programs=${2:?$usage}; shift 2 ;;
        --manifest) manifest=${2:?$usage}; shift 2 ;;
        -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "$usage" >&2; exit 2 ;;
        *) [ -z "${public:-}" ] || { echo "$usage" >&2; exit 2; }; public=$1; shift ;;
    esac
done
[ -n "${public:-}" ] || { echo "$usage" >&2; exit 2; }
csv=${csv:-$build/bench/public.csv}
[[ $steps =~ ^[1-9][0-9]*$ ]] || die "--steps '$steps': give a whole number of steps >= 1"
IFS=, read -r -a shapes <<<"$blocks"
for b in "${shapes[@]}"; do
    [[ $b =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "--blocks: '$b' is not WxH: give shapes such as 16x16,32x8"
done
[ -z "$kit_csv" ] || head -n1 "$kit_csv" 2>/dev/null | grep -q '^lab,gpu,dataset,' ||
    die "--kit-csv $kit_csv: not a make bench CSV (its header starts lab,gpu,dataset): give build/bench/bench.csv"

# Program name -> source file, the lab of its kind, its name in the table.
declare -A src=([naive]=sciddicaT_naive [halo]=sciddicaT_tiled_basic_halo
                [nohalo]=sciddicaT_tiled_basic_no_halo [cfame]=sciddicaT_tiled_CfAMe
                [cfamo]=sciddicaT_tiled_CfAMo)
declare -A lab_of=([naive]=01-straightforward [halo]=04-halo-tiling [nohalo]=04-halo-tiling
                   [cfame]=04-halo-tiling [cfamo]=04-halo-tiling)
declare -A title=([naive]="public naive" [halo]="public tiled with halo"
                  [nohalo]="public tiled without halo" [cfame]="public CfAMe" [cfamo]="public CfAMo")
IFS=, read -r -a progs <<<"$programs"
[ -d "$public/code" ] && code=$public/code || code=$public
for p in "${progs[@]}"; do
    [ -n "${src[$p]:-}" ] || die "--programs: no program '$p': use naive, halo, nohalo, cfame or cfamo"
    [ -f "$code/${src[$p]}.cu" ] ||
        die "$code/${src[$p]}.cu: not found: give a checkout of github.com/teledon/Tiled_Algorithms_for_Flow-based_Stencil_Computation (its root or code/)"
done
code=$(cd "$code" && pwd)

# Hold the kit's GPU lock for the whole comparison (make bench inside shares it); without a
# GPU gpu-lock.sh says so and exits 1.
if [ -z "${LK_BENCH_PUBLIC_LOCKED:-}" ]; then
    LK_BENCH_PUBLIC_LOCKED=1 exec "$here/gpu-lock.sh" --needs-gpu - "$0" "${args[@]}"
fi
command -v nvcc >/dev/null || die "nvcc not found: put the CUDA toolkit's bin/ on PATH"

arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | tr -d ' .')
[[ $arch =~ ^[0-9]+$ ]] || die "nvidia-smi gives no compute capability for GPU 0: update the driver"
work=$(mktemp -d "${TMPDIR:-/tmp}/lk-bench-public.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Their cudaMemPrefetchAsync(ptr, bytes, device, stream) is gone from CUDA 13's runtime API
# (a cudaMemLocation replaced the device): an overload of the old form, included before
# their code, builds it unchanged with either toolkit.
cat >"$work/compat.h" <<'H'
#include <cuda_runtime.h>
#if CUDART_VERSION >= 13000
static inline cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, int device, cudaStream_t s)
{
    cudaMemLocation where;
    where.type = cudaMemLocationTypeDevice;
    where.id = device;
    return cudaMemPrefetchAsync(p, n, where, 0, s);
}
#endif
H
echo "bench-public: building $code's programs (nvcc -O3 -arch=sm_$arch)"
for p in "${progs[@]}"; do
    nvcc -O3 -arch="sm_$arch" -w -include "$work/compat.h" -o "$work/$p" "$code/${src[$p]}.cu" ||
        die "$code/${src[$p]}.cu: nvcc failed (above): check the checkout and the CUDA toolkit"
done

make --no-print-directory -C "$top" LK_BUILD="$build" "$build/bin/labkit-gen" >/dev/null
ref_b=$build/bench-public/lab01
make --no-print-directory -C "$top/labs/01-straightforward" VARIANT=solution LK_BUILD="$build" \
    B="$ref_b" "$ref_b/lab01" >/dev/null

mkdir -p "$(dirname "$csv")"
if [ -n "$kit_csv" ]; then
    awk -f "$here/csv.awk" -f /dev/fd/3 "$kit_csv" >"$csv.tmp" 3<<'AWK'
NR == 1 { print; next }
{ parse($0, f) }
f[1] == "01-straightforward" || f[1] == "04-halo-tiling"
AWK
else
    rm -f "$csv.tmp"
    for lab in 01-straightforward 04-halo-tiling; do
        make --no-print-directory -C "$top/labs/$lab" bench VARIANT=solution LK_BUILD="$build" \
            BENCH_CSV="$csv.tmp"
    done
fi

# field LAB DATASET COLUMN: that column of the kit's first row of LAB on DATASET.
field() {
    awk -v lab="$1" -v ds="$2" -v name="$3" -f "$here/csv.awk" -f /dev/fd/3 "$csv.tmp" 3<<'AWK'
NR == 1 { n = parse($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
{ parse($0, f) }
f[1] == lab && f[3] == ds { print f[col[name]]; found = 1; exit }
END { if (!found) exit 1 }
AWK
}
# The gpu and launch fields hold commas: quoted, as make bench writes them.
quote() { case $1 in *,*) printf '"%s"' "$1" ;; *) printf '%s' "$1" ;; esac; }

for ds in sciddicat-large sciddicat-large-wet; do
    "$build/bin/labkit-gen" --manifest "$manifest" dataset "$ds" "$work" >/dev/null
    set -- "$work/${ds}_header.txt" "$work/${ds}_dem.txt" "$work/${ds}_source.txt"
    m_steps="" m_md5=""
    read -r m_steps m_md5 < <(awk -v ds="$ds" '$1 == ds { print $4, $6 }' "$manifest") || true
    [ -n "$m_md5" ] || die "$manifest: no dataset $ds: give the kit's datasets/MANIFEST"
    # The reference: the kit's solution, first at the manifest's steps against its md5.
    "$ref_b/lab01" --dataset "$ds" --steps "$m_steps" --gpu --no-md5 --out "$work/ref" >/dev/null ||
        die "the kit's lab 01 solution failed on $ds (above): run its make check"
    got=$(md5sum <"$work/ref" | cut -d' ' -f1)
    [ "$got" = "$m_md5" ] ||
        die "the kit's lab 01 solution gives md5 $got on $ds after $m_steps steps, $manifest says $m_md5: fix the solution first (make check)"
    "$ref_b/lab01" --dataset "$ds" --steps "$steps" --gpu --no-md5 --out "$work/ref" >/dev/null ||
        die "the kit's lab 01 solution failed on $ds (above): run its make check"
    want=$(md5sum <"$work/ref" | cut -d' ' -f1)
    rm -f "$work/ref"

    for p in "${progs[@]}"; do
        lab=${lab_of[$p]}
        gpu=$(field "$lab" "$ds" gpu) ||
            die "$csv.tmp: no row of lab $lab on $ds: give a --kit-csv of a full make bench"
        best="" best_ms="" best_s="" best_ok=""
        for b in "${shapes[@]}"; do
            # Their main prints " BX; BY; SECONDS" for the step loop, and exits 0 on bad input.
            out=$("$work/$p" "$@" "$work/out" "$steps" "${b%x*}" "${b#*x}" 2>&1) || true
            secs=$(printf '%s\n' "$out" | sed -n 's/^ *[0-9]*; *[0-9]*; *\([0-9.]*\)$/\1/p' | tail -n1)
            if [ -z "$secs" ] || [ ! -s "$work/out" ]; then
                die "$p at block $b on $ds printed no step-loop time: $(printf '%s' "$out" | tail -n1)"
            fi
            got=$(md5sum <"$work/out" | cut -d' ' -f1)
            rm -f "$work/out" "$work/out.bin"
            ms=$(awk -v s="$secs" -v n="$steps" 'BEGIN { printf "%.6f", 1000 * s / n }')
            ok=right; [ "$got" = "$want" ] || ok=wrong
            printf 'bench-public: %-28s %-20s block %-6s %9s ms per step, result %s\n' \
                "${title[$p]}" "$ds" "$b" "$ms" "$ok"
            if [ -z "$best" ] || awk -v a="$ms" -v b="$best_ms" 'BEGIN { exit !(a < b) }'; then
                best=$b best_ms=$ms best_s=$secs best_ok=$ok
            fi
        done
        launch="${title[$p]}, block $best"
        [ "$best_ok" = right ] || launch="$launch, WRONG result"
        rows=$(sed -n 's/^nrows *//p' "$1") cols=$(sed -n 's/^ncols *//p' "$1")
        copy=$(field "$lab" "$ds" copy_GBps) serial=$(field "$lab" "$ds" serial_ms_per_step)
        awk -v rows="$rows" -v cols="$cols" -v ms="$best_ms" -v copy="$copy" -v serial="$serial" \
            -v secs="$best_s" -v memcpy="$(field "$lab" "$ds" memcpy_GBps)" \
            -v kernel="$(field "$lab" "$ds" copy_kernel_GBps)" \
            -v bound_b="$(field "$lab" "$ds" bound_bytes_per_cell)" \
            -v bound_ms="$(field "$lab" "$ds" bound_ms_per_step)" \
            -v head="$lab,$(quote "$gpu"),$ds,$rows,$cols,$steps,$(quote "$launch")" 'BEGIN {
            cells = rows * cols; gbs = 128 * cells / (ms * 1e6)
            # Their timer counts whole milliseconds: resolved when the loop took >= 100 of them.
            printf "%s,%.6f,%e,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f,%.2f,128,%s,%s,%d\n", head, ms,
                   cells / (ms * 1e-3), gbs, copy, memcpy, kernel, 100 * gbs / copy, serial,
                   serial / ms, bound_b, bound_ms, (secs >= 0.1)
        }' >>"$csv.tmp"
    done
done
mv "$csv.tmp" "$csv"
echo "bench-public: wrote $csv (the kit's rows and the public codes'): file it with"
echo "  tools/bench-table.sh record $csv $(date +%F) \"tools/bench-public.sh\""
