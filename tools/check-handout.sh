#!/usr/bin/env bash
# Check that a student distribution holds no lab's answer, cites no text it does not ship,
# does not walk through a solution's design and states no Measured table that its bench
# files do not make. Run by tools/make-handout.sh on the folder it made; exit 1 with one
# line per finding if the distribution is not safe.
# usage: check-handout.sh DIST [KIT]     (KIT: the instructor's kit, default this one)
#
# Rules:
#  1. No path listed in tools/instructor-only.txt is in DIST.
#  2. No file in DIST has the content of a file of KIT's solutions/ or grader/examples/
#     (an answer copied under another name).
#  3. A lab's student tasks are the functions its lab.h declares and its skeleton kernels.cu
#     defines; no other file in DIST defines one of them.
#  4. No file in DIST holds ANSWER_RUN (4) or more consecutive significant lines of an answer:
#     a line of solutions/LAB/kernels.cu or of an example submission's kernels.cu for LAB that
#     LAB's skeleton does not have. Significant: at least 12 characters once comments and
#     spacing are gone (braces, `return 0;` and the like match everywhere). This is how a
#     given file of lab N that carries lab M's kernels is found; 3 lines match by chance in
#     the kit's own tests, 4 did not.
#  5. No file in DIST cites a developers' digest or source file by its number ("digest NNN",
#     "seed NNN", NNN three digits): they are notes and copies for the kit's authors and never
#     ship, so a student cannot look them up. Cite the original (author year, section) and
#     list it in full in the handout's "## References".
#  6. No shipped file of a lab (its folder, its deck slides/LAB.md) says one of the phrases
#     that the front matter of solutions/LAB/NOTES.md lists under `handout-must-not-say:`:
#     they describe the solution's design, which the student is to find (the handout states
#     the goal and the measured gap; the engineering notes stay in NOTES.md).
#  7. Every "Measured" table between bench-table markers equals what DIST's
#     tools/bench-table.sh makes from DIST's labs/*/bench/ files (no stale or hand-edited row).
# Known findings listed in tools/handout-waivers.txt are printed as WAIVED and do not fail;
# a waiver that matches no finding fails, so it is removed once its file is fixed.
set -euo pipefail
dist=${1:?usage: check-handout.sh DIST [KIT]}
kit=${2:-$(cd "$(dirname "$0")/.." && pwd)}
ANSWER_RUN=4
# A citation of a developers' digest or seed: "digest NNN", "Digest NNN, section 2", "digests
# NNN", "seed NNN" with NNN their number, 000 to 099 (written so here: this file ships too;
# "--seed 777" is no citation).
DIGEST_RE='\<(digest|seed)s?[[:space:]]+(no\.?[[:space:]]*|#)?0[0-9]{2}\>'
[ -d "$dist" ] || { echo "check-handout: $dist: no such folder: give the distribution's folder" >&2; exit 1; }

findings=$(mktemp "${TMPDIR:-/tmp}/lk-handout.XXXXXX")
trap 'rm -f "$findings"' EXIT
# finding FILE SOURCE TEXT: FILE (relative to DIST) carries SOURCE (an answer or a rule).
finding() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$findings"; }

# The list files' entries: first field of each line that is not a comment.
entries() { sed -e 's/#.*//' "$1" | awk 'NF { print $1 }'; }
# The files the student writes in lab folder DIR: its rubric's `student-file` lines.
student_files() { sed -e 's/#.*//' "$1/rubric" 2>/dev/null | awk '$1 == "student-file" { print $2 }'; }

cd "$dist"
mapfile -t files < <(find . -type f -printf '%P\n' | sort)
sources=()
for f in "${files[@]}"; do
    case $f in *.c | *.cu | *.h | *.cuh | *.cpp) sources+=("$f") ;; esac
done

# ---- 1. listed instructor-only paths ------------------------------------------------------
while read -r path; do
    for f in "${files[@]}"; do
        if [ "$f" = "$path" ] || { [[ $path == */ ]] && [[ $f == "$path"* ]]; }; then
            finding "$f" "tools/instructor-only.txt" "is instructor-only ($path)"
        fi
    done
done < <(entries "$kit/tools/instructor-only.txt")

# ---- 2. copies of answer files ------------------------------------------------------------
answers=()
for lab_dir in "$kit"/labs/[0-9][0-9]-*/; do
    lab=$(basename "$lab_dir")
    for f in $(student_files "$lab_dir"); do
        [ -f "$kit/solutions/$lab/$f" ] && answers+=("$kit/solutions/$lab/$f")
    done
done
for a in "$kit"/grader/examples/*/labs/*/kernels.cu; do
    [ -f "$a" ] && answers+=("$a")
