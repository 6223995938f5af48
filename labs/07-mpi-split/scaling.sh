#!/usr/bin/env bash
# Strong and weak scaling of lab 07 over the ranks and GPUs of this machine (the driver's
# --bench under mpirun, once per rank count), as two Markdown tables. Needs a GPU.
#
#   strong: the same grid (sciddicat-scale, 8192 x 8192) on 1, 2, ... ranks;
#           efficiency T1 / (P TP), P the GPUs in use (ranks beyond them share GPUs)
#   weak:   P ranks on a grid of 8192 P x 8192 cells (the same rows per rank);
#           efficiency T1 / TP
# T is the time loop's time per step (slowest rank; the driver times it between a barrier
# after the set-up and the end of the last step), for each variant (sync, overlap); the
# exchange column is the time spent in lab07_halo_begin/end per step, with the sync loop
# only (the overlap loop waits there for the GPU, which says nothing of the exchange).
#
# usage: ./scaling.sh [--csv FILE] [options for every driver run]
#   --csv FILE                 append the driver's bench CSV rows of one more one-rank run
#                              (CSV_STEPS steps) to FILE (make bench does: what compares with
#                              the other labs), and write every run of the tables to
#                              lab07-scaling.csv beside it
#   VARIANT=solution ./scaling.sh        time the solution instead of your files
#   RANKS="1 2 4" WEAK_RANKS="1 2"       rank counts (default: up to the GPUs present, and
#                                        two ranks per GPU for the strong table)
#   STEPS=100 REPEAT=3                   steps and timed runs per rank count
#   CSV_STEPS=1000                       steps of the one-rank run whose rows --csv appends
#   MPIRUN_OPTS="--mca opal_cuda_support 1 --mca pml ob1"   options for mpirun (here: Open
#                                        MPI's CUDA support on, for the CUDA-aware path where it
#                                        has one; ob1's shared-memory transport takes device
#                                        pointers)
#   LOGS=dir                             keep each run's log there (default: a temporary one)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
locked=("$here/../../tools/gpu-lock.sh" -) # each run holds the grader's GPU lock
prog=${PROG:-$here/build/${VARIANT:-student}/lab07}
csv=
while [ $# -gt 0 ]; do
    case $1 in
        --csv) csv=${2:?--csv needs a file}; shift 2 ;;
        *) break ;;
    esac
done
if [ ! -x "$prog" ]; then
    echo "scaling: $prog not found: run make${VARIANT:+ VARIANT=$VARIANT} first" >&2
    exit 1
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "scaling: mpirun not found: apt-get install openmpi-bin (see make doctor)" >&2
    exit 1
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -eq 0 ]; then
    echo "scaling: no GPU on this machine (nvidia-smi lists none): scaling needs one" >&2
    exit 1
fi
if [ "$gpus" -ge 2 ]; then
    default_ranks="$(seq -s ' ' 1 "$gpus") $((2 * gpus))"
    default_weak="$(seq -s ' ' 1 "$gpus")"
else
    default_ranks="1 2 4"
    default_weak="1 2"
fi
ranks_list=${RANKS:-$default_ranks}
weak_list=${WEAK_RANKS:-$default_weak}
steps=${STEPS:-100}
repeat=${REPEAT:-3}
out=${LOGS:-$(mktemp -d)}
mkdir -p "$out"
root_opt=()
[ "$(id -u)" -eq 0 ] && root_opt=(--allow-run-as-root)
# shellcheck disable=SC2206  # MPIRUN_OPTS is a list of words by design
mpirun_opts=(${MPIRUN_OPTS:-})

results=$out/results.txt
: > "$results"
# run KIND RANKS STEPS DATASET-ARGS...: one --bench run of STEPS steps under mpirun, its log
# in $out/KIND-RANKS.log and its CSV rows in $out/KIND-RANKS.csv; KIND table (strong, weak)
# adds its lab07-bench lines to $results, KIND csv its CSV rows to --csv.
run() {
    local kind=$1 np=$2 n=$3
    shift 3
    local log=$out/$kind-$np.log rows_csv=$out/$kind-$np.csv
    rm -f "$rows_csv"
    echo "scaling: $kind, $np rank(s): mpirun -np $np ${mpirun_opts[*]} lab07 --bench $* --steps $n" >&2
    if ! "${locked[@]}" mpirun -np "$np" --oversubscribe "${root_opt[@]}" "${mpirun_opts[@]}" "$prog" --bench "$@" \
            --steps "$n" --repeat "$repeat" --serial-steps 1 --csv "$rows_csv" > "$log" 2>&1; then
        echo "scaling: the run failed; the end of its log ($log):" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    if [ "$kind" = csv ]; then
        [ -s "$rows_csv" ] || return 0
        [ -s "$csv" ] || head -n 1 "$rows_csv" > "$csv"
        tail -n +2 "$rows_csv" >> "$csv"
    else
        grep '^lab07-bench ' "$log" | sed "s/^lab07-bench /$kind /" >> "$results"
    fi
}

