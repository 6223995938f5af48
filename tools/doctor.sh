#!/usr/bin/env bash
# make doctor: what this machine has and lacks for the kit, one line per check.
#   ok   <what was found>
#   FIX  <what is wrong>: <what to do>        (counts as a problem)
#   note <fact worth knowing>                 (does not count)
# Ends with "doctor: N problem(s)"; exit status 1 if N > 0.
#
# Policy: FIX is for whatever `make`, `make check` or `make grade` need: nvcc (CUDA >= 12) and
# its static runtime, gcc, Criterion, libpng, libcrypto, Open MPI (lab 07), the grader's cJSON,
# libseccomp and a bubblewrap that starts a sandbox, and, when a GPU
# is present, a driver new enough for the toolkit, a CUDA_ARCH that runs on it and built
# kernels that hold code for it.
# Tools only optional targets need (Doxygen for `make docs`, pandoc and pdflatex for
# `make slides`, Nsight Compute for `make bench-profile`, similarity-tester for
# `make similarity`, compute-sanitizer for debugging) are notes; LK_DOCTOR_STRICT=1 makes
# them problems (maintainer/CI machines).
# No GPU is a note; LK_DOCTOR_REQUIRE_GPU=1 makes it a problem. A non-CUDA-aware Open MPI is
# always a note: lab 07 then stages its halo exchanges through host memory.
#
# Environment: NVCC, CUDA_ARCH (both passed by `make doctor`), CUDA_HOME,
# LK_DOCTOR_STRICT, LK_DOCTOR_REQUIRE_GPU.
set -u

problems=0
strict=${LK_DOCTOR_STRICT:-0}
require_gpu=${LK_DOCTOR_REQUIRE_GPU:-0}

ok()   { printf 'ok   %s\n' "$*"; }
fix()  { printf 'FIX  %s\n' "$*"; problems=$((problems + 1)); }
note() { printf 'note %s\n' "$*"; }
# An optional tool's absence: a note, or a problem under LK_DOCTOR_STRICT=1.
optional() { if [ "$strict" = 1 ]; then fix "$@"; else note "$@"; fi; }
# "12.4" -> 1204, so versions compare as integers.
vnum() { local major=${1%%.*} minor=${1#*.}; minor=${minor%%.*}; echo $((10#$major * 100 + 10#${minor:-0})); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lk-doctor.XXXXXX") || { echo "doctor: mktemp failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT

# ---- CUDA toolkit -------------------------------------------------------------------------
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda_ver=""
if ! nvcc_path=$(command -v "$nvcc" 2>/dev/null) || [ ! -x "$nvcc_path" ]; then
    fix "nvcc not found (NVCC=$nvcc): install the CUDA toolkit 12 or newer (NVIDIA's apt repository, https://developer.nvidia.com/cuda-downloads; Debian 12's nvidia-cuda-toolkit is 11.8, too old), then put its bin/ on PATH or run make CUDA_HOME=/usr/local/cuda-12.x"
else
    cuda_ver=$("$nvcc_path" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
    if [ -z "$cuda_ver" ]; then
        fix "$nvcc_path --version does not report a CUDA release: reinstall the CUDA toolkit (12 or newer)"
    elif [ "$(vnum "$cuda_ver")" -lt 1200 ]; then
        fix "nvcc is CUDA $cuda_ver ($nvcc_path), the kit needs CUDA 12 or newer: install a newer toolkit (https://developer.nvidia.com/cuda-downloads) and run make CUDA_HOME=/usr/local/cuda-12.x"
    else
        ok "nvcc: CUDA $cuda_ver ($nvcc_path)"
    fi
fi
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ] && [ -n "${nvcc_path:-}" ]; then cuda_home=$(dirname "$(dirname "$nvcc_path")"); fi

# ---- C compiler (the probes need one; reported with the libraries) ----------------------
cc=""
if command -v gcc >/dev/null 2>&1; then cc=gcc; elif command -v cc >/dev/null 2>&1; then cc=cc; fi

# probe NAME FLAGS... < source: compile and link a C program from stdin into $tmp/NAME.
probe() { local name=$1; shift; [ -n "$cc" ] && "$cc" -x c - -o "$tmp/$name" "$@" >"$tmp/$name.log" 2>&1; }
# Why a probe failed, in one line: the first compiler error.
why() { grep -m 1 -E 'error|undefined|cannot find' "$tmp/$1.log" | sed -E 's/^<stdin>:[0-9:]+ *//; s/^.*\/ld: *//' | cut -c1-100; }

if [ -n "$cuda_home" ] && [ -n "$cuda_ver" ]; then
    if probe cudart -I"$cuda_home/include" -L"$cuda_home/lib64" -lcudart_static -ldl -lrt -lpthread <<'EOF'
#include <cuda_runtime_api.h>
#include <stdio.h>
int main(void) { int n = 0; cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); return 1; } printf("%d\n", n); return 0; }
EOF
    then ok "CUDA runtime links (libcudart_static from $cuda_home/lib64)"
    elif [ -z "$cc" ]; then note "CUDA runtime link not checked: no C compiler"
    else fix "cannot link the CUDA runtime from $cuda_home ($(why cudart)): run make CUDA_HOME=<toolkit root holding include/cuda_runtime_api.h and lib64/libcudart_static.a>"
    fi
