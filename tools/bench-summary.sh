#!/usr/bin/env bash
# One Markdown table from make bench's CSV: every lab and launch, and for labs timed on the
# dataset of lab 01 the ratio to lab 01's time per step (same GPU, same run).
# usage: bench-summary.sh build/bench/bench.csv
set -euo pipefail
csv=${1:?usage: bench-summary.sh BENCH.csv}
[ -s "$csv" ] || { echo "bench-summary: $csv is empty or missing: run make bench" >&2; exit 1; }
awk -f "$(dirname "$0")/csv.awk" -f /dev/fd/3 "$csv" 3<<'EOF'
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
    gbs[rows] = f[col["effective_GBps"]]; copy[rows] = f[col["copy_GBps"]]
    pct[rows] = f[col["pct_of_copy"]]; sp[rows] = f[col["speedup"]]
    if (lab[rows] ~ /^01-/ && !(ds[rows] in lab01)) lab01[ds[rows]] = ms[rows]
}
END {
    printf "GPU: %s\n\n", gpu
    print "| lab | launch | dataset | ms per step | effective GB/s | copy GB/s | % of copy | speedup vs serial | vs lab 01 |"
    print "|---|---|---|---|---|---|---|---|---|"
    for (r = 1; r <= rows; r++) {
        vs = (ds[r] in lab01) && ms[r] > 0 ? sprintf("%.2fx", lab01[ds[r]] / ms[r]) : "-"
        printf "| %s | %s | %s | %.4f | %.0f | %.0f | %.1f %% | %.0fx | %s |\n", lab[r], launch[r],
               ds[r], ms[r], gbs[r], copy[r], pct[r], sp[r], vs
    }
}
EOF