for np in $ranks_list; do run strong "$np" "$steps" --dataset sciddicat-scale; done
for np in $weak_list; do run weak "$np" "$steps" --gen "valley:$((8192 * np))x8192:1"; done
# make bench's rows: the harness times whole calls less 0-step calls, and a call's set-up
# (on an H100 1.1-1.4 s, spread 0.3-0.5 s) drowns 100 steps (0.25 s): CSV_STEPS steps.
[ -z "$csv" ] || run csv 1 "${CSV_STEPS:-1000}" --dataset sciddicat-scale

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
if [ -n "$csv" ]; then
    scaling_csv=$(dirname "$csv")/lab07-scaling.csv
    {
        echo "scaling,gpu,ranks,gpus,aware,variant,rows,cols,steps,ms_per_step,exchange_ms_per_step"
        awk -v gpu="$gpu_name" -v steps="$steps" '
            function field(name,   i) {
                for (i = 2; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
            }
            { printf "%s,\"%s\",%s,%s,%s,%s,%s,%s,%s,%s,%s\n", $1, gpu, field("ranks"), field("gpus"),
                     field("aware"), field("variant"), field("rows"), field("cols"), steps,
                     field("step_ms"), field("exchange_ms") }' "$results"
    } > "$scaling_csv"
fi
aware=$(awk '{for (i = 2; i <= NF; i++) if ($i ~ /^aware=/) {sub(/aware=/, "", $i); print $i; exit}}' "$results")
awk -v gpu="$gpu_name ($gpus on this machine)" -v aware="${aware:-0}" -v steps="$steps" '
function field(name,   i) {
    for (i = 2; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
    return ""
}
{
    k = $1; n = ++count[k]
    kind[k, n] = k; np[k, n] = field("ranks"); used[k, n] = field("gpus"); var[k, n] = field("variant")
    grid[k, n] = field("rows") " x " field("cols"); t[k, n] = field("step_ms")
    # Only the sync loop idles the GPU while it exchanges; in the overlap loop the host waits
    # in lab07_halo_begin for the edge rows the GPU is still computing, so no exchange cost.
    x[k, n] = var[k, n] == "sync" ? sprintf("%.4f", field("exchange_ms")) : "-"
    if (np[k, n] == 1) t1[k, var[k, n]] = t[k, n]
}
END {
    printf "GPU: %s; MPI %s; %d steps per run\n\n", gpu,
           aware == 1 ? "CUDA-aware (device buffers)" : "not CUDA-aware (staged through pinned host buffers)", steps
    print "Strong scaling, 8192 x 8192 cells (sciddicat-scale):\n"
    print "| ranks | GPUs | variant | ms per step | exchange ms per step | efficiency T1/(P TP) |"
    print "|---|---|---|---|---|---|"
    for (i = 1; i <= count["strong"]; i++) {
        e = t1["strong", var["strong", i]] > 0 && t["strong", i] > 0 ? \
            sprintf("%.0f %%", 100 * t1["strong", var["strong", i]] / (used["strong", i] * t["strong", i])) : "-"
        printf "| %s | %s | %s | %.4f | %s | %s |\n", np["strong", i], used["strong", i],
               var["strong", i], t["strong", i], x["strong", i], e
    }
    print "\nWeak scaling, 8192 rows per rank x 8192 columns:\n"
    print "| ranks | GPUs | grid | variant | ms per step | exchange ms per step | efficiency T1/TP |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= count["weak"]; i++) {
        e = t1["weak", var["weak", i]] > 0 && t["weak", i] > 0 ? \
            sprintf("%.0f %%", 100 * t1["weak", var["weak", i]] / t["weak", i]) : "-"
        printf "| %s | %s | %s | %s | %.4f | %s | %s |\n", np["weak", i], used["weak", i],
               grid["weak", i], var["weak", i], t["weak", i], x["weak", i], e
    }
}' "$results"
echo
echo "logs: $out${csv:+; every run as CSV: $(dirname "$csv")/lab07-scaling.csv}"