fi

# ---- GPU, driver, architectures -----------------------------------------------------------
gpu_lines="" gpu_unreadable=0
if command -v nvidia-smi >/dev/null 2>&1; then
    # With no device nvidia-smi prints "No devices were found" on stdout: keep only CSV rows.
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader >"$tmp/smi.out" 2>&1
    gpu_lines=$(grep -E '^[^,]+, *[0-9]+\.[0-9]+ *,' "$tmp/smi.out")
    grep -vE '^[^,]+, *[0-9]+\.[0-9]+ *,|^ *$' "$tmp/smi.out" >"$tmp/smi.err"
    if [ -z "$gpu_lines" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        gpu_unreadable=1
        fix "nvidia-smi lists a GPU but cannot report its compute capability (driver too old): install an NVIDIA driver that supports CUDA ${cuda_ver:-12} or newer"
    fi
fi

# CUDA_ARCH as common/common.mk computes it when the script runs outside make.
if [ -z "${CUDA_ARCH:-}" ]; then
    cc0=$(printf '%s\n' "$gpu_lines" | head -n 1 | cut -d, -f2 | tr -d ' .')
    if [ -n "$cc0" ]; then CUDA_ARCH="sm_$cc0"; else CUDA_ARCH="sm_75 sm_80 sm_86 sm_89 sm_90"; fi
fi

# Architectures this nvcc can build (sm_XY lines); empty if the option is unknown.
tk_codes="" tk_min=0
[ -n "$cuda_ver" ] && tk_codes=$("$nvcc_path" --list-gpu-code 2>/dev/null | grep '^sm_' | tr '\n' ' ')
[ -n "$tk_codes" ] && tk_min=$(tr ' ' '\n' <<<"$tk_codes" | grep . | sed 's/^sm_//; s/[a-z]*$//' | sort -n | head -n 1)
arch_max=0 bad_arch=""
for a in $CUDA_ARCH; do
    n=${a#sm_}
    if [ "$n" = "$a" ] || ! [[ $n =~ ^[0-9]+[a-z]?$ ]]; then
        fix "CUDA_ARCH entry '$a' is not of the form sm_XY: run make CUDA_ARCH=\"sm_80 sm_90\" (for example) or leave CUDA_ARCH unset"
        continue
    fi
    [ "${n%[a-z]}" -gt "$arch_max" ] && arch_max=${n%[a-z]}
    if [ -n "$tk_codes" ] && [[ " $tk_codes" != *" sm_${n%[a-z]} "* ]]; then bad_arch="$bad_arch $a"; fi
done
if [ -n "$bad_arch" ]; then
    fix "nvcc $cuda_ver cannot build${bad_arch} (CUDA_ARCH=$CUDA_ARCH): drop it from CUDA_ARCH, or use a toolkit that still supports it (make CUDA_HOME=...)"
elif [ -n "$tk_codes" ]; then
    ok "CUDA_ARCH=$CUDA_ARCH: nvcc $cuda_ver builds all of them"
fi

# As lk_nvidia_driver_loaded() (common/src/cuda_check.c): with the kernel driver loaded, a GPU
# that cannot be seen is a driver problem; without it, the machine has no GPU (LK_NO_GPU).
driver_node=""
for f in /dev/nvidiactl /proc/driver/nvidia/version; do
    [ -z "$driver_node" ] && [ -e "$f" ] && driver_node=$f
done
if [ -z "$gpu_lines" ] && [ "$gpu_unreadable" = 0 ] && [ -n "$driver_node" ]; then
    if command -v nvidia-smi >/dev/null 2>&1; then
        smi_says=$(head -n 1 "$tmp/smi.err" 2>/dev/null | cut -c1-100)
        fix "the NVIDIA driver is loaded ($driver_node) but nvidia-smi lists no GPU${smi_says:+ ($smi_says)}: check the driver install (dmesg | grep -i nvidia) and that the GPU is visible here (containers: run with the GPU passed through)"
    else
        fix "the NVIDIA driver is loaded ($driver_node) but nvidia-smi is not on PATH: install the driver's utilities (the nvidia-smi of your driver version) so the kit can find the GPU"
    fi
elif [ -z "$gpu_lines" ] && [ "$gpu_unreadable" = 0 ]; then
    msg="no GPU on this machine: GPU tests will be skipped (CPU tests, builds and the grader's CPU stages still run)"
    if [ "$require_gpu" = 1 ]; then
        fix "no GPU on this machine (LK_DOCTOR_REQUIRE_GPU=1): run on a machine with an NVIDIA GPU and its driver installed (nvidia-smi must list the GPU)"
    else
        note "$msg"
    fi
    if [ -s "$tmp/smi.err" ]; then note "nvidia-smi says: $(head -n 1 "$tmp/smi.err" | cut -c1-100)"; fi
fi

# check_built SM: the labs' kernels already built (labs/*/build/*/kernels.o, or the objects in
# LK_DOCTOR_OBJECTS) hold code a GPU of architecture SM runs: a cubin for it, or PTX no newer
# than it. A build from another machine or another CUDA_ARCH fails only at its first launch.
top=$(cd "$(dirname "$0")/.." && pwd)
cuobjdump=$(command -v cuobjdump 2>/dev/null)
[ -z "$cuobjdump" ] && [ -n "$cuda_home" ] && [ -x "$cuda_home/bin/cuobjdump" ] && cuobjdump=$cuda_home/bin/cuobjdump
check_built() {
    local sm=$1 cap=${1#sm_} o objs=() stale=()
    for o in ${LK_DOCTOR_OBJECTS:-"$top"/labs/*/build/*/kernels.o}; do [ -f "$o" ] && objs+=("$o"); done
    [ "${#objs[@]}" -gt 0 ] || return 0
    if [ -z "$cuobjdump" ]; then
        note "built kernels not checked against this $sm GPU: cuobjdump (CUDA toolkit) not found"
        return 0
    fi
    for o in "${objs[@]}"; do
        "$cuobjdump" --list-elf "$o" 2>/dev/null | grep -q "\.$sm\.cubin" && continue
        local ptx
        ptx=$("$cuobjdump" --list-ptx "$o" 2>/dev/null | sed -n 's/.*\.sm_\([0-9]*\)[a-z]*\.ptx.*/\1/p' | sort -n | head -n 1)
        [ -n "$ptx" ] && [ "$ptx" -le "$cap" ] && continue
        stale+=("${o#"$top"/}")
    done
    if [ "${#stale[@]}" -eq 0 ]; then
        ok "built kernels: all ${#objs[@]} hold code for this $sm GPU"
    else
        fix "${#stale[@]} built kernel object(s) hold no code for this $sm GPU (${stale[0]}$([ "${#stale[@]}" -gt 1 ] && echo ", ...")): built on another machine or for another CUDA_ARCH; run make clean, then make"
    fi
}

if [ -n "$gpu_lines" ]; then
    # One line per distinct GPU model; the driver is the same for all.
    driver=$(printf '%s\n' "$gpu_lines" | head -n 1 | cut -d, -f3 | tr -d ' ')
    while read -r count line; do
        name=$(echo "$line" | cut -d, -f1 | sed 's/ *$//')
        cap=$(echo "$line" | cut -d, -f2 | tr -d ' ')
        sm="sm_${cap//./}"
        ok "GPU: $count x $name, compute capability $cap ($sm), driver $driver"
        if [ "${cap//./}" -lt 75 ]; then note "$sm is older than Turing (sm_75), the oldest GPU the kit is tested on"; fi
        if [ -n "$tk_codes" ] && [ "${cap//./}" -lt "$tk_min" ]; then
            fix "the GPU ($sm) is older than anything nvcc $cuda_ver builds: install a CUDA 12.x toolkit that supports $sm and run make CUDA_HOME=/usr/local/cuda-12.x CUDA_ARCH=$sm"
        elif [[ " $CUDA_ARCH " == *" $sm "* ]]; then
            ok "CUDA_ARCH includes $sm (native code for this GPU)"
        elif [ "$arch_max" -gt 0 ] && [ "$arch_max" -le "${cap//./}" ]; then
            ok "CUDA_ARCH=$CUDA_ARCH: this $sm GPU JIT-compiles the sm_$arch_max PTX at first launch (make CUDA_ARCH=$sm builds native code)"
        else
            fix "CUDA_ARCH=$CUDA_ARCH has no code that runs on this GPU ($sm): rebuild with make CUDA_ARCH=$sm (after make clean, so no object keeps the old architectures)"
        fi
        check_built "$sm"
    done < <(printf '%s\n' "$gpu_lines" | cut -d, -f1,2 | sort | uniq -c)

    driver_old=0
    drv_cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9.]*\).*/\1/p' | head -n 1)
    if [ -z "$drv_cuda" ]; then
        note "nvidia-smi does not show the driver's CUDA version: driver vs toolkit not checked"
    elif [ -n "$cuda_ver" ] && [ "$(vnum "$drv_cuda")" -lt "$(vnum "$cuda_ver")" ]; then
        driver_old=1
        fix "driver $driver supports CUDA up to $drv_cuda but nvcc is CUDA $cuda_ver: update the NVIDIA driver to one for CUDA $cuda_ver or newer, or use an older toolkit (make CUDA_HOME=/usr/local/cuda-$drv_cuda)"
    elif [ -n "$cuda_ver" ]; then
        ok "driver $driver supports CUDA $drv_cuda >= toolkit $cuda_ver"
    fi

    # What the GPU tests themselves will see: the CUDA runtime's own answer (skipped when the
    # driver is already known to be too old, so one cause gives one FIX line).
    if [ -x "$tmp/cudart" ] && [ "$driver_old" = 0 ]; then
        if out=$("$tmp/cudart" 2>&1); then
            ok "CUDA runtime sees $out device(s)"
        else
            fix "the CUDA runtime cannot use the GPU ($out): check the driver install (nvidia-smi, /dev/nvidia*) and that it matches CUDA $cuda_ver"
        fi
    fi
fi

# ---- libraries the builds and tests link --------------------------------------------------
if [ "$cc" = gcc ]; then
    ok "gcc $(gcc -dumpfullversion -dumpversion 2>/dev/null)"
else
    fix "gcc not found: apt-get install build-essential"
fi
if [ -z "$cc" ]; then
    note "Criterion, libpng and libcrypto not checked: they need the C compiler"
else
    if probe criterion -lcriterion <<'EOF'
#include <criterion/criterion.h>
Test(doctor, links) { cr_assert(1); }
EOF
    then ok "Criterion $(pkg-config --modversion criterion 2>/dev/null) (criterion/criterion.h compiles and links)"
    else fix "Criterion missing ($(why criterion)): apt-get install libcriterion-dev"
    fi

    if probe png -I/usr/include/libpng16 -lpng16 -lz <<'EOF'
#include <png.h>
#include <zlib.h>
#include <stdio.h>
int main(void) { printf("%s (zlib %s)\n", png_get_libpng_ver(NULL), zlibVersion()); return 0; }
EOF
    then ok "libpng $("$tmp/png")"
    else fix "libpng or zlib missing ($(why png)): apt-get install libpng-dev zlib1g-dev"
    fi

    if probe crypto -lcrypto <<'EOF'
#include <openssl/crypto.h>
#include <stdio.h>
int main(void) { printf("%s\n", OpenSSL_version(OPENSSL_VERSION)); return 0; }
EOF
    then ok "libcrypto: $("$tmp/crypto" | cut -d' ' -f1,2)"
    else fix "OpenSSL libcrypto missing ($(why crypto)): apt-get install libssl-dev"
    fi

    # The grader: cJSON reads the drivers' result lines, libseccomp builds its sandbox's filter.
    if probe cjson -lcjson <<'EOF'
#include <cjson/cJSON.h>
#include <stdio.h>
int main(void) { printf("%s\n", cJSON_Version()); return 0; }
EOF
    then ok "cJSON $("$tmp/cjson") (the grader)"
    else fix "cJSON missing ($(why cjson)), the grader needs it: apt-get install libcjson-dev"
    fi

    if probe seccomp -lseccomp <<'EOF'
#include <seccomp.h>
#include <stdio.h>
int main(void) { const struct scmp_version *v = seccomp_version();
  printf("%u.%u.%u\n", v->major, v->minor, v->micro); return 0; }
EOF
    then ok "libseccomp $("$tmp/seccomp") (the grader's sandbox)"
    else fix "libseccomp missing ($(why seccomp)), the grader's sandbox needs it: apt-get install libseccomp-dev"
    fi
fi

# The grader runs every student program in a bubblewrap sandbox; without it nothing is graded.
if command -v bwrap >/dev/null 2>&1; then
    if bwrap --unshare-all --ro-bind / / true >"$tmp/bwrap.log" 2>&1; then
        ok "bubblewrap $(bwrap --version 2>/dev/null | awk '{ print $2 }') (the grader's sandbox starts here)"
    else
        fix "bubblewrap cannot start a sandbox here ($(head -n 1 "$tmp/bwrap.log" | cut -c1-100)): enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; in a container, allow them), or grade with GRADE_FLAGS=--unsandboxed (every report then says so)"
    fi
else
    fix "bwrap not found, the grader's sandbox needs it: apt-get install bubblewrap"
fi

# ---- Open MPI (lab 07) --------------------------------------------------------------------
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    missing=$(for t in mpicc mpirun; do command -v $t >/dev/null 2>&1 || printf '%s ' $t; done)
    fix "${missing% } not found (needed for lab 07 only): apt-get install libopenmpi-dev openmpi-bin"
elif ! command -v ompi_info >/dev/null 2>&1; then
    note "mpicc is not Open MPI (no ompi_info): lab 07 is tested with Open MPI (apt-get install libopenmpi-dev openmpi-bin)"
else
    ompi_ver=$(ompi_info --parsable 2>/dev/null | sed -n 's/^ompi:version:full://p' | head -n 1)
    ok "Open MPI ${ompi_ver:-?} (mpicc, mpirun)"
    aware=$(ompi_info --parsable --all 2>/dev/null | grep -m 1 'mpi_built_with_cuda_support:value' | sed 's/.*://')
    case $aware in
        true) ok "Open MPI is CUDA-aware: lab 07 can pass device buffers to MPI" ;;
        false) note "Open MPI is not CUDA-aware: lab 07 stages its halo exchanges through host memory" ;;
        *) note "cannot tell whether Open MPI is CUDA-aware: lab 07 will stage through host memory" ;;
    esac
