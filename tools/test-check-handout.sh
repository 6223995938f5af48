#!/usr/bin/env bash
# tools/check-handout.sh's rules 6 and 7 on a scratch kit and distribution: a lab's handout or
# deck that says a phrase of solutions/LAB/NOTES.md's handout-must-not-say list fails, naming
# file, line and phrase (another lab's files, and a waived file, do not); a Measured table that
# differs from its labs/*/bench/ file fails, naming file and line. The kit's own lab 04
# handout and deck pass.
# usage: test-check-handout.sh
set -uo pipefail
source "$(dirname "$0")/testlib.sh"

kit=$work/kit dist=$work/dist
mkdir -p "$kit/tools" "$kit/solutions/04-halo-tiling" "$kit/solutions/06-reductions"
cp "$here/check-handout.sh" "$here/instructor-only.txt" "$kit/tools/"
: >"$kit/tools/handout-waivers.txt"
cp "$top/solutions/04-halo-tiling/NOTES.md" "$kit/solutions/04-halo-tiling/"
# A NOTES.md without front matter lists nothing.
printf '# Lab 06 notes\n\nhandout-must-not-say:\n  - reduce\n' >"$kit/solutions/06-reductions/NOTES.md"

# fresh_dist: the kit's lab 04 handout and deck, a lab 06 handout that uses shuffles, and the
# table tool with lab 01's handout and bench files.
fresh_dist() {
    rm -rf "$dist"
    mkdir -p "$dist/labs/04-halo-tiling" "$dist/labs/06-reductions" "$dist/slides" "$dist/tools"
    cp -r "$top/labs/04-halo-tiling/README.md" "$top/labs/04-halo-tiling/bench" "$dist/labs/04-halo-tiling/"
    cp "$top/slides/04-halo-tiling.md" "$dist/slides/"
    printf '# Lab 06\n\nReduce a warp with `__shfl_down_sync`.\n' >"$dist/labs/06-reductions/README.md"
    cp "$here/bench-table.sh" "$here/csv.awk" "$dist/tools/"
    mkdir -p "$dist/labs/01-straightforward"
    cp -r "$top/labs/01-straightforward/bench" "$top/labs/01-straightforward/README.md" \
        "$dist/labs/01-straightforward/"
}
# verdict: run the check; its status in $status, its output in $out.
verdict() { out=$("$kit/tools/check-handout.sh" "$dist" "$kit" 2>&1); status=$?; }
has() { grep -qF -- "$1" <<<"$out"; }
not_has() { ! has "$1"; }

fresh_dist
verdict
check "the kit's lab 04 handout and deck and lab 01's table pass" test "$status" = 0
[ "$status" = 0 ] || echo "$out" >&2

# The solution's design in the handout: a line of the old Stretch section.
fresh_dist
printf '\nEach lane owns two neighbouring columns; the levels come by `__shfl_up_sync`.\n' \
    >>"$dist/labs/04-halo-tiling/README.md"
line=$(wc -l <"$dist/labs/04-halo-tiling/README.md")
verdict
check "a handout walking through the solution fails" test "$status" = 1
check "... naming file, line and phrase" \
    has "$dist/labs/04-halo-tiling/README.md: line $line says 'two neighbouring columns', the solution's design (solutions/04-halo-tiling/NOTES.md)"
check "... and each phrase" has "line $line says '__shfl_up_sync'"
check "another lab's shuffles are not lab 04's design" not_has "06-reductions"
check "a NOTES.md without front matter lists nothing" not_has "says 'reduce'"

# In the deck, in another case.
fresh_dist
printf '\n- A LANE'"'"'S TWO CELLS take 128 registers\n' >>"$dist/slides/04-halo-tiling.md"
verdict
check "a deck quoting the solution's registers fails" test "$status" = 1
check "... naming the deck" has "$dist/slides/04-halo-tiling.md: line"
check "... case ignored" has "says 'a lane's two cells'"

# A waived file is reported but passes; a waiver that matches nothing fails.
echo "slides/04-halo-tiling.md solutions/04-halo-tiling/NOTES.md  known, being fixed" \
    >"$kit/tools/handout-waivers.txt"
verdict
check "a waived finding passes" test "$status" = 0
check "... reported as WAIVED" has "WAIVED slides/04-halo-tiling.md"
fresh_dist
verdict
check "a waiver that matches nothing fails" test "$status" = 1
: >"$kit/tools/handout-waivers.txt"

# A Measured table that its bench file does not make.
fresh_dist
readme=$dist/labs/01-straightforward/README.md
marker=$(grep -n '^<!-- bench-table 01-straightforward' "$readme" | head -n1 | cut -d: -f1)
sed -i '/^| `sciddicat-large` |/s/| [0-9.]* |/| 0.1234 |/' "$readme"
verdict
check "a hand-edited Measured row fails" test "$status" = 1
check "... naming the file and the table's line" \
    has "$dist/labs/01-straightforward/README.md:$marker: the table differs from its source files"
fresh_dist
sed -i '/^01-straightforward/s/"block 128x2",[0-9.]*,/"block 128x2",0.5,/' \
    "$dist"/labs/01-straightforward/bench/*.csv
verdict
check "a newer bench file than the table fails" test "$status" = 1

checks_done test-check-handout
