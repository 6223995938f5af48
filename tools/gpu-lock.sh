#!/usr/bin/env bash
# Runs a command holding the kit's machine-wide GPU lock (flock, exclusive): the lock the
# grader takes for its GPU stages, so that make bench and a grading run never time on one GPU
# at once. Waits, and says so, while another holder has it; exits with the command's status.
# usage: gpu-lock.sh [--needs-gpu] LOCKFILE COMMAND [ARG...]
#   LOCKFILE - is the kit's, LK_GPU_LOCK of common/common.mk (for scripts run outside make).
#   --needs-gpu: COMMAND times GPU code (make bench): on a machine without a GPU (nvidia-smi
#   lists none, as lab 07's scaling.sh asks) say so at once and exit 1, before any wait.
# A command already running under the lock (a sweep inside make bench) runs at once.
set -uo pipefail

usage="usage: gpu-lock.sh [--needs-gpu] LOCKFILE|- COMMAND [ARG...]"
needs_gpu=0
if [ "${1:-}" = --needs-gpu ]; then needs_gpu=1; shift; fi
lock=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
if [ "$needs_gpu" = 1 ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-lock: no GPU on this machine (nvidia-smi lists none): $(basename "$1") times GPU" \
         "code: run it on a machine with an NVIDIA GPU (make doctor says what this one has)" >&2
    exit 1
fi
if [ "$lock" = - ]; then
    common_mk=$(dirname "$(readlink -f "$0")")/../common/common.mk
    lock=$(sed -n 's/^LK_GPU_LOCK *:= *//p' "$common_mk" 2>/dev/null)
    [ -n "$lock" ] || { echo "gpu-lock: no LK_GPU_LOCK in $common_mk" >&2; exit 1; }
fi
command -v flock >/dev/null 2>&1 || {
    echo "gpu-lock: flock not found: apt-get install util-linux" >&2; exit 1; }
# Descriptor 9 inherited from a gpu-lock.sh up the process tree shares its lock.
if [ -e /proc/self/fd/9 ] && [ /proc/self/fd/9 -ef "$lock" ] && flock -n 9 2>/dev/null; then
    exec "$@"
fi

if ! exec 9>>"$lock"; then
    echo "gpu-lock: cannot open the GPU lock file $lock: set LK_GPU_LOCK in common/common.mk" \
         "(and give the grader the same --gpu-lock)" >&2
    exit 1
fi
# Other users' graders and benches must be able to take it too.
[ -O "$lock" ] && chmod 0666 "$lock" 2>/dev/null
if ! flock -n 9; then
    echo "waiting for the GPU lock $lock: a grader run or another make bench is using the GPU" >&2
    flock 9 || { echo "gpu-lock: cannot take the GPU lock $lock" >&2; exit 1; }
fi
# The command inherits descriptor 9, and with it the lock, until it exits.
exec "$@"