fi

# ---- optional tools -----------------------------------------------------------------------
if command -v doxygen >/dev/null 2>&1; then
    ok "Doxygen $(doxygen --version 2>/dev/null | cut -d' ' -f1)"
else
    optional "doxygen not found (needed for make docs only): apt-get install doxygen"
fi
if command -v pandoc >/dev/null 2>&1 && command -v pdflatex >/dev/null 2>&1; then
    ok "pandoc $(pandoc --version 2>/dev/null | awk 'NR == 1 { print $2 }') and pdflatex (make slides)"
else
    optional "pandoc or pdflatex not found (needed for make slides only): apt-get install pandoc texlive-latex-recommended texlive-pictures lmodern"
fi

if command -v sim_c >/dev/null 2>&1; then
    sim_version=$(dpkg-query -W -f='${Version}' similarity-tester 2>/dev/null || true)
    ok "similarity-tester ${sim_version:-(sim_c)}: make similarity can compare submissions"
else
    optional "sim_c not found (needed for make similarity only): apt-get install similarity-tester"
fi
if command -v flock >/dev/null 2>&1; then
    ok "flock: make bench takes the grader's GPU lock with it"
else
    optional "flock not found (make bench takes the grader's GPU lock with it): apt-get install util-linux"
fi
if command -v sbatch >/dev/null 2>&1 && command -v srun >/dev/null 2>&1; then
    ok "Slurm client: SLURM=1 runs make grade and a lab's make check on the cluster's GPU nodes"
