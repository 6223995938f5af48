#!/usr/bin/env bash
# make check|run|grade SLURM=1 in a lab folder (labs/lab.mk): the same make, run on a GPU node
# through srun, its output on this terminal as if it ran here. Students on a cluster work on
# login nodes without a GPU and reach one only through the scheduler.
#
#   tools/slurm-run.sh COMMAND...   (settings: the SLURM_* variables of tools/slurm-lib.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
slurm_who=slurm-run.sh
# shellcheck source=tools/slurm-lib.sh
. "$here/slurm-lib.sh"
[ $# -gt 0 ] || { echo "usage: $0 COMMAND..." >&2; exit 2; }
slurm_need srun
slurm_options
slurm_shared "$PWD"
# This make's job server does not reach the node: the make there starts its own.
if [ -n "${MAKEFLAGS:-}" ]; then
    MAKEFLAGS=$(printf '%s' "$MAKEFLAGS" | sed 's/ *--jobserver-[a-z]*=[^ ]*//g')
fi
# --quiet: srun's own notes (queued, allocated) would change the output.
exec srun --quiet "${slurm_opts[@]}" --job-name="labkit-$(basename "$PWD")" -- "$@"
