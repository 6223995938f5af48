#!/usr/bin/env bash
# make similarity's report on a class of fake lab 01 submissions (tools/tests/similarity/):
# the planted copies rank above every honest pair, the lab's own files count for nobody, an
# earlier year's files are compared with the class but not with each other, and a sim_c that
# fails fails the report. CI runs it after the check itself.
#
# The fixtures: alice, bob, carol and dave wrote lab 01 each their own way (bob hands in
# NAME/01-straightforward/kernels.cu, the others NAME/labs/01-straightforward/kernels.cu);
# erin is alice's file with names changed and kernels reordered, frank is alice's file
# reformatted; grace copied 2025/zoe (renamed, re-indented), and so did 2025/yuri a year
# before; henry and ivan handed in the untouched skeleton; README.txt is not a student.
# usage: test-similarity.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
fixtures=$top/tools/tests/similarity
# lacks REGEX FILE: no line of FILE matches.
lacks() { ! grep -Eq "$1" "$2"; }
# The planted pairs, each as its two names in sorted order.
planted="2025/yuri+grace 2025/zoe+grace alice+erin alice+frank erin+frank"

echo "make similarity on the fake class:"
status=0
"$here/similarity.sh" --top 100 --references "$fixtures/2025" "$fixtures/class" "$work/out" \
    >"$work/run.log" 2>&1 || status=$?
check "it succeeds" test "$status" = 0
page=$work/out/similarity/01-straightforward-kernels.cu.md
index=$work/out/similarity/report.md
check "a page for lab 01 and an index" test -s "$page" -a -s "$index"

# "RANK A+B" for each row of the page's ranking table, the pair's names in sorted order.
awk -F'|' '$2 ~ /^ \[[0-9]+\]\(#pair-[0-9]+\) $/ {
        split($2, rank, /[][]/); a = $3; b = $4
        gsub(/^ +| +$| \(earlier year\)/, "", a); gsub(/^ +| +$| \(earlier year\)/, "", b)
        print rank[2], (a < b ? a "+" b : b "+" a) }' "$page" >"$work/ranks"
worst_planted=0
for p in $planted; do
    rank=$(awk -v p="$p" '$2 == p { print $1 }' "$work/ranks")
    check "planted pair $p is ranked" test -n "$rank"
    [ -n "$rank" ] && [ "$rank" -gt "$worst_planted" ] && worst_planted=$rank
done
best_honest=$(awk -v planted=" $planted " 'index(planted, " " $2 " ") == 0 { print $1; exit }' "$work/ranks")
check "every planted pair ranks above every honest pair (last planted $worst_planted, first honest ${best_honest:-none})" \
    test "${best_honest:-1000}" -gt "$worst_planted" -a "$worst_planted" -gt 0
check "the untouched skeletons (henry, ivan) are in no pair: the lab's files are boilerplate" \
    lacks '(henry|ivan)' "$work/ranks"
check "an earlier year's files are not compared with each other" \
    lacks '2025/yuri\+2025/zoe' "$work/ranks"
check "bob's NAME/LAB/FILE and the kit layout are both found: 9 of the class, 2 earlier" \
    grep -q 'Compared: 9 file(s) of this class, 2 of earlier years' "$page"
check "matching passages side by side, with both files' line numbers" \
    grep -Eq '^ +[0-9]+  .*\| +[0-9]+  .*cudaMemcpy' "$page"
for f in "$index" "$page"; do
    check "${f##*/} says similarity is a reason to look, not a verdict" \
        grep -q 'Similarity is a reason to look, not a verdict' "$f"
    check "${f##*/} names the tool and its version" \
        grep -Eq 'similarity-tester [0-9]|sim_c \(Build' "$f"
done
check "README.txt is named as not compared, in the index and on the console" \
    grep -q 'class/README.txt: not a folder' "$index" "$work/run.log"

# A class of 72 (2,556 pairs: sim's and sort's output outgrows a pipe): only the top 3 pairs.
for k in $(seq 1 8); do
    for s in "$fixtures"/class/*/; do
        name=${s%/}; name=${name##*/}
        mkdir -p "$work/large/$name$k"
        cp -r "$s". "$work/large/$name$k/"
    done
done
status=0
"$here/similarity.sh" --top 3 --lab 01-straightforward "$work/large" "$work/out-large" \
    >"$work/large.log" 2>&1 || status=$?
check "a class of 72 with --top 3: it succeeds" test "$status" = 0
check "... with 3 pairs" test "$(grep -c '^| \[[0-9]' "$work/out-large/similarity/01-straightforward-kernels.cu.md")" = 3

echo "make similarity when sim_c fails or the input is wrong:"
mkdir -p "$work/broken"
printf '#!/bin/sh\necho "sim_c: bad option" >&2\nexit 1\n' >"$work/broken/sim_c"
chmod +x "$work/broken/sim_c"
status=0
PATH="$work/broken:$PATH" "$here/similarity.sh" "$fixtures/class" "$work/out-broken" \
    >"$work/broken.log" 2>&1 || status=$?
check "a sim_c that fails: the report fails too" test "$status" -ne 0
check "... naming the lab and what failed" grep -q 'sim_c failed .*01-straightforward' "$work/broken.log"
status=0
"$here/similarity.sh" "$work/no-such-class" "$work/out-none" >"$work/none.log" 2>&1 || status=$?
check "a class folder that does not exist: one line saying what to give, status 1" \
    grep -q "no-such-class: no such folder: give the class folder" "$work/none.log"
check "... and the status is 1" test "$status" = 1
status=0
"$here/similarity.sh" self "$work/out-self" >"$work/self.log" 2>&1 || status=$?
check "SUBMISSIONS=self: refused with what to give instead" \
    grep -q 'make similarity SUBMISSIONS=dir' "$work/self.log"

checks_done test-similarity
