#!/usr/bin/env bash
# One Markdown table from make bench's CSV: every lab and launch, and for labs timed on the
# dataset of lab 01 the ratio to lab 01's time per step (same GPU, same run). With the CSV of
# make bench-profile, the bytes per cell and step the counters measured, and the bandwidth
# they make at the bench's time (% of copy, measured) beside the formula's.
# usage: bench-summary.sh build/bench/bench.csv [build/bench/profile.csv]
set -euo pipefail
csv=${1:?usage: bench-summary.sh BENCH.csv [PROFILE.csv]}
profile=${2:-}
[ -s "$csv" ] || { echo "bench-summary: $csv is empty or missing: run make bench" >&2; exit 1; }
[ -z "$profile" ] || [ -s "$profile" ] || {
    echo "bench-summary: $profile is empty or missing: run make bench-profile" >&2; exit 1; }
awk -v profile="$profile" -f "$(dirname "$0")/csv.awk" -f /dev/fd/3 "$csv" 3<<'EOF'
# "variant halo, tile 30x6" -> "variant halo"; "block 128x2" -> "default"
function variant_of(launch) {
    if (launch ~ /^variant /) { sub(/,.*/, "", launch); return launch }
    return "default"
}
BEGIN {
    if (profile != "") {
        while ((getline line < profile) > 0) {
            n = parse(line, f)
            if (++pl == 1) { for (i = 1; i <= n; i++) pcol[f[i]] = i; continue }
            key = f[pcol["lab"]] SUBSEP f[pcol["dataset"]] SUBSEP f[pcol["launch"]]
            measured[key] = f[pcol["bytes_per_cell_step"]]
        }
        close(profile)
    }
}
NR == 1 {
    n = parse($0, head)
    for (i = 1; i <= n; i++) col[head[i]] = i
    next
}
{
    parse($0, f)
    rows++
    lab[rows] = f[col["lab"]]; gpu = f[col["gpu"]]; ds[rows] = f[col["dataset"]]
    launch[rows] = f[col["launch"]]; ms[rows] = f[col["ms_per_step"]]
    cells[rows] = f[col["rows"]] * f[col["cols"]]
    gbs[rows] = f[col["effective_GBps"]]; copy[rows] = f[col["copy_GBps"]]
    pct[rows] = f[col["pct_of_copy"]]; sp[rows] = f[col["speedup"]]
    formula[rows] = ("formula_bytes_per_cell" in col) ? f[col["formula_bytes_per_cell"]] : ""
    bound[rows] = ("bound_ms_per_step" in col) ? f[col["bound_ms_per_step"]] : ""
    noise[rows] = ("resolved" in col) && f[col["resolved"]] == 0
    if (lab[rows] ~ /^01-/ && !(ds[rows] in lab01)) lab01[ds[rows]] = ms[rows]
}
END {
    printf "GPU: %s\n\n", gpu
    print "| lab | launch | dataset | ms per step | one-step bound ms | B/cell formula | % of copy (formula) | B/cell measured | % of copy (measured) | speedup vs serial | vs lab 01 |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    for (r = 1; r <= rows; r++) {
        vs = (ds[r] in lab01) && ms[r] > 0 ? sprintf("%.2fx", lab01[ds[r]] / ms[r]) : "-"
        key = lab[r] SUBSEP ds[r] SUBSEP variant_of(launch[r])
        if (key in measured && ms[r] > 0 && copy[r] > 0) {
            mb = sprintf("%.1f", measured[key])
            mp = sprintf("%.1f %%", 100 * measured[key] * cells[r] / (ms[r] * 1e-3) / (copy[r] * 1e9))
        } else { mb = "-"; mp = "-" }
        b = bound[r] != "" && bound[r] > 0 ? sprintf("%.4f", bound[r]) : "-"
        fb = formula[r] != "" ? formula[r] : "-"
        if (noise[r]) { mp = "-"; vs = "-" }
        printf "| %s | %s | %s | %.4f%s | %s | %s | %.1f %% | %s | %s | %.0fx | %s |\n", lab[r],
               launch[r], ds[r], ms[r], noise[r] ? " (noise)" : "", b, fb, pct[r], mb, mp,
               sp[r], vs
        if (noise[r]) noisy++
    }
    if (noisy)
        print "\n(noise): the timed steps added less than twice the spread of the 0-step runs;" \
              " read the kernel time of make bench-profile, or time more steps."
}
EOF
