# shellcheck shell=bash
# Sourced by tools/slurm-grade.sh and tools/slurm-run.sh: what a job asks Slurm for, and the
# file-system check. The settings are make's variables of the same names (grader/README.md,
# "Grading on a cluster"); the kit's cluster.mk, shipped with a handout, may set them.

# slurm_options: the array slurm_opts from SLURM_PARTITION, SLURM_GRES (e.g. gpu:1),
# SLURM_GPUS_PER_TASK, SLURM_CPUS_PER_TASK, SLURM_TIME and SLURM_ACCOUNT; empty ones are left
# to the cluster.
slurm_options() {
    slurm_opts=(--ntasks=1)
    [ -z "${SLURM_PARTITION:-}" ] || slurm_opts+=("--partition=$SLURM_PARTITION")
    [ -z "${SLURM_GRES:-}" ] || slurm_opts+=("--gres=$SLURM_GRES")
    [ -z "${SLURM_GPUS_PER_TASK:-}" ] || slurm_opts+=("--gpus-per-task=$SLURM_GPUS_PER_TASK")
    [ -z "${SLURM_CPUS_PER_TASK:-}" ] || slurm_opts+=("--cpus-per-task=$SLURM_CPUS_PER_TASK")
    [ -z "${SLURM_TIME:-}" ] || slurm_opts+=("--time=$SLURM_TIME")
    [ -z "${SLURM_ACCOUNT:-}" ] || slurm_opts+=("--account=$SLURM_ACCOUNT")
    # Slurm reads some of these names itself (srun: SLURM_PARTITION, SLURM_ACCOUNT): the
    # options above are the one source.
    unset SLURM_PARTITION SLURM_GRES SLURM_GPUS_PER_TASK SLURM_CPUS_PER_TASK SLURM_TIME \
        SLURM_ACCOUNT
}

# slurm_node_gpu: the array node_gpu_args, `--gpus UUID` for the one GPU that Slurm gave the
# task (CUDA_VISIBLE_DEVICES, a single number, as nvidia-smi on the node numbers it): the
# grader then takes that GPU's own lock, pins its runs to it and names it in the report. A
# UUID, not the index: `--gpus 1` is a count (the first GPU). Empty otherwise (no GPU,
# several, or no nvidia-smi): the grader grades as without --gpus.
slurm_node_gpu() {
    node_gpu_args=()
    [[ "${CUDA_VISIBLE_DEVICES:-}" =~ ^[0-9]+$ ]] && command -v nvidia-smi >/dev/null || return 0
    local uuid
    uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$CUDA_VISIBLE_DEVICES" \
        2>/dev/null) || return 0
    # shellcheck disable=SC2034  # the sourcing script's
    [[ "$uuid" =~ ^GPU-[0-9a-fA-F-]+$ ]] && node_gpu_args=(--gpus "$uuid")
    return 0
}

# slurm_need COMMAND: the Slurm client is there, else one line saying what to do. Messages
# start with $slurm_who, the sourcing script's name.
slurm_need() {
    command -v "$1" >/dev/null && return 0
    echo "${slurm_who:?}: $1 not found: SLURM=1 runs through Slurm from a login node of the" \
        "cluster (Debian: slurm-client); leave out SLURM=1 to run here" >&2
    exit 2
}

# slurm_shared PATH...: warn when a path is on a file system that only this machine sees:
# the compute nodes read the kit and write the reports at the same paths.
slurm_shared() {
    local path type
    for path in "$@"; do
        type=$(df -P -T "$path" 2>/dev/null | awk 'NR == 2 { print $2 }')
        case $type in
        nfs* | lustre | gpfs | beegfs | ceph | fuse.ceph* | cifs | smb* | glusterfs | \
            fuse.glusterfs | panfs | wekafs | fuse.sshfs) ;;
        *)
            [ "${LK_SLURM_SHARED:-}" = 1 ] ||
                echo "$slurm_who: warning: $path is on ${type:-an unknown file system}, which" \
                    "compute nodes usually do not see: the kit (and OUT) must be on a shared" \
                    "file system (NFS, Lustre, GPFS, BeeGFS) at the same path on every node;" \
                    "set LK_SLURM_SHARED=1 when they are (e.g. a one-node cluster)" >&2 ;;
        esac
    done
}
