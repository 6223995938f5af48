#!/usr/bin/env bash
# make grade SLURM=1: grading a class as one Slurm array job, a task per student (or per
# SLURM_STUDENTS_PER_TASK students), each the class path for its students (labkit-grade --only
# NAME...) on the GPU Slurm gives it, then the merge (labkit-grade --merge) into OUT.
# grader/README.md, "Grading on a cluster", says more.
#
#   tools/slurm-grade.sh submit GRADER [labkit-grade options]   submit what is missing, merge
#   tools/slurm-grade.sh task OUT SUBMIT                        one array task (sbatch runs it)
#   tools/slurm-grade.sh merge OUT                              the merge (a job when
#                                                               SLURM_WAIT=0)
#
# OUT/.slurm (mode 0700, the instructor's only) holds the class's students, each submit's
# "TASK<TAB>NAME" list while its tasks are queued, the session's seed (never on a command
# line: squeue and ps show those), the parts' secret, the grader's command line and the tasks'
# logs; OUT/parts/NAME is the report folder of student NAME, put in place by renames when its
# task is done, with the fingerprint of what it graded.
# Array task I grades the students at class positions I*K to I*K+K-1 (K students a task) that
# are missing or stale; a later submit sends only the tasks holding such students, skipping
# those still queued or running.
# Settings (environment, from make): the SLURM_* variables of tools/slurm-lib.sh,
# SLURM_STUDENTS_PER_TASK=K (default 1), SLURM_WAIT=0 (return once submitted; the merge runs as
# a job after the array).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
slurm_who=slurm-grade.sh
# shellcheck source=tools/slurm-lib.sh
. "$here/slurm-lib.sh"

fail() { echo "$slurm_who: $*" >&2; exit 1; }

