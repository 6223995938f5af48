#!/usr/bin/env bash
# The "Measured" tables of the handouts and decks, generated from `make bench` runs so that
# each states one current run per GPU and no number without its source (history is in git).
#
#   bench-table.sh record BENCH.csv DATE [COMMAND]
#       Split a CSV that `make bench` wrote (build/bench/bench.csv) into one source file per
#       lab and GPU, labs/LAB/bench/GPU.csv (GPU: its name, lower case, e.g.
#       nvidia-h100-80gb-hbm3), headed by the command and the date of the run. A file of the
#       same lab and GPU is replaced: one current run per GPU. COMMAND defaults to "make bench".
#   bench-table.sh update [FILE...]
#       Rewrite every table between markers in FILEs (default: labs/*/README.md slides/*.md):
#         <!-- bench-table LAB [dataset=NAME,NAME] [gpu=GPU] [style=brief] -->
#         <!-- /bench-table -->
#       from labs/LAB/bench/*.csv (gpu=: that GPU's file only, for a slide that has room for
#       one), one block per GPU (style=brief: one table, a row per GPU and launch, for a slide).
#   bench-table.sh check [FILE...]
#       Exit 1 with one line per table that differs from its source files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
usage="usage: bench-table.sh record BENCH.csv DATE [COMMAND] | update [FILE...] | check [FILE...]"
mode=${1:-}
[ $# -gt 0 ] && shift

# ---- record -------------------------------------------------------------------------------
record() {
    local csv=${1:?$usage} date=${2:?$usage} command=${3:-make bench}
    [ -s "$csv" ] || { echo "bench-table: $csv: empty or missing: give the CSV that make bench wrote (build/bench/bench.csv)" >&2; exit 1; }
    [[ $date =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || { echo "bench-table: '$date': give the run's date as YYYY-MM-DD" >&2; exit 1; }
    head -n1 "$csv" | grep -q '^lab,gpu,dataset,' || {
        echo "bench-table: $csv:1: not a make bench CSV (its header starts lab,gpu,dataset): give build/bench/bench.csv" >&2; exit 1; }
    awk -v top="$top" -v date="$date" -v command="$command" -v src="$csv" -f "$here/csv.awk" -f /dev/fd/3 "$csv" 3<<'AWK'
NR == 1 { header = $0; next }
{
    parse($0, f)
    gpu = f[2]; sub(/ \(.*/, "", gpu)
    slug = tolower(gpu); gsub(/[^a-z0-9]+/, "-", slug); sub(/^-/, "", slug); sub(/-$/, "", slug)
    if (!(f[1] in labdir)) {
        labdir[f[1]] = top "/labs/" f[1]
        if (system("test -d " labdir[f[1]]) != 0) {
            printf "bench-table: %s:%d: lab '%s' has no folder labs/%s: give a CSV of this kit's make bench\n", src, NR, f[1], f[1] > "/dev/stderr"
            exit 1
        }
    }
    out = labdir[f[1]] "/bench/" slug ".csv"
    if (!(out in started)) {
        started[out] = 1; files[++n] = out
        system("mkdir -p " labdir[f[1]] "/bench")
        print "# command: " command > out
        print "# date: " date > out
        print header > out
    }
    print > out
}
END { for (i = 1; i <= n; i++) { close(files[i]); print "bench-table: wrote " substr(files[i], length(top) + 2) } }
AWK
    echo "bench-table: now run tools/bench-table.sh update, and commit the files with the tables"
}

# ---- one generated block --------------------------------------------------------------------
# generate LAB STYLE DATASETS GPU: the Markdown between the markers, from labs/LAB/bench/*.csv
# (GPU.csv only when GPU is given).
generate() {
    local lab=$1 style=$2 datasets=$3 gpu=$4 sources=()
    local f
    for f in "$top/labs/$lab/bench/"${gpu:-*}.csv; do [ -f "$f" ] && sources+=("$f"); done
    if [ "${#sources[@]}" -eq 0 ]; then
        echo "No measurement of this lab yet: run make bench on a GPU and tools/bench-table.sh record."
        return
    fi
    awk -v style="$style" -v datasets="$datasets" -v lab="$lab" -f "$here/csv.awk" -f /dev/fd/3 "${sources[@]}" 3<<'AWK'
BEGIN {
    nd = split(datasets, d, ",")
    for (i = 1; i <= nd; i++) want[d[i]] = 1
}
FNR == 1 { file = FILENAME; sub(/.*\/labs\//, "labs/", file); nfiles++; header_seen = 0 }
/^# command: / { cmd[nfiles] = substr($0, 12); next }
/^# date: / { date[nfiles] = substr($0, 9); next }
/^#/ { next }
!header_seen { header_seen = 1; n = parse($0, h); delete col; for (i = 1; i <= n; i++) col[h[i]] = i; next }
{
    parse($0, f)
    if (nd && !(f[col["dataset"]] in want)) next
    r = ++rows
    fileof[r] = nfiles; src[nfiles] = file
    gpu[nfiles] = f[col["gpu"]]
    # Older runs wrote "driver 13.0" for the CUDA version the driver supports: name it so.
    sub(/, driver /, ", CUDA driver API ", gpu[nfiles])
    ds[r] = f[col["dataset"]]; launch[r] = f[col["launch"]]; ms[r] = f[col["ms_per_step"]]
    gbs[r] = f[col["effective_GBps"]]; pct[r] = f[col["pct_of_copy"]]; copy[r] = f[col["copy_GBps"]]
    sp[r] = f[col["speedup"]]; steps[r] = f[col["steps"]]
    noise[r] = ("resolved" in col) && f[col["resolved"]] == 0
}
function short(g) { sub(/ \(.*/, "", g); return g }
# Four decimals, or three significant digits for the microsecond steps of the small datasets.
function msfmt(r) { return sprintf(ms[r] < 0.01 ? "%.3g%s" : "%.4f%s", ms[r], noise[r] ? " (noise)" : "") }
# Whole GB/s, or two significant digits below 10 (lagrange's few bytes).
function gbfmt(v) { return sprintf(v < 10 ? "%.2g" : "%.0f", v) }
function spfmt(r) { return sp[r] != "" && sp[r] > 0 ? sprintf("%.0fx", sp[r]) : "-" }
END {
    if (!rows) { printf "No row of dataset %s in labs/%s/bench/*.csv.\n", datasets, lab; exit }
    if (style == "brief") {
        # A slide is narrow: a GPU column only for several GPUs, a dataset column only for
        # several datasets.
        many = nd != 1; gpus = nfiles > 1
        nc = split((gpus ? "GPU, date|" : "") (many ? "dataset|" : "") "launch|ms per step|vs serial", cell, "|")
        for (c = 1; c <= nc; c++) width[c] = length(cell[c])
        for (r = 1; r <= rows; r++) {
            c = 0
            if (gpus) line[r, ++c] = short(gpu[fileof[r]]) ", " date[fileof[r]]
            if (many) line[r, ++c] = "`" ds[r] "`"
            line[r, ++c] = launch[r]; line[r, ++c] = msfmt(r); line[r, ++c] = spfmt(r)
            for (c = 1; c <= nc; c++) if (length(line[r, c]) > width[c]) width[c] = length(line[r, c])
        }
        # pandoc sizes a wide table's columns by the dashes under the header: as wide as the
        # widest cell, so that no cell wraps on a slide.
        row = "|"; sep = "|"
        for (c = 1; c <= nc; c++) {
            row = row " " cell[c] " |"
            dashes = ""; for (k = 0; k < width[c]; k++) dashes = dashes "-"
            sep = sep dashes "|"
        }
        print row; print sep
        for (r = 1; r <= rows; r++) {
            row = "|"
            for (c = 1; c <= nc; c++) row = row " " line[r, c] " |"
            print row
        }
        if (gpus) printf "\nFrom `%s`: `labs/%s/bench/`, a file per GPU.\n", cmd[1], lab
        else printf "\n%s, %s, `%s`: `labs/%s/bench/`.\n", short(gpu[1]), date[1], cmd[1], lab
        exit
    }
    for (i = 1; i <= nfiles; i++) {
        if (!(i in src)) continue   # a GPU without the block's datasets
        if (shown++) print ""
        printf "`%s`, %s, on an %s\n", cmd[i], date[i], gpu[i]
        printf "(`%s`). GB/s counts the formula's bytes per cell (or per value), and\n", src[i]
        print "\"% of copy\" divides it by the copy bandwidth measured in the same run:"
        print ""
        print "| dataset | launch | steps | ms per step | GB/s (formula) | % of copy (formula) | copy GB/s | vs serial |"
        print "|---|---|---|---|---|---|---|---|"
        for (r = 1; r <= rows; r++) {
            if (fileof[r] != i) continue
            printf "| `%s` | %s | %s | %s | %s | %.1f %% | %s | %s |\n", ds[r], launch[r], steps[r], msfmt(r),
                   gbfmt(gbs[r]), pct[r], gbfmt(copy[r]), spfmt(r)
        }
    }
}
AWK
}

# ---- update / check ---------------------------------------------------------------------------
# rewrite FILE OUT: FILE with each block regenerated, into OUT. Prints "LINE" per block that
# differs from the file's text, on fd 3.
rewrite() {
    local file=$1 out=$2 line=0 text in_block=0 start=0 lab style datasets gpu old="" new arg
    : >"$out"
    while IFS= read -r text || [ -n "$text" ]; do
        line=$((line + 1))
        if [ "$in_block" = 1 ]; then
            if [[ $text == '<!-- /bench-table -->' ]]; then
                new=$(printf '\n'; generate "$lab" "$style" "$datasets" "$gpu"; printf '\n.')
                new=${new%.}
                printf '%s' "$new" >>"$out"
                printf '%s\n' "$text" >>"$out"
                [ "$old" = "$new" ] || echo "$start" >&3
                in_block=0
            else
                old+="$text"$'\n'
            fi
            continue
        fi
        printf '%s\n' "$text" >>"$out"
        if [[ $text =~ ^\<!--\ bench-table\ ([^ ]+)(.*)\ --\>$ ]]; then
            lab=${BASH_REMATCH[1]} style=full datasets="" gpu="" old="" start=$line in_block=1
            for arg in ${BASH_REMATCH[2]}; do
                case $arg in
                    style=brief | style=full) style=${arg#style=} ;;
                    dataset=*) datasets=${arg#dataset=} ;;
                    gpu=*) gpu=${arg#gpu=} ;;
                    *) echo "bench-table: $file:$line: unknown option '$arg': use dataset=NAME,NAME, gpu=GPU or style=brief" >&2; exit 1 ;;
                esac
            done
            [ -d "$top/labs/$lab" ] || { echo "bench-table: $file:$line: no lab '$lab' (labs/$lab): name a lab folder, e.g. 01-straightforward" >&2; exit 1; }
            [ -z "$gpu" ] || [ -f "$top/labs/$lab/bench/$gpu.csv" ] || {
                echo "bench-table: $file:$line: no file labs/$lab/bench/$gpu.csv: name a GPU as its file is named, e.g. gpu=nvidia-h100-80gb-hbm3" >&2; exit 1; }
        fi
    done <"$file"
    [ "$in_block" = 0 ] || { echo "bench-table: $file:$start: the bench-table block has no closing '<!-- /bench-table -->': add it" >&2; exit 1; }
}

case $mode in
    record) record "$@" ;;
    update | check)
        files=("$@")
        [ ${#files[@]} -gt 0 ] || files=("$top"/labs/*/README.md "$top"/slides/*.md)
        status=0 tables=0
        tmp=$(mktemp "${TMPDIR:-/tmp}/lk-bench-table.XXXXXX")
        trap 'rm -f "$tmp"' EXIT
        for file in "${files[@]}"; do
            [ -f "$file" ] || { echo "bench-table: $file: no such file" >&2; exit 1; }
            grep -q '^<!-- bench-table ' "$file" || continue
            stale=$(rewrite "$file" "$tmp" 3>&1)
            tables=$((tables + $(grep -c '^<!-- bench-table ' "$file")))
            [ -n "$stale" ] || continue
            if [ "$mode" = update ]; then
                cat "$tmp" >"$file"
                echo "bench-table: updated ${file#"$top"/}"
            else
                for line in $stale; do
                    echo "bench-table: $file:$line: the table differs from its source files (labs/*/bench/*.csv): run tools/bench-table.sh update $file" >&2
                done
                status=1
            fi
        done
        [ "$mode" = update ] || [ "$status" = 1 ] || echo "bench-table: $tables tables match their sources"
        exit "$status" ;;
    *) echo "bench-table: $usage" >&2; exit 2 ;;
esac
