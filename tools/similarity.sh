#!/usr/bin/env bash
# make similarity: which students' files look alike, per lab and student file, for the
# instructor to read. Similarity is a reason to look, not a verdict.
#
# The tool is Debian's similarity-tester (sim_c): it compares token sequences, so layout,
# comments and the names of variables and functions do not hide a copy, and it runs on this
# machine (nothing is uploaded). Per lab and student file of the labs' rubrics (labs/*/rubric):
#  1. each student's file is found as the grader finds it (grader/README.md, "Submissions");
#  2. the runs it shares with the lab's own sources (the skeleton, given files, lab.h, main.c,
#     serial.c: what every honest student starts from or ports) are blanked line by line, so
#     they count for nobody;
#  3. sim_c -p -a -e gives, for every pair, the share of each file found in the other; earlier
#     years' files (--references) are compared with this class, never with each other;
#  4. the pairs are ranked by the larger share, and the top ones are written with their
#     matching passages side by side, from the files as handed in.
# Output: OUT/similarity/report.md (every lab's top pair) and OUT/similarity/LAB-FILE.md (the
# top pairs and their passages). Differences from the grader's lookup: a file it refuses (a
# link, over 1 MiB, outside the student's folder) is listed as not compared instead of failing
# the lab, and files misplaced elsewhere in a student's folder are not searched for.
#
# usage: similarity.sh [--references DIR]... [--lab NAME] [--top N] [--passages N]
#                      [--min-run N] [--kit DIR] SUBMISSIONS OUT
set -euo pipefail

usage="usage: similarity.sh [--references DIR]... [--lab NAME] [--top N] [--passages N]"
usage+=" [--min-run N] [--kit DIR] SUBMISSIONS OUT"
die() { echo "similarity: $*" >&2; exit 1; }
kit=$(cd "$(dirname "$0")/.." && pwd)
references=() only_lab="" top=20 passages=5 min_run=24
while [ $# -gt 0 ]; do
    case $1 in
        --references) [ $# -ge 2 ] || die "--references needs a folder: $usage"
            references+=("$2"); shift 2 ;;
        --lab) [ $# -ge 2 ] || die "--lab needs a lab name (e.g. 01-straightforward)"
            only_lab=$2; shift 2 ;;
        --top | --passages | --min-run)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive whole number, not '${2:-}'"
            case $1 in --top) top=$2 ;; --passages) passages=$2 ;; --min-run) min_run=$2 ;; esac
            shift 2 ;;
        --kit) [ $# -ge 2 ] || die "--kit needs the kit's folder"; kit=$2; shift 2 ;;
        -h | --help) echo "$usage"; exit 0 ;;
        -*) die "unknown option $1: $usage" ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || die "$usage"
submissions=${1%/} out=$2
[ "$submissions" != self ] ||
    die "SUBMISSIONS=self: there is only one student to compare: give a class, make similarity SUBMISSIONS=dir"
[ -d "$submissions" ] || die "$submissions: no such folder: give the class folder, one sub-folder per student"
for r in "${references[@]}"; do
    [ -d "$r" ] || die "$r: no such folder (--references): give an earlier year's class folder"
done
[ -d "$kit/labs" ] || die "$kit/labs: not found: give the kit's folder with --kit"
command -v sim_c >/dev/null 2>&1 ||
    die "sim_c not found: apt-get install similarity-tester (make doctor lists what is missing)"
# The version a reader needs to repeat the run: the Debian package's, else sim_c's build line.
tool_version=$(dpkg-query -W -f='${Version}' similarity-tester 2>/dev/null || true)
tool_version=${tool_version:+similarity-tester $tool_version}
tool_version=${tool_version:-"sim_c ($(sim_c -v 2>/dev/null | sed -n 1p))"}
# Repeatable order and byte-wise ranges whatever the user's locale.
export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/lk-similarity.XXXXXX")
trap 'rm -rf "$work"' EXIT
report_dir=$out/similarity
mkdir -p "$report_dir"
rm -f "$report_dir"/*.md

# "LAB<TAB>FILE" for each student file of each lab folder's rubric (its own block).
mapfile -t units < <(for rubric in "$kit"/labs/[0-9][0-9]-*/rubric; do
    [ -f "$rubric" ] || continue
    sed -e 's/#.*//' "$rubric" | awk '
        $1 == "lab" { lab = $2 } $1 == "end" { lab = "" }
        $1 == "student-file" && lab != "" { print lab "\t" $2 }'
