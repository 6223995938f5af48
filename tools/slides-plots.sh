#!/usr/bin/env bash
# Draw the slides' plots from a CSV that make bench wrote: one bar chart of ms per step per
# dataset (plots/ms-DATASET) and one of the speedups over serial (plots/speedup), each titled
# with the GPU of the CSV. gnuplot's cairolatex terminal: the bars are a small PDF, the text a
# .tex file that the decks \input, so labels are set in the slides' own font.
# usage: slides-plots.sh BENCH.csv OUTDIR   (V=1 shows the gnuplot script)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
csv=${1:?usage: slides-plots.sh BENCH.csv OUTDIR}
out=${2:?usage: slides-plots.sh BENCH.csv OUTDIR}
if [ ! -s "$csv" ]; then
    echo "slides-plots: $csv is missing or empty: run make bench on a GPU machine first," \
         "or name a CSV with BENCH_CSV=FILE (slides/data/ holds the committed ones)" >&2
    exit 1
fi
command -v gnuplot >/dev/null 2>&1 || {
    echo "slides-plots: gnuplot not found: apt-get install gnuplot-nox" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One data file per dataset (label, ms per step, speedup) and the GPU's name; a label is the
# lab's number over the launch without its words: "01 / 128x2", "04 / halo / 30x6".
awk -v work="$work" -f "$here/csv.awk" -f /dev/fd/3 "$csv" 3<<'AWK' > "$work/gpu"
NR == 1 {
    n = parse($0, head)
    for (i = 1; i <= n; i++) col[head[i]] = i
    split("lab gpu dataset launch ms_per_step speedup", need, " ")
    for (i in need)
        if (!(need[i] in col)) {
            printf "slides-plots: %s: no column %s in the header: is this make bench's CSV?\n",
                   FILENAME, need[i] > "/dev/stderr"
            bad = 1; exit 1
        }
    next
}
/^[ \t]*$/ { next }
{
    parse($0, f)
    gpu = f[col["gpu"]]
    launch = f[col["launch"]]
    # A time per step that make bench marked as noise is no bar (it can even be negative).
    if (("resolved" in col) && f[col["resolved"]] == 0) {
        printf "slides-plots: left out %s %s on %s: its time per step is noise\n", f[col["lab"]],
               launch, f[col["dataset"]] > "/dev/stderr"
        next
    }
    # Two lines under each bar: the lab's number, then the variant and shape (gnuplot halves
    # the backslashes of a data file's quoted strings: \\\\ reaches LaTeX as \\).
    # A line break only between lines: a trailing one is a misplaced \cr to LaTeX (a
    # variant without a tile or block, as lab 06's).
    label = substr(f[col["lab"]], 1, 2)
    if (match(launch, /variant [^,]*/)) label = label "\\\\\\\\" substr(launch, RSTART + 8, RLENGTH - 8)
    if (match(launch, /(tile|block) [0-9]+x[0-9]+/)) {
        shape = substr(launch, RSTART, RLENGTH); sub(/^[a-z]+ /, "", shape)
        label = label "\\\\\\\\" shape
    }
    ds = f[col["dataset"]]
    printf "\"\\\\shortstack{%s}\" %s %s\n", label, f[col["ms_per_step"]], f[col["speedup"]] > (work "/ms-" ds ".dat")
    # The speedup plot: one bar per lab, its launch with the best speedup (on any of its
    # datasets; the deck's caption says so).
    lab = f[col["lab"]]
    if (!(lab in best) || f[col["speedup"]] + 0 > best[lab]) {
        if (!(lab in best)) order[++labs] = lab
        best[lab] = f[col["speedup"]] + 0
        best_line[lab] = sprintf("\"\\\\shortstack{%s}\" %s %s", label, f[col["ms_per_step"]], f[col["speedup"]])
    }
    rows++
}
END {
    if (bad) exit 1
    if (!rows) { printf "slides-plots: %s has a header but no rows\n", FILENAME > "/dev/stderr"; exit 1 }
    for (i = 1; i <= labs; i++) print best_line[order[i]] > (work "/all.dat")
    sub(/ \(.*/, "", gpu)                  # the name, without sm_/driver details
    gsub(/[\\_%&#$^~{}]/, "", gpu)         # nothing LaTeX would read as a command
    print gpu
}
AWK
gpu=$(cat "$work/gpu")
# The plots of the previous CSV go: a dataset it no longer has must not leave a stale plot.
rm -f "$out"/ms-*.tex "$out"/ms-*.pdf "$out"/speedup.tex "$out"/speedup.pdf

plot() {  # NAME DATAFILE COLUMN YLABEL FORMAT TITLE
    local script="$work/$1.gp"
    cat > "$script" <<GP
set terminal cairolatex pdf size 14cm,5.6cm
set output '$1.tex'
set title '$6'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.75 border -1
set boxwidth 0.8
set yrange [0:*]
set offsets 0, 0, graph 0.22, 0
set ylabel '$4'
set grid ytics
set key off
set xtics scale 0 offset 0,-1.2
set bmargin 5
plot '$2' using $3:xtic(1) lc rgb '#3465a4', \
     '' using 0:$3:(sprintf('$5', \$$3)) with labels offset 0,0.6
GP
    [ "${V:-0}" = 1 ] && cat "$script"
    (cd "$out" && gnuplot "$script")
    echo "  PLOT    $out/$1.tex, $1.pdf"
}
for dat in "$work"/ms-*.dat; do
    name=$(basename "$dat" .dat)
    plot "$name" "$dat" 2 'ms per step' '%.3f' "${name#ms-}: time per step on the $gpu (lower is better)"
done
plot speedup "$work/all.dat" 3 'speedup over serial' '%.0fx' "Speedup over one CPU core, $gpu"
