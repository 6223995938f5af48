#!/usr/bin/env bash
# bench-profile.sh's arithmetic and parsing without a GPU: a stand-in ncu writes the CSV that
# Nsight Compute's `--csv --page raw` writes (quoted fields, a units row, scaled units,
# thousands separators; with or without a units row) for a driver whose help lists variants. Checks the bytes per step
# (the difference of two runs), the kernels per step, the launches and a failing ncu.
# usage: test-bench-profile.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"

# A driver: its help lists two variants, the first the default; its JSON line names the grid.
cat >"$work/prog" <<'SH'
#!/usr/bin/env bash
if [ "$1" = -h ]; then
    printf '  -s, --steps N        steps\n      --variant NAME       wide: big tiles (default)\n'
    printf '                           thin: small tiles\n'
    printf '                           other: for another kind of input\n'
    printf '                           cpu: on the CPU\n  -o, --out FILE       write\n'
    exit 0
fi
for a in "$@"; do
    [ "$a" != other ] || { echo "prog: --variant other runs on another input: use wide or thin" >&2; exit 2; }
done
device="Fake GPU (sm_90, 1 SMs)"
! printf '%s\n' "$@" | grep -qx cpu || device="the CPU (variant cpu, no GPU used)"
echo '{"lab":"99-fake","dataset":"fake","rows":1000,"cols":500,"steps":0,"gpu":{"device":"'"$device"'","ms_median":1}}'
SH
# ncu: -o REP PROG ARGS runs PROG and records the steps; --import prints per step 2 kernels of
# 1.5 MB read and 0.5 MB written, plus 3 set-up kernels of 7,000,000 bytes each.
cat >"$work/ncu" <<'SH'
#!/usr/bin/env bash
if [ "$1" = --import ]; then
    steps=$(cat "${2%.ncu-rep}.steps")
    [ "${FAKE_NCU_UNITS:-base}" != scaled ] || ! printf '%s\n' "$@" | grep -q -- --print-units || exit 1
    echo '"ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum"'
    if [ -e "${2%.ncu-rep}.cpu" ]; then # a CPU variant: the harness's set-up kernel only
        echo '"","","byte","byte","nsecond"'
        echo '"1","setup","3,328","0","1,000"'
    elif [ "${FAKE_NCU_UNITS:-base}" != scaled ]; then
        [ "${FAKE_NCU_UNITS:-base}" = none ] || echo '"","","byte","byte","nsecond"'
        for k in 1 2 3; do echo "\"$k\",\"setup\",\"7,000,000\",\"0\",\"1,000\""; done
        for ((s = 0; s < 2 * steps; s++)); do echo "\"$s\",\"step\",\"1,500,000\",\"500,000\",\"20,000\""; done
    else
        echo '"","","Mbyte","Kbyte","usecond"'
        for k in 1 2 3; do echo "\"$k\",\"setup\",\"7.00\",\"0\",\"1.00\""; done
        for ((s = 0; s < 2 * steps; s++)); do echo "\"$s\",\"step\",\"1.50\",\"500.00\",\"20.00\""; done
    fi
    exit 0
fi
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
        -o) rep=${args[i + 1]} ;;
        --steps) steps=${args[i + 1]} ;;
        --dataset) [ "${args[i + 1]}" != broken ] || { echo "==ERROR== ERR_NVGPUCTRPERM" >&2; exit 1; } ;;
    esac
done
echo "$steps" >"$rep.steps"
rm -f "$rep.cpu"
! printf '%s\n' "${args[@]}" | grep -qx cpu || touch "$rep.cpu"
touch "$rep.ncu-rep"
"${args[@]:9}" || { status=$?; echo "==ERROR== The application returned an error code ($status)." >&2; exit 1; }
SH
chmod +x "$work/prog" "$work/ncu"

for units in base scaled none; do
    rm -f "$work/p.csv"
    FAKE_NCU_UNITS=$units NCU="$work/ncu" "$here/bench-profile.sh" 99-fake "$work/prog" \
        "$work/p.csv" fake >"$work/log" 2>&1 || { cat "$work/log"; }
    check "$units units: one row per variant, none for the default run" \
        test "$(grep -c '^99-fake,' "$work/p.csv")" = 2
    check "$units units: 4 MB per step over 500,000 cells is 8 B per cell" \
        grep -q '^99-fake,"Fake GPU (sm_90, 1 SMs)",fake,1000,500,"variant thin",4,12,2.00,3000000,1000000,4000000,8.00,0.040000$' "$work/p.csv"
done
check "the header names the columns" grep -q '^lab,gpu,dataset,rows,cols,launch,' "$work/p.csv"
rm -f "$work/p.csv"
st=0
NCU="$work/ncu" "$here/bench-profile.sh" 99-fake "$work/prog" "$work/p.csv" fake >"$work/log" 2>&1 || st=$?
check "a variant the driver refuses for this input is skipped, not a failure" test "$st" = 0
check "... with the driver's words" \
    grep -q 'variant other: skipped, the driver refuses it here: --variant other runs on another input: use wide or thin' "$work/log"
check "... and the others still measured" test "$(grep -c '^99-fake,' "$work/p.csv")" = 2
check "a variant that launches no kernel is skipped after one run, without a row" \
    grep -q 'variant cpu: skipped, it launches no kernel' "$work/log"
rm -f "$work/p.csv"
if NCU="$work/ncu" "$here/bench-profile.sh" 99-fake "$work/prog" "$work/p.csv" broken \
        >"$work/log" 2>&1; then st=0; else st=$?; fi
check "a failing ncu fails the run and says why" test "$st" = 1
check "the permission problem is explained" grep -q ERR_NVGPUCTRPERM "$work/log"
if NCU="$work/nothing" "$here/bench-profile.sh" 99-fake "$work/prog" "$work/p.csv" fake \
        >"$work/log" 2>&1; then st=0; else st=$?; fi
check "no ncu: an error that says how to get it" grep -q "not found: install" "$work/log"

checks_done test-bench-profile