# fingerprint SUBMISSIONS NAME KIT ARGS...: what decides a part: the student's files (the kit's
# student files when self-grading), the grader's command line, the grader and the rubric
# (a lab whose kit part did not change is reused by the grader itself when graded again).
fingerprint() {
    local subs=$1 name=$2 kit=$3
    shift 3
    local folder=$subs/$name
    [ "$subs" != self ] || folder=$kit/labs
    {
        printf '%s\n' "$@"
        md5sum "$grader" "$kit/grader/rubric.txt" "$kit"/labs/*/rubric 2>/dev/null || true
        (cd "$folder" && find . -name build -prune -o -type f -print0 | LC_ALL=C sort -z |
            xargs -0 -r md5sum)
    } | md5sum | cut -d' ' -f1
}

# ranges INDEX...: sbatch's --array list of increasing indices, runs as ranges (0-2,7).
ranges() {
    local list='' first=$1 last=$1 i
    shift
    for i in "$@" ''; do
        if [ -n "$i" ] && [ "$i" -eq $((last + 1)) ]; then
            last=$i
            continue
        fi
        list+=${list:+,}$first
        [ "$last" = "$first" ] || list+=-$last
        first=$i last=$i
    done
    echo "$list"
}

# load_job OUT [SUBMIT]: the grader's command line as the submit step SUBMIT saved it (the
# latest submit's without SUBMIT).
load_job() {
    local out=$1 env=$1/.slurm/job.env${2:+.$2}
    [ -r "$env" ] ||
        fail "$env: not found on node ${SLURMD_NODENAME:-$(hostname)}: the kit" \
            "and OUT must be on a file system that every compute node sees at the same path"
    # shellcheck source=/dev/null
    . "$env"
}

# task OUT SUBMIT: the class and the command line are those of the submit that queued this
# task: a later submit, while this one waited in the queue, may have added a student.
task() {
    local out=$1 submit=$2
    load_job "$out" "$submit"
    local index=${SLURM_ARRAY_TASK_ID:?the task runs as a Slurm array task}
    local list=$out/.slurm/students.$submit names=() name line
    while IFS= read -r line; do
        # TASK<TAB>NAME, split at the first tab: a name may hold tabs of its own.
        [ "${line%%$'\t'*}" = "$index" ] || continue
        name=${line#*$'\t'}
        # A folder removed since the submit: its part stays as it is, the others are graded.
        if [ "$subs" != self ] && [ ! -d "$subs/$name" ]; then
            echo "$slurm_who: $subs/$name: no longer there: not graded" >&2
            continue
        fi
        names+=("$name")
    done <"$list"
    [ "${#names[@]}" -gt 0 ] || fail "array index $index: no student to grade in $list"
    # Globals: the EXIT trap below runs after this function has returned. tmp is the report
    # folder of the task's students; tmp-K the part of its K-th student until it is renamed.
    tmp=$out/parts/.tmp-$index-${SLURM_JOB_ID:-$$}
    rm -rf "$tmp" "$tmp"-*
    # Cancelled (scancel: SIGTERM) or failed: no half part is left behind.
    trap 'rm -rf "$tmp" "$tmp"-*' EXIT
    trap 'exit 143' TERM INT
    mkdir -p "$out/parts" "$tmp/students"
    # The report folder of each student in the task's session (FOLDER<TAB>NAME: a folder
    # holds no tab, a name may).
    local only=() folders=() dir listing
    if [ "$subs" = self ]; then
        folders=(self)
    else
        for name in "${names[@]}"; do only+=(--only "$name"); done
        listing=$("$grader" --submissions "$subs" "${only[@]}" --list-students) ||
            fail "labkit-grade --list-students failed (above)"
        local -A folder_of=()
        while IFS= read -r line; do
            folder_of[${line#*$'\t'}]=${line%%$'\t'*}
        done <<<"$listing"
        for name in "${names[@]}"; do
            [ -n "${folder_of[$name]:-}" ] ||
                fail "$name: labkit-grade --list-students named no report folder for it"
            folders+=("${folder_of[$name]}")
        done
    fi
    # The parts share the class's parts secret: an old part's sealed results (labs whose files,
    # kit and GPU are unchanged) are reused whichever task graded it.
    cp "$out/.slurm/part-secret" "$tmp/.grader-secret"
    local k old
    for k in "${!names[@]}"; do
        old=$out/parts/${names[k]}
        if cmp -s "$old/.grader-secret" "$tmp/.grader-secret"; then
            for dir in "$old"/students/*/; do
                [ -d "$dir" ] && cp -a "${dir%/}" "$tmp/students/${folders[k]}"
                break
            done
        fi
    done
    local gpu=none
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        gpu="CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
        if command -v nvidia-smi >/dev/null; then
            gpu="$gpu ($(nvidia-smi --query-gpu=name --format=csv,noheader \
                -i "$CUDA_VISIBLE_DEVICES" 2>/dev/null | paste -sd, -))"
        fi
    fi
    local where=$'\n## Where it was graded\n\n'
    where+=$(printf 'Slurm job %s, array task %s (job id %s), node %s, GPU %s.' \
        "${SLURM_ARRAY_JOB_ID:-?}" "$index" "${SLURM_JOB_ID:-?}" "${SLURMD_NODENAME:-$(hostname)}" \
        "$gpu")
    # What each part graded, taken before grading: a file changed meanwhile makes it stale.
    local prints=()
    for name in "${names[@]}"; do
        prints+=("$(fingerprint "$subs" "$name" "$kit" "${grader_args[@]}")")
    done
    # The GPU Slurm gave, as that GPU of the node: its own lock, so that tasks on the node's
    # other GPUs run beside it, its UUID in the report, and the host lock that lets a flagged
    # timing be taken again with the node to itself. On a known GPU the task takes up the
    # session work (solution builds, trusted timings) the task before it there left.
    slurm_node_gpu
    [ "${#node_gpu_args[@]}" -eq 0 ] || node_gpu_args+=(--session-state "$out/work/state")
    local status=0
    "$grader" "${grader_args[@]}" "${only[@]}" "${node_gpu_args[@]}" --out "$tmp" \
        "${seed_args[@]}" || status=$?
    # 4: graded, the GPU stages not run (no GPU on the node): the merge says so for the class.
    if [ "$status" -ne 0 ] && [ "$status" -ne 4 ]; then
        fail "${names[*]}: labkit-grade ended with exit status $status (above): no part is kept"
    fi
    # A part per student: its report folder, the secret, what it graded, where, and the task's
    # gradebook. In place by renames: a reader sees the old part, none, or the new one.
    # (The old part goes aside under a dot name: no student's folder has one, while a student
    # may be called NAME.old.)
    for k in "${!names[@]}"; do
        local next=$tmp-$k aside=$tmp-old-$k part=$out/parts/${names[k]}
        mkdir -p "$next/students"
        mv "$tmp/students/${folders[k]}" "$next/students/"
        cp -p "$tmp/.grader-secret" "$next/"
        cp "$tmp/gradebook.csv" "$next/task-gradebook.csv"
        printf '%s\n' "${prints[k]}" >"$next/.submission"
        printf '%s\n' "$where" >"$next/slurm.md"
        rm -rf "$aside"
        [ ! -d "$part" ] || mv "$part" "$aside"
        mv "$next" "$part"
        rm -rf "$aside"
    done
}

merge() {
    local out=$1
    load_job "$out"
    local status=0
    "$grader" "${grader_args[@]}" --merge "$out/parts" || status=$?
    exit "$status"
}

# A job's command line: this script where the kit is (sbatch runs a copy of a job script from
# its spool folder, away from tools/).
job_command() {
    printf 'exec %q' "$here/slurm-grade.sh"
    printf ' %q' "$@"
}

# job_name OUT SUBMIT: the array job's name, telling a later submit which class (OUT) and which
# submit (its list of students) a queued task belongs to.
job_name() {
    printf 'labkit-grade-%s-%s' "$(printf '%s' "$1" | md5sum | cut -c1-8)" "$2"
}

# queued_tasks OUT: "SUBMIT JOB_INDEX INDEX" for each task of an earlier submit for OUT that is
# still queued or running (this user's jobs); fails when squeue cannot tell.
queued_tasks() {
    local prefix jname job index
    prefix=$(job_name "$1" '')
    squeue -h -r -u "$(id -un)" -o '%j %F %K' | while read -r jname job index; do
        [[ "$jname" == "$prefix"* && "$index" =~ ^[0-9]+$ ]] || continue
        echo "${jname#"$prefix"} ${job}_$index $index"
    done
}

# wait_for_job ID: until no task of array job ID is queued or running. squeue every
# LK_SLURM_POLL_S seconds (default 5): sbatch --wait asks less and less often, up to every 32 s,
# which left the merge half a minute behind the last task.
wait_for_job() {
    local id=$1 poll=${LK_SLURM_POLL_S:-5} misses=0 left why
    echo "$slurm_who: array job $id submitted: waiting for its tasks (logs in $job/logs)"
    while :; do
        sleep "$poll"
        if ! left=$(squeue -h -r -j "$id" -o %i 2>"$job/squeue.err"); then
            why=$(head -c 300 "$job/squeue.err")
            # A finished job leaves squeue's list ("Invalid job id" once purged).
            [[ "$why" != *"Invalid job id"* ]] || return 0
            misses=$((misses + 1))
            [ "$misses" -lt 12 ] && continue
            echo "$slurm_who: squeue cannot tell about job $id ($why): merging what is done" >&2
            return 0
        fi
        misses=0
        [ -n "$left" ] || return 0
    done
}

# Quoted for the job's environment file.
save_job() {
    local file=$1
    # -g: load_job sources it inside a function.
    declare -p grader kit subs grader_args seed_args | sed 's/^declare /declare -g /' >"$file"
}

submit() {
    grader=$1
    shift
    [ -x "$grader" ] || fail "$grader: no grader there: build it with make grader"
    slurm_need sbatch
    slurm_options
    # labkit-grade's own command line: the folders it names are made absolute for the tasks.
    kit='' subs='' out='' grader_args=()
    local seed_given=0
    while [ $# -gt 0 ]; do
        case $1 in
        --kit | --lib | --submissions | --out)
            [ $# -ge 2 ] || fail "$1 needs a value"
            local value=$2
            if [ "$1" != --submissions ] || [ "$2" != self ]; then
                [ "$1" != --out ] || mkdir -p "$2"
                value=$(realpath -m "$2")
            fi
            case $1 in
            --kit) kit=$value ;;
            --submissions) subs=$value ;;
            --out) out=$value ;;
            esac
            grader_args+=("$1" "$value")
            shift 2
            continue ;;
        --seed | --seed=* | --seed-file | --seed-file=*) seed_given=1 ;;
        --only | --only=* | --regrade | --regrade=*)
            fail "${1%%=*} with SLURM=1: grade or regrade one student without SLURM=1, on a node" \
                "with a GPU (srun ... make grade GRADE_FLAGS='${1%%=*} NAME ...')" ;;
        esac
        grader_args+=("$1")
        shift
    done
    if [ -z "$kit" ] || [ -z "$subs" ] || [ -z "$out" ]; then
        fail "give --kit, --submissions and --out (make grade SLURM=1 does)"
    fi
    slurm_shared "$kit" "$out"
    local job=$out/.slurm
    mkdir -p "$job/logs" "$out/parts"
    chmod 0700 "$job"
    # The class in array order: labkit-grade's students (folders, not links or dot-folders).
    if [ "$subs" = self ]; then
        echo self >"$job/students"
    else
        if find "$subs" -mindepth 1 -maxdepth 1 -type d -name $'*\n*' | grep -q .; then
            fail "$subs: a student folder's name holds a line break: rename it"
        fi
        find "$subs" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' |
            LC_ALL=C sort >"$job/students"
        [ -s "$job/students" ] || fail "$subs: no student folders: give one folder per student"
    fi
    # One seed for the whole class, kept for re-runs: every student meets the same hidden
    # datasets. It stays in a file only the instructor reads.
    seed_args=()
    if [ "$seed_given" = 0 ]; then
        if [ ! -s "$job/seed" ]; then
            (umask 077 && od -An -N8 -tu8 /dev/urandom | tr -d ' ' >"$job/seed")
            (umask 077 && printf '%s session (Slurm): hidden-dataset seed %s (random), %s\n' \
                "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(cat "$job/seed")" "$subs" >>"$out/session.log")
        fi
        seed_args=(--seed-file "$job/seed")
    fi
    save_job "$job/job.env"
    # Array task I grades the students at class positions I*K to I*K+K-1 that need it.
    local per_task=${SLURM_STUDENTS_PER_TASK:-1}
    [[ "$per_task" =~ ^[1-9][0-9]{0,3}$ ]] ||
        fail "SLURM_STUDENTS_PER_TASK=$per_task: give the number of students a task grades" \
            "(1 to 9999; 1: a task per student)"
    # The parts' one secret: a part's sealed results are reused by whichever task grades its
    # student next.
    [ -s "$job/part-secret" ] ||
        (umask 077 && head -c 32 /dev/urandom >"$job/part-secret.new" &&
            mv "$job/part-secret.new" "$job/part-secret")
    # A task still in Slurm's queue from an earlier submit grades its students: not again
    # ("JOB_INDEX<TAB>NAME" in busy). The lists of submits with nothing queued any more are
    # removed.
    local queued="" busy="" snap stamp task index
    if queued=$(queued_tasks "$out" 2>/dev/null); then
        for snap in "$job"/students.* "$job"/job.env.*; do
            [ -e "$snap" ] || continue
            grep -q "^${snap##*.} " <<<"$queued" || rm -f "$snap"
        done
    fi
    while read -r stamp task index; do
        [ -n "$index" ] || continue
        busy+=$(awk -F'\t' -v i="$index" -v t="$task" \
            '$1 == i { sub(/^[^\t]*\t/, ""); print t "\t" $0 }' "$job/students.$stamp" \
            2>/dev/null)$'\n'
    done <<<"$queued"
    # Only the students whose part is missing or was graded from other files or options.
    local chunks=() wanted='' i=0 name want in_queue last=-1
    while IFS= read -r name; do
        # (ENVIRON: awk -v would read a backslash in a name as an escape.)
        in_queue=$(n=$name awk -F'\t' \
            '{ t = $1; sub(/^[^\t]*\t/, "") } $0 == ENVIRON["n"] { print t; exit }' <<<"$busy")
        want=$(fingerprint "$subs" "$name" "$kit" "${grader_args[@]}")
        if [ -n "$in_queue" ]; then
            echo "$slurm_who: $name: still queued or running in Slurm (job $in_queue): not" \
                "submitted again"
        elif [ "$(cat "$out/parts/$name/.submission" 2>/dev/null)" != "$want" ]; then
            index=$((i / per_task))
            wanted+=$index$'\t'$name$'\n'
            [ "$last" = "$index" ] || chunks+=("$index")
            last=$index
        fi
        i=$((i + 1))
    done <"$job/students"
    local total=$i count
    count=$(grep -c . <<<"$wanted" || true)
    if [ "$count" -eq 0 ]; then
        echo "$slurm_who: all $total parts in $out/parts are up to date: merging them"
    else
        local list submit
        list=$(ranges "${chunks[@]}")
        submit=$(date -u +%Y%m%dT%H%M%S)-$$
        printf '%s' "$wanted" >"$job/students.$submit"
        cp "$job/job.env" "$job/job.env.$submit"
        echo "$slurm_who: submitting $count of $total students (array indices $list$(
            [ "$per_task" = 1 ] || echo ", up to $per_task students a task"))"
        local common=(--job-name="$(job_name "$out" "$submit")" "${slurm_opts[@]}")
        local id
        id=$(sbatch --parsable "${common[@]}" --array="$list" --output="$job/logs/%A_%a.out" \
            --wrap="$(job_command task "$out" "$submit")") ||
            fail "sbatch refused the array job (above)"
        id=${id%%;*}
        if [ "${SLURM_WAIT:-1}" = 0 ]; then
            # The merge grades nothing: it asks for no GPU.
            local merge_opts=() opt
            for opt in "${slurm_opts[@]}"; do
                case $opt in --gres=* | --gpus-per-task=*) ;; *) merge_opts+=("$opt") ;; esac
            done
            sbatch --parsable --job-name=labkit-grade-merge "${merge_opts[@]}" \
                --dependency="afterany:$id" \
                --output="$job/logs/merge-%j.out" --wrap="$(job_command merge "$out")" >/dev/null ||
                fail "sbatch refused the merge job (above)"
            echo "$slurm_who: array job $id submitted; the merge runs after it into $out" \
                "(log: $job/logs/merge-*.out); make grade SLURM=1 again submits what is missing"
            exit 0
        fi
        wait_for_job "$id"
        # The tasks' statuses are Slurm's; the merge below says who is missing.
    fi
    merge "$out"
}

[ $# -ge 2 ] || { sed -n '7,10s/^# //p' "$0" >&2; exit 2; }
action=$1
shift
case $action in
submit) submit "$@" ;;
task) task "$@" ;;
merge) merge "$@" ;;
*) fail "unknown action '$action': submit, task or merge" ;;
esac