done
if [ "${#answers[@]}" -gt 0 ]; then
    declare -A answer_of=()
    while read -r sum path; do answer_of[$sum]=${path#"$kit"/}; done < <(md5sum "${answers[@]}")
    while read -r sum path; do
        if [ -n "${answer_of[$sum]:-}" ]; then
            finding "$path" "${answer_of[$sum]}" "is a copy of ${answer_of[$sum]}"
        fi
    done < <(md5sum "${files[@]}")
else
    echo "check-handout: note: $kit has no solutions/ or grader/examples/: rules 2 and 4 not checked" >&2
fi

# ---- 3. student tasks defined outside the student's file ----------------------------------
# Names declared `TYPE name(` in lab.h, kept if the skeleton defines them `... name(...) {`.
declared() { grep -ohE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]([a-z][a-z0-9_]*)\(' "$1" | sed -E 's/.*[ *]([a-z][a-z0-9_]*)\($/\1/' | sort -u; }
# Which of FILES define one of NAMES (comma-separated): "FILE<TAB>NAME" per definition. A
# definition starts a line with a type and the name, and its parameter list is followed by
# `{` (it may span lines; comments are ignored).
definitions() {
    perl -0777 -ne 'BEGIN { @names = split /,/, shift } ($t = $_) =~ s{/\*.*?\*/}{}gs;
        $t =~ s{//[^\n]*}{}g;
        for $n (@names) {
            print "$ARGV\t$n\n" if $t =~ /^[ \t]*(?:extern\s+"C"\s+)?[A-Za-z_][\w \t*]*\b\Q$n\E\s*\([^;{}]*\)\s*\{/m;
        }' "$@"
}
for lab_h in labs/*/lab.h; do
    lab=${lab_h%/lab.h}
    [ -f "$lab/kernels.cu" ] || continue
    names=$(declared "$lab_h" | paste -sd, -)
    [ -n "$names" ] || continue
    # The student's files: kernels.cu and the rubric's other student files (lab 07's exchange.c).
    student=()
    for f in $(student_files "$lab"); do [ -f "$lab/$f" ] && student+=("$lab/$f"); done
    [[ " ${student[*]} " == *" $lab/kernels.cu "* ]] || student+=("$lab/kernels.cu")
    tasks=$(definitions "$names" "${student[@]}" | cut -f2 | paste -sd, -)
    [ -n "$tasks" ] || continue
    while IFS=$'\t' read -r f name; do
        [[ " ${student[*]} " == *" $f "* ]] && continue
        finding "$f" "$lab/lab.h" "defines $name(), a student task of $lab (declared in $lab/lab.h, written in ${student[*]})"
    done < <(definitions "$tasks" "${sources[@]}")
done

# ---- 4. runs of answer lines --------------------------------------------------------------
# Lines the student is given are not answers: the skeleton, and the code the lab asks them
# to port or to call (the serial programs and the kit's headers).
given=$(mktemp "${TMPDIR:-/tmp}/lk-handout-given.XXXXXX")
trap 'rm -f "$findings" "$given"' EXIT
for a in "${answers[@]}"; do
    lab=$(basename "$(dirname "$a")")
    cat labs/*/serial*.c common/include/labkit/*.h common/models/*/*.h >"$given"
    for f in $(student_files "labs/$lab"); do
        [ -f "labs/$lab/$f" ] && cat "labs/$lab/$f" >>"$given"
    done
    skeleton=$given
    awk -v K="$ANSWER_RUN" -v src="${a#"$kit"/}" '
        function norm(s) {
            sub(/\/\/.*$/, "", s); gsub(/[ \t\r]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
            if (s ~ /^(\/\*|\*)/ || length(s) < 12) return ""
            return s
        }
        function report() {
            if (run >= K)
                printf "%s\t%s\t@run %d-%d %d\n", file, src, start, last, run
            run = 0
        }
        FILENAME == ARGV[1] { n = norm($0); if (n != "") answer[n] = 1; next }
        FILENAME == ARGV[2] { n = norm($0); if (n != "") given[n] = 1; next }
        FNR == 1 { report(); file = FILENAME }
        {
            n = norm($0); if (n == "") next
            if ((n in answer) && !(n in given)) { if (run == 0) start = FNR; run++; last = FNR }
            else report()
        }
        END { report() }' "$a" "$skeleton" "${sources[@]}" >>"$findings"
done

# ---- 5. citations of texts that do not ship -------------------------------------------------
# FILE is "path:line" so that the verdict names the line.
while IFS= read -r hit; do
    f=${hit%%:*} rest=${hit#*:}
    line=${rest%%:*} text=${rest#*:}
    cited=$(grep -oiE "$DIGEST_RE" <<<"$text" || true)
    cited=${cited%%$'\n'*}
    finding "$f:$line" "citation" "cites '$cited', a developers' digest that does not ship: cite the original instead (author year, section, e.g. \"Kulbe 2012, section 3.3\") and list it in full under \"## References\" in the handout of the lab"
done < <(grep -HnIiE "$DIGEST_RE" -- "${files[@]}" 2>/dev/null | sed 's|^\./||' || true)

# ---- 6. the solution's design in the lab's handout, deck and files -------------------------
# The phrases: the "  - PHRASE" lines under "handout-must-not-say:" in the front matter (the
# lines between the file's first two "---").
must_not_say() {
    awk 'NR == 1 { if ($0 != "---") exit; next }
         /^---[[:space:]]*$/ { exit }
         /^handout-must-not-say:/ { on = 1; next }
         on && /^[[:space:]]+-[[:space:]]/ { sub(/^[[:space:]]+-[[:space:]]+/, ""); sub(/[[:space:]]+$/, ""); print; next }
         on && /^[^[:space:]#]/ { on = 0 }' "$1"
}
for notes in "$kit"/solutions/*/NOTES.md; do
    [ -f "$notes" ] || continue
    lab=$(basename "$(dirname "$notes")")
    rel=solutions/$lab/NOTES.md
    mapfile -t phrases < <(must_not_say "$notes")
    [ "${#phrases[@]}" -gt 0 ] || continue
    targets=()
    for f in "${files[@]}"; do
        [[ $f == "labs/$lab/"* || $f == "slides/$lab.md" ]] && targets+=("$f")
    done
    [ "${#targets[@]}" -gt 0 ] || continue
    for phrase in "${phrases[@]}"; do
        while IFS= read -r hit; do
            f=${hit%%:*} rest=${hit#*:}
            finding "$f" "$rel" "line ${rest%%:*} says '$phrase', the solution's design ($rel): tell the student the goal and the measured gap, not how the solution gets there"
        done < <(grep -HnIiF -- "$phrase" "${targets[@]}" 2>/dev/null || true)
    done
done

# ---- 7. Measured tables that differ from their bench files --------------------------------
if [ -x tools/bench-table.sh ]; then
    mapfile -t tabled < <(grep -lI '^<!-- bench-table ' -- "${files[@]}" 2>/dev/null || true)
    if [ "${#tabled[@]}" -gt 0 ]; then
        while IFS= read -r msg; do
            msg=${msg#bench-table: }
            f=${msg%%: *}
            finding "$f" "bench-table" "${msg#*: }"
        done < <(tools/bench-table.sh check "${tabled[@]}" 2>&1 >/dev/null || true)
    fi
fi

# ---- verdict ------------------------------------------------------------------------------
# One finding per file and answer: its runs "@run FIRST-LAST COUNT" become one text. An
# example submission's match is left out where the lab's solution already matches the file.
merge_runs() {
    awk -F'\t' '
        function lab_of(src) { sub(/\/[^\/]*$/, "", src); sub(/.*\//, "", src); return src }
        $3 !~ /^@run / { print; next }
        {
            k = $1 FS $2; split($3, r, " ")
            if (k in lines) lines[k] = lines[k] ", " r[2]; else { order[++n] = k; lines[k] = r[2] }
            count[k] += r[3]
            if ($2 ~ /^solutions\//) solved[$1 FS lab_of($2)] = 1
        }
        END {
            for (i = 1; i <= n; i++) {
                k = order[i]; split(k, f, FS)
                if (f[2] ~ /^grader\/examples\// && (f[1] FS lab_of(f[2])) in solved) continue
                printf "%s\t%s\tholds %d lines of the answer %s (lines %s)\n", f[1], f[2], count[k], f[2], lines[k]
            }
        }'
}
status=0
declare -A waived=()
while IFS= read -r line; do
    read -r wfile wsource _ <<<"$line"
    [ -n "${wfile:-}" ] && waived["$wfile $wsource"]=0
done < <(sed -e 's/#.*//' "$kit/tools/handout-waivers.txt" 2>/dev/null | awk 'NF')
while IFS=$'\t' read -r file source text; do
    key="$file $source"
    if [ -n "${waived[$key]+x}" ]; then
        echo "check-handout: WAIVED $file: $text (tools/handout-waivers.txt)" >&2
        waived[$key]=1
    elif [ "$source" = citation ] || [ "$source" = bench-table ] || [[ $source == */NOTES.md ]]; then
        echo "check-handout: $dist/$file: $text" >&2
        status=1
    else
        echo "check-handout: $dist/$file: $text: leave it out of the distribution (tools/instructor-only.txt) or remove the answer from it" >&2
        status=1
    fi
done < <(sort -u -V "$findings" | merge_runs)
for key in "${!waived[@]}"; do
    if [ "${waived[$key]}" = 0 ]; then
        echo "check-handout: tools/handout-waivers.txt: '$key' matches no finding any more: delete that line" >&2
        status=1
    fi
done
if [ "$status" -eq 0 ]; then
    echo "check-handout: no answers, no digest citations, no solution design and no stale table in $dist beyond any WAIVED above (${#files[@]} files; ${#answers[@]} answer files compared)"
fi
exit "$status"