else
    optional "sbatch or srun not found (needed for SLURM=1 only, on a cluster's login node): apt-get install slurm-client"
fi

sanitizer=$(command -v compute-sanitizer 2>/dev/null)
for d in "$cuda_home/bin" "$cuda_home/compute-sanitizer"; do
    [ -z "$sanitizer" ] && [ -n "$cuda_home" ] && [ -x "$d/compute-sanitizer" ] && sanitizer=$d/compute-sanitizer
done
if [ -n "$sanitizer" ]; then
    ok "compute-sanitizer ($sanitizer)"
else
    san_pkg=cuda-sanitizer-${cuda_ver:-12.X}
    optional "compute-sanitizer not found (kernel memory checks only): apt-get install ${san_pkg/./-} (NVIDIA's CUDA repository; it ships with the toolkit)"
fi
# Where tools/bench-profile.sh looks for it: the PATH, then beside nvcc.
ncu=$(command -v ncu 2>/dev/null)
[ -z "$ncu" ] && [ -n "$cuda_home" ] && [ -x "$cuda_home/bin/ncu" ] && ncu=$cuda_home/bin/ncu
if [ -n "$ncu" ]; then
    ok "Nsight Compute ($ncu): make bench-profile can count DRAM bytes"
else
    optional "ncu (Nsight Compute) not found (needed for make bench-profile only): install nsight-compute from NVIDIA's CUDA repository, or run NCU=/path/to/ncu make bench-profile"
fi

echo "doctor: $problems problem(s)"
[ "$problems" -eq 0 ]
