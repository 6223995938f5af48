#!/usr/bin/env bash
# Measured DRAM traffic per step of a lab's driver, from Nsight Compute's counters: what
# `make bench`'s bandwidth formula only assumes. For each dataset and each variant, the driver
# runs twice under ncu (--gpu --once, A and B steps) and the sums of dram__bytes_read/write
# over all kernels are subtracted: what the harness and the set-up launch cancels out, the
# steps remain. Caches are left alone between kernels (--cache-control none), as in a run.
# Memsets and copies are not kernels: ncu does not see them (lab 04's halo and nohalo reset
# Sf with cudaMemsetAsync, 32 B per cell per step on top of what is measured).
# Appends one row per launch to CSV.
# usage: bench-profile.sh LAB PROG CSV DATASET...
#   env: NCU (default ncu), PROFILE_STEPS (default "4 12": A and B)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=${1:?usage: bench-profile.sh LAB PROG CSV DATASET...}
prog=${2:?usage: bench-profile.sh LAB PROG CSV DATASET...}
csv=${3:?usage: bench-profile.sh LAB PROG CSV DATASET...}
shift 3
[ $# -gt 0 ] || { echo "bench-profile: no dataset given" >&2; exit 2; }
# ncu is often beside nvcc without being on the PATH.
ncu=${NCU:-ncu}
if [ -z "${NCU:-}" ] && ! command -v ncu >/dev/null 2>&1; then
    for c in "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/ncu" \
             /usr/local/cuda/bin/ncu; do
        [ -x "$c" ] && { ncu=$c; break; }
    done
fi
read -r steps_a steps_b <<<"${PROFILE_STEPS:-4 12}"
if ! command -v "$ncu" >/dev/null 2>&1; then
    echo "bench-profile: $ncu (Nsight Compute) not found: install it with the CUDA toolkit" \
         "(nsight-compute) or set NCU=/path/to/ncu" >&2
    exit 1
fi
[ "$steps_b" -gt "$steps_a" ] 2>/dev/null || {
    echo "bench-profile: PROFILE_STEPS='$steps_a $steps_b': give two step counts, the second larger" >&2
    exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The variants the driver lists under --variant; the lab's own code without --variant unless
# one of them is marked as the default.
"$prog" -h >"$work/help"
mapfile -t variants < <(awk '
    /--variant NAME/ { on = 1; sub(/.*--variant NAME */, "") }
    on && /^ *-/ { exit }
    on { n = split($0, w, " "); if (n) { name = w[1]; sub(/:.*/, "", name); print name } }' "$work/help")
launches=()
grep -q '(default)' "$work/help" || launches+=("")
launches+=("${variants[@]}")

# Sum the metrics over the kernels of one ncu raw CSV: kernels, read bytes, write bytes, ns.
sum_report() {
    awk -f "$here/csv.awk" -f /dev/fd/3 "$1" 3<<'AWK'
function scale(unit) {
    unit = tolower(unit)
    if (unit ~ /^(byte|b)$/ || unit == "" || unit == "nsecond" || unit == "ns") return 1
    if (unit ~ /^k(byte|b)$/) return 1e3
    if (unit ~ /^m(byte|b)$/) return 1e6
    if (unit ~ /^g(byte|b)$/) return 1e9
    if (unit ~ /^t(byte|b)$/) return 1e12
    if (unit == "usecond" || unit == "us") return 1e3
    if (unit == "msecond" || unit == "ms") return 1e6
    if (unit == "second" || unit == "s") return 1e9
    printf "bench-profile: unknown unit '%s' in ncu's CSV\n", unit > "/dev/stderr"; bad = 1
    return 1
}
/^==/ { next }
!have_head {
    n = parse($0, head)
    for (i = 1; i <= n; i++) col[head[i]] = i
    if (!("dram__bytes_read.sum" in col)) next
    have_head = 1; next
}
{ parse($0, f) }
# The units row, if any: the one without a kernel ID (kernels are numbered).
!have_units && ("ID" in col) && f[col["ID"]] == "" {
    have_units = 1
    r = scale(f[col["dram__bytes_read.sum"]]); w = scale(f[col["dram__bytes_write.sum"]])
    t = scale(f[col["gpu__time_duration.sum"]]); next
}
{
    if (!have_units) { have_units = 1; r = w = t = 1 }
    v1 = f[col["dram__bytes_read.sum"]]; v2 = f[col["dram__bytes_write.sum"]]
    v3 = f[col["gpu__time_duration.sum"]]
    gsub(/,/, "", v1); gsub(/,/, "", v2); gsub(/,/, "", v3)
    kernels++; rd += v1 * r; wr += v2 * w; ns += v3 * t
}
END { if (!have_head || bad) exit 1; printf "%d %.0f %.0f %.0f\n", kernels, rd, wr, ns }
AWK
}

# One profiled run: prints "kernels read write ns" and leaves the driver's JSON line in $work.
# Returns 2 when the driver refused the run as a usage error (its exit status 2: a variant for
# another kind of input, as lab 05's Brusselator variants on a string), 1 on other failures.
profile_run() {
    local ds=$1 variant=$2 steps=$3 tag=$4
    local rep="$work/rep-$tag"
    local args=(--gpu --once --json --dataset "$ds" --steps "$steps")
    [ -z "$variant" ] || args+=(--variant "$variant")
    if ! "$ncu" --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
            --cache-control none --clock-control none -f -o "$rep" "$prog" "${args[@]}" \
            >"$work/out-$tag" 2>"$work/err-$tag"; then
        if grep -q 'returned an error code (2)' "$work/err-$tag" "$work/out-$tag" 2>/dev/null; then
            return 2
        fi
        echo "bench-profile: ncu $prog ${args[*]} failed:" >&2
        tail -n 5 "$work/err-$tag" "$work/out-$tag" >&2
        grep -q ERR_NVGPUCTRPERM "$work/err-$tag" "$work/out-$tag" 2>/dev/null &&
            echo "  (the GPU's performance counters need permission: see" \
                 "https://developer.nvidia.com/ERR_NVGPUCTRPERM)" >&2
        return 1
    fi
    "$ncu" --import "$rep.ncu-rep" --csv --page raw --print-units base >"$work/raw-$tag.csv" \
        2>"$work/imp-$tag" ||
        "$ncu" --import "$rep.ncu-rep" --csv --page raw >"$work/raw-$tag.csv" 2>"$work/imp-$tag" || {
        echo "bench-profile: ncu --import $rep.ncu-rep failed:" >&2; tail -n 5 "$work/imp-$tag" >&2; return 1; }
    sum_report "$work/raw-$tag.csv" || {
        echo "bench-profile: no dram__bytes metrics in ncu's CSV ($work/raw-$tag.csv):" >&2
        head -n 3 "$work/raw-$tag.csv" >&2; return 1; }
}

json_field() { # json_field FILE NAME: a number or string field of the driver's JSON line
    grep '^{' "$1" | tail -n 1 | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[0-9.e+-]*\).*/\1/p" | tr -d '"'
}

[ -s "$csv" ] || echo "lab,gpu,dataset,rows,cols,launch,steps_a,steps_b,kernels_per_step,dram_read_bytes_per_step,dram_write_bytes_per_step,dram_bytes_per_step,bytes_per_cell_step,kernel_ms_per_step" >"$csv"
failed=0
for ds in "$@"; do
    for variant in "${launches[@]}"; do
        label=${variant:+variant $variant}
        label=${label:-default}
        printf 'bench-profile %s %s %s: ' "$lab" "$ds" "$label"
        status=0
        a=$(profile_run "$ds" "$variant" "$steps_a" a) || status=$?
        # A CPU variant (the harness names its device "the CPU (..., no GPU used)"): nothing to
        # count, and profiling it again would only take long.
        if [ "$status" = 0 ] && { [ "${a%% *}" = 0 ] || json_field "$work/out-a" device | grep -q 'no GPU used'; }; then
            echo "skipped, it launches no kernel (a CPU variant)"
            continue
        fi
        [ "$status" != 0 ] || b=$(profile_run "$ds" "$variant" "$steps_b" b) || status=$?
        if [ "$status" = 2 ]; then
            # The driver's own words (not ncu's lines), e.g. "use diamond, honeycomb, ...".
            echo "skipped, the driver refuses it here: $(grep -v '^==' "$work/err-a" | head -n 1 | sed 's/^[^:]*: //')"
            continue
        elif [ "$status" != 0 ]; then
            echo "FAILED"; failed=1; continue
        fi
        rows=$(json_field "$work/out-b" rows)
        cols=$(json_field "$work/out-b" cols)
        gpu=$(json_field "$work/out-b" device)
        read -r ka ra wa na <<<"$a"
        read -r kb rb wb nb <<<"$b"
        awk -v lab="$lab" -v gpu="$gpu" -v ds="$ds" -v rows="$rows" -v cols="$cols" \
            -v launch="$label" -v sa="$steps_a" -v sb="$steps_b" \
            -v ka="$ka" -v ra="$ra" -v wa="$wa" -v na="$na" \
            -v kb="$kb" -v rb="$rb" -v wb="$wb" -v nb="$nb" -v csv="$csv" 'BEGIN {
            d = sb - sa; k = (kb - ka) / d; r = (rb - ra) / d; w = (wb - wa) / d
            ms = (nb - na) / d / 1e6; cells = rows * cols
            per_r = 0; per_w = 0
            if (cells > 0) { per_r = r / cells; per_w = w / cells }
            printf("%s,\"%s\",%s,%d,%d,\"%s\",%d,%d,%.2f,%.0f,%.0f,%.0f,%.2f,%.6f\n", lab, gpu,
                   ds, rows, cols, launch, sa, sb, k, r, w, r + w, per_r + per_w, ms) >> csv
            printf("%.1f B per cell per step (read %.1f, write %.1f), %.2f kernels per step\n",
                   per_r + per_w, per_r, per_w, k)
        }'
    done
done
exit $failed