done)
[ "${#units[@]}" -gt 0 ] || die "$kit/labs/*/rubric: no student-file in any lab's rubric: check them"
if [ -n "$only_lab" ]; then
    [[ $'\n'"$(printf '%s\n' "${units[@]}")" == *$'\n'"$only_lab"$'\t'* ]] ||
        die "--lab $only_lab: no such graded lab: one of $(printf '%s\n' "${units[@]}" | cut -f1 | sort -u | paste -sd' ')"
fi

# How many labs have a student file of each name: a flat STUDENT/F is taken only when one does.
declare -A labs_with_file=()
for u in "${units[@]}"; do f=${u#*$'\t'}; labs_with_file[$f]=$((${labs_with_file[$f]:-0} + 1)); done

# Students: the class folder's sub-folders, then each reference folder's, labelled YEAR/NAME.
# Anything else is named, as the grader names it, and left out.
student_dirs=() student_labels=() student_kinds=() skipped=()
add_class() { # add_class DIR KIND LABEL_PREFIX
    local dir=$1 kind=$2 prefix=$3 entry name
    shopt -s nullglob dotglob
    for entry in "$dir"/*; do
        name=${entry##*/}
        if [ -L "$entry" ]; then skipped+=("$entry: a symbolic link, not a student's folder")
        elif [ ! -d "$entry" ]; then skipped+=("$entry: not a folder: unpack it as $dir/NAME/labs/NN-name/FILE")
        elif [[ $name == .* ]]; then skipped+=("$entry: a hidden folder, not a student's")
        else student_dirs+=("$entry"); student_labels+=("$prefix$name"); student_kinds+=("$kind")
        fi
    done
    shopt -u nullglob dotglob
}
add_class "$submissions" new ""
for r in "${references[@]}"; do
    r=${r%/}
    add_class "$r" old "${r##*/}/"
done

