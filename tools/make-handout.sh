#!/usr/bin/env bash
# Make the student distribution: every tracked file except what tools/instructor-only.txt
# lists (solutions, example submissions, the suites that need them), with the student's
# README (tools/handout-README.md plus the course map of README.md) and a KIT_VERSION file;
# then check with tools/check-handout.sh that it holds no lab's answer, and pack it.
# usage: make-handout.sh OUTDIR    -> OUTDIR/labkit/ and OUTDIR/labkit-handout.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: make-handout.sh OUTDIR}
git rev-parse --git-dir >/dev/null 2>&1 || { echo "make-handout: needs the kit's git checkout (it ships tracked files only)" >&2; exit 1; }
dist=$out/labkit
rm -rf "$dist" "$out/labkit-handout.tar.gz"
mkdir -p "$dist"

# Leave out each listed path: "dir/" a folder, anything else one file.
mapfile -t excluded < <(sed -e 's/#.*//' tools/instructor-only.txt | awk 'NF { print $1 }')
shipped() {
    local f p
    while IFS= read -r -d '' f; do
        for p in "${excluded[@]}"; do
            if [ "$f" = "$p" ] || { [[ $p == */ ]] && [[ $f == "$p"* ]]; }; then continue 2; fi
        done
        printf '%s\0' "$f"
    done
}
git ls-files -z | shipped | xargs -0 cp --parents -t "$dist"

# The student's README: the template with README.md's course map in place of @COURSE_MAP@.
course_map=$(awk '/^## Course map/ { on = 1; next } on && /^## / { exit } on' README.md | sed '/./,$!d')
[ -n "$course_map" ] || { echo "make-handout: README.md has no '## Course map' section for the student README" >&2; exit 1; }
awk -v map="$course_map" '$0 == "@COURSE_MAP@" { print map; next } { print }' tools/handout-README.md >"$dist/README.md"

# What the grader reports as the kit version when there is no git checkout.
echo "$(git describe --always --dirty) $(git log -1 --format=%cI)" >"$dist/KIT_VERSION"

if ! tools/check-handout.sh "$dist" "$PWD"; then
    echo "make-handout: $dist holds answers (above): not packed; fix them and run make handout again" >&2
    exit 1
fi
tar -C "$out" -czf "$out/labkit-handout.tar.gz" labkit
echo "handout: $dist/ and $out/labkit-handout.tar.gz ($(find "$dist" -type f | wc -l) files, kit $(cut -d' ' -f1 "$dist/KIT_VERSION"))"
