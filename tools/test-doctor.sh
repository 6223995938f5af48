#!/usr/bin/env bash
# make doctor's check of the grader's sandbox, with stand-in bwrap programs first on the PATH:
# one that starts (ok), one that cannot (a FIX naming what bwrap said and what to do, and the
# doctor's exit status 1). Built kernels that hold no code for the GPU (a stand-in GPU and
# cuobjdump). And the quick starts name the packages CI installs.
# usage: test-doctor.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
mkdir -p "$work/starts" "$work/refuses"
printf '#!/bin/sh\n[ "$1" = --version ] && echo "bubblewrap 9.9.9"\nexit 0\n' >"$work/starts/bwrap"
printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n' \
    >"$work/refuses/bwrap"
chmod +x "$work/starts/bwrap" "$work/refuses/bwrap"

echo "make doctor and the grader's sandbox:"
PATH="$work/starts:$PATH" "$here/doctor.sh" >"$work/starts.log" 2>&1 || true
check "a bwrap that starts: ok, with its version" \
    grep -q '^ok   bubblewrap 9.9.9 (the grader.s sandbox starts here)' "$work/starts.log"
status=0
PATH="$work/refuses:$PATH" "$here/doctor.sh" >"$work/refuses.log" 2>&1 || status=$?
check "a bwrap that cannot start: a FIX with what bwrap said" \
    grep -q '^FIX  bubblewrap cannot start a sandbox here (bwrap: No permissions' "$work/refuses.log"
check "... and what to do" grep -q 'unprivileged_userns_clone=1.*--unsandboxed' "$work/refuses.log"
check "... and the doctor fails" test "$status" = 1

# Built kernels against the GPU: a stand-in nvidia-smi shows an sm_80 GPU, a stand-in cuobjdump
# lists each object's cubins and PTX from files beside it.
mkdir -p "$work/gpu" "$work/objs"
cat >"$work/gpu/nvidia-smi" <<'SH'
#!/bin/sh
case "$*" in
    *--query-gpu*) echo "NVIDIA Stand-in GPU, 8.0, 999.99" ;;
    -L) echo "GPU 0: NVIDIA Stand-in GPU (UUID: GPU-0)" ;;
    *) echo "| NVIDIA-SMI 999.99   Driver Version: 999.99   CUDA Version: 99.9 |" ;;
esac
SH
cat >"$work/gpu/cuobjdump" <<'SH'
#!/bin/sh
case $1 in --list-elf) cat "$2.elf" 2>/dev/null ;; --list-ptx) cat "$2.ptx" 2>/dev/null ;; esac
exit 0
SH
chmod +x "$work/gpu/nvidia-smi" "$work/gpu/cuobjdump"
for o in cubin ptx stale; do touch "$work/objs/$o.o"; done
echo "ELF file    1: kernels.sm_80.cubin" >"$work/objs/cubin.o.elf"     # native code
echo "PTX file    1: kernels.sm_75.ptx" >"$work/objs/ptx.o.ptx"         # JIT from older PTX
echo "ELF file    1: kernels.sm_90.cubin" >"$work/objs/stale.o.elf"     # another machine's
echo "PTX file    1: kernels.sm_90.ptx" >"$work/objs/stale.o.ptx"
PATH="$work/gpu:$PATH" LK_DOCTOR_OBJECTS="$work/objs/cubin.o $work/objs/ptx.o" \
    "$here/doctor.sh" >"$work/built-ok.log" 2>&1 || true
check "built kernels with a cubin for the GPU, or older PTX: ok" \
    grep -q '^ok   built kernels: all 2 hold code for this sm_80 GPU' "$work/built-ok.log"
status=0
PATH="$work/gpu:$PATH" LK_DOCTOR_OBJECTS="$work/objs/cubin.o $work/objs/stale.o" \
    "$here/doctor.sh" >"$work/built-stale.log" 2>&1 || status=$?
check "a built kernel with only newer code: a FIX naming it and what to do" \
    grep -q "^FIX  1 built kernel object(s) hold no code for this sm_80 GPU ($work/objs/stale.o).*make clean, then make" "$work/built-stale.log"
check "... and the doctor fails" test "$status" = 1

# The packages CI installs for builds and tests are the ones both quick starts name (the API
# docs' and the slides' are CI's extras), but for the instructor's similarity-tester (make
# similarity), which only the kit's README names: students do not compare submissions.
ci_packages=$(sed -n '/^packages=(/,/)/p' "$top/.ci/run" | tr -d '()' | sed 's/packages=//' |
    tr -s ' \n' '\n' | grep -Evx 'doxygen|pandoc|texlive-.*|lmodern|' | sort)
for readme in README.md tools/handout-README.md; do
    named=$(tr '\n' ' ' <"$top/$readme" | sed -n 's/.*(`apt-get install \([^`]*\)`.*/\1/p' |
        tr -s ' ' '\n' | grep -v '^$' | sort)
    expected=$ci_packages
    [ "$readme" = README.md ] || expected=$(grep -vx similarity-tester <<<"$ci_packages")
    check "$readme's quick start names the packages .ci/run installs" \
        test "$named" = "$expected"
done
check "CI installs similarity-tester (make similarity, tools/test-similarity.sh)" \
    grep -qx similarity-tester <<<"$ci_packages"

# similarity-tester: ok with its version when sim_c is there, a note (a FIX when strict) when not.
mkdir -p "$work/sim"
printf '#!/bin/sh\nexit 0\n' >"$work/sim/sim_c"
chmod +x "$work/sim/sim_c"
PATH="$work/sim:$PATH" "$here/doctor.sh" >"$work/sim.log" 2>&1 || true
check "sim_c present: ok, make similarity can run" \
    grep -q '^ok   similarity-tester .*make similarity can compare submissions' "$work/sim.log"
# A PATH holding everything the doctor runs but sim_c: links to the tools it uses.
mkdir -p "$work/nosim"
for t in bash sh gcc cc awk sed grep cut tr sort head uniq dirname mktemp rm cat printf \
         dpkg-query pkg-config id ld as collect2 cc1; do
    p=$(command -v "$t" 2>/dev/null) && ln -sf "$p" "$work/nosim/$t"
done
PATH="$work/nosim" LK_DOCTOR_STRICT=1 "$here/doctor.sh" >"$work/nosim.log" 2>&1 || true
check "sim_c missing under LK_DOCTOR_STRICT=1: a FIX naming the package" \
    grep -q '^FIX  sim_c not found (needed for make similarity only): apt-get install similarity-tester' "$work/nosim.log"

checks_done test-doctor