# find_file STUDENT_DIR LAB FILE: the grader's places in its order; prints the first that
# exists, and returns 1 with the reason on stdout when it cannot be compared.
find_file() {
    local dir=$1 lab=$2 file=$3 c places=("$1/labs/$2/$3" "$1/$2/$3")
    [ "${labs_with_file[$file]}" -eq 1 ] && places+=("$dir/$file")
    for c in "${places[@]}"; do
        [ -e "$c" ] || [ -L "$c" ] || continue
        local rel=${c#"$dir"/}
        if [ -L "$c" ] || [ ! -f "$c" ]; then echo "$rel is not a regular file"; return 1; fi
        case $(realpath "$c") in "$(realpath "$dir")"/*) ;; *) echo "$rel leads outside the folder"; return 1 ;; esac
        if [ "$(stat -c %s "$c")" -gt 1048576 ]; then echo "$rel is over 1 MiB"; return 1; fi
        echo "$c"
        return 0
    done
    return 1
}

# The sim program for a file name: the kit's CUDA is C-style, so sim_c reads .cu too.
sim_for() {
    case $1 in
        *.c | *.h | *.cu | *.cuh) echo sim_c ;;
        *.cc | *.cpp | *.cxx | *.hpp) echo sim_c++ ;;
        *) echo sim_text ;;
    esac
}

# runs_of NAME RUNS: "FROM TO OTHER_FROM OTHER_TO TOKENS" for each run of sim -n's output
# RUNS that starts in file NAME ("NAME: line 4-9   |OTHER: line 2-7   [31]"; the files have
# names without spaces, colons or dashes).
runs_of() {
    awk -v name="$1" '{ gsub(/[|:\[\]-]/, " ") }
        NF == 9 && $1 == name && $2 == "line" && $6 == "line" { print $3, $4, $7, $8, $9 }' "$2"
}

# md_cell TEXT: TEXT safe in a Markdown table cell.
md_cell() { local s=${1//|/\\|}; printf '%s' "${s//$'\n'/ }"; }

# side_by_side A A_FROM A_TO B B_FROM B_TO: the two passages, numbered, in two columns.
side_by_side() {
    awk -v a="$1" -v af="$2" -v at="$3" -v b="$4" -v bf="$5" -v bt="$6" '
        function clean(s) { gsub(/\t/, "    ", s); gsub(/\r/, "", s); return s }
        BEGIN {
            n = 0; while ((getline line < a) > 0) { n++; if (n >= af && n <= at) left[n - af] = clean(line) }
            n = 0; while ((getline line < b) > 0) { n++; if (n >= bf && n <= bt) right[n - bf] = clean(line) }
            rows = at - af; if (bt - bf > rows) rows = bt - bf
            for (k = 0; k <= rows; k++) {
                l = (k <= at - af) ? sprintf("%4d  %s", af + k, left[k]) : ""
                r = (k <= bt - bf) ? sprintf("%4d  %s", bf + k, right[k]) : ""
                printf "%-100.100s | %s\n", l, r
            }
        }'
}

caveat="Similarity is a reason to look, not a verdict: students who follow the same handout write alike, and only reading the passages (and talking to the students) can tell a copy from a coincidence."

summary=$work/summary.md
: >"$summary"
for u in "${units[@]}"; do
    lab=${u%%$'\t'*} file=${u#*$'\t'}
    [ -z "$only_lab" ] || [ "$lab" = "$only_lab" ] || continue
    sim=$(sim_for "$file")
    ext=${file##*.}
    [ "$ext" != "$file" ] || ext=txt
    unit_work=$work/$lab/$file
    mkdir -p "$unit_work/students" "$unit_work/boilerplate"

    # The class's and the references' copies under safe names (sim's output is parsed), and
    # where each came from.
    declare -A label_of=() origin_of=() kind_of=()
    new_files=() old_files=() not_found=() refused=()
    for k in "${!student_dirs[@]}"; do
        if where=$(find_file "${student_dirs[$k]}" "$lab" "$file"); then
            copy=$(printf 's%04d.%s' "$k" "$ext")
            cp "$where" "$unit_work/students/$copy"
            label_of[$copy]=${student_labels[$k]} origin_of[$copy]=$where kind_of[$copy]=${student_kinds[$k]}
            if [ "${student_kinds[$k]}" = new ]; then new_files+=("$copy"); else old_files+=("$copy"); fi
        elif [ -n "$where" ]; then refused+=("${student_labels[$k]} ($where)")
        elif [ "${student_kinds[$k]}" = new ]; then not_found+=("${student_labels[$k]}")
        fi
    done

    # Boilerplate: the lab's own sources, as a student receives them.
    boiler=()
    shopt -s nullglob
    for b in "$kit/labs/$lab"/*.c "$kit/labs/$lab"/*.cu "$kit/labs/$lab"/*.h "$kit/labs/$lab"/*.cuh; do
        boiler+=("labs/$lab/${b##*/}")
        cp "$b" "$unit_work/boilerplate/b${#boiler[@]}.${b##*.}"
    done
    shopt -u nullglob

    (
        cd "$unit_work/students"
        all=("${new_files[@]}" "${old_files[@]}")
        [ "${#all[@]}" -gt 0 ] || exit 0
        # Blank every line of a student's file that a run shared with the boilerplate covers.
        if [ "${#boiler[@]}" -gt 0 ]; then
            "$sim" -r "$min_run" -n -S -T "${all[@]}" / ../boilerplate/* >../boilerplate.runs ||
                die "$sim failed on the boilerplate of $lab/$file (see above)"
            for f in "${all[@]}"; do
                runs_of "$f" ../boilerplate.runs >"$f.runs"
                awk 'FILENAME == ARGV[1] { for (l = $1; l <= $2; l++) blank[l] = 1; next }
                     { print (FNR in blank) ? "" : $0 }' "$f.runs" "$f" >"$f.own"
                mv "$f.own" "$f"
            done
        fi
        [ "${#new_files[@]}" -gt 0 ] && [ "${#all[@]}" -ge 2 ] || exit 0
        sep=()
        [ "${#old_files[@]}" -eq 0 ] || sep=(/)
        "$sim" -r "$min_run" -p -a -e -s -T "${new_files[@]}" "${sep[@]}" "${old_files[@]}" >../percent.out ||
            die "$sim failed comparing the files of $lab/$file (see above)"
    )
    : >>"$unit_work/percent.out"
    # "A B A_IN_B B_IN_A MAX MIN" per pair, by the larger share, then the smaller, then names.
    awk '$2 == "consists" && $3 == "for" && $5 == "%" && $6 == "of" {
            a = $1; b = $7; if (a < b) { key = a " " b; ab[key] = $4 } else { key = b " " a; ba[key] = $4 }
            seen[key] = 1 }
         END { for (k in seen) { x = ab[k] + 0; y = ba[k] + 0; print k, x, y, (x > y ? x : y), (x > y ? y : x) } }' \
        "$unit_work/percent.out" | sort -k5,5nr -k6,6nr -k1,1 -k2,2 | sed -n "1,${top}p" >"$unit_work/pairs"

    page=$report_dir/$lab-$file.md
    {
        echo "# Similarity: $lab, $file"
        echo
        echo "**$caveat**"
        echo
        echo "- Tool: $tool_version ($sim -r $min_run: runs of at least $min_run tokens; layout, comments and names are ignored)."
        echo "- Boilerplate, not counted (lines of a student's file in a run shared with these are blanked first): $(printf '`%s`, ' "${boiler[@]}" | sed 's/, $/./')"
        echo "- Compared: ${#new_files[@]} file(s) of this class$([ "${#old_files[@]}" -eq 0 ] || echo ", ${#old_files[@]} of earlier years (compared with this class only)")."
        [ "${#not_found[@]}" -eq 0 ] || echo "- No $file found: $(md_cell "${not_found[*]}")."
        not_compared=""
        for r in "${refused[@]}"; do not_compared="$not_compared${not_compared:+; }$r"; done
        [ -z "$not_compared" ] || echo "- Not compared: $(md_cell "$not_compared")."
        echo "- A in B: the share of A's own code (boilerplate blanked) also found in B; pairs ranked by the larger share.$([ "${#old_files[@]}" -eq 0 ] || echo " An earlier year's file is compared one way only (sim reads it as the second of a pair).")"
        echo
        if [ ! -s "$unit_work/pairs" ]; then
            echo "No pair shares a run of $min_run tokens outside the boilerplate."
        else
            echo "| rank | A | B | A in B | B in A |"
            echo "|---:|---|---|---:|---:|"
            rank=0
            while read -r a b ab ba _; do
                rank=$((rank + 1))
                note="" ba_cell="$ba %"
                # sim never reads an earlier year's file as the first of a pair.
                [ "${kind_of[$b]}" = old ] && note=" (earlier year)" ba_cell="not measured"
                echo "| [$rank](#pair-$rank) | $(md_cell "${label_of[$a]}") | $(md_cell "${label_of[$b]}$note") | $ab % | $ba_cell |"
            done <"$unit_work/pairs"
            rank=0
            while read -r a b ab ba _; do
                rank=$((rank + 1))
                echo
                echo "<a id=\"pair-$rank\"></a>"
                shares="$ab % and $ba %"
                [ "${kind_of[$b]}" = old ] && shares="$ab % of ${label_of[$a]}'s code"
                echo "## $rank. $(md_cell "${label_of[$a]}") and $(md_cell "${label_of[$b]}"): $(md_cell "$shares")"
                echo
                echo "Left: \`${origin_of[$a]//$'\n'/ }\`; right: \`${origin_of[$b]//$'\n'/ }\`. Longest shared passages first (line numbers of the files as handed in):"
                (cd "$unit_work/students" && "$sim" -r "$min_run" -n -T -a -s "$a" "$b") >"$unit_work/pair.runs" ||
                    die "$sim failed on the pair ${label_of[$a]}, ${label_of[$b]} of $lab/$file"
                # sim -a lists each run from both sides: keep those that start in A.
                runs_of "$a" "$unit_work/pair.runs" | sed -n "1,${passages}p" >"$unit_work/pair.passages"
                while read -r af at bf bt tokens; do
                    echo
                    echo "Lines $af-$at and $bf-$bt ($tokens tokens):"
                    echo
                    echo '```'
                    side_by_side "${origin_of[$a]}" "$af" "$at" "${origin_of[$b]}" "$bf" "$bt"
                    echo '```'
                done <"$unit_work/pair.passages"
            done <"$unit_work/pairs"
        fi
    } >"$page"

    {
        if [ -s "$unit_work/pairs" ]; then
            read -r a b ab ba _ <"$unit_work/pairs"
            shares="$ab % / $ba %"
            [ "${kind_of[$b]}" = old ] && shares="$ab % / not measured"
            echo "| [$lab]($lab-$file.md) | $file | ${#new_files[@]} | $(md_cell "${label_of[$a]}") and $(md_cell "${label_of[$b]}") | $shares |"
        else
            echo "| [$lab]($lab-$file.md) | $file | ${#new_files[@]} | none | |"
        fi
    } >>"$summary"
    unset label_of origin_of kind_of
done

{
    echo "# Similarity report"
    echo
    echo "**$caveat**"
    echo
    refs=""
    for r in "${references[@]}"; do refs="$refs${refs:+, }\`$r\`"; done
    echo "Class: \`$submissions\`${refs:+; earlier years (compared with this class, not with each other): $refs}."
    echo "Tool: $tool_version, run on this machine (nothing is uploaded); minimum run $min_run tokens."
    echo "Each lab's page lists its top $top pairs with their shared passages side by side."
    echo
    echo "| lab | file | students | most similar pair | A in B / B in A |"
    echo "|---|---|---:|---|---:|"
    cat "$summary"
    if [ "${#skipped[@]}" -gt 0 ]; then
        echo
        echo "Not compared:"
        echo
        for s in "${skipped[@]}"; do echo "- $(md_cell "$s")"; done
    fi
} >"$report_dir/report.md"
for s in "${skipped[@]}"; do echo "similarity: warning: $s" >&2; done
echo "similarity: $report_dir/report.md (one page per lab beside it)"
