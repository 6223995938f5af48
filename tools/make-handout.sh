#!/usr/bin/env bash
# Make the student distribution: every tracked file except the instructor's material
# (solutions/ and the grader's example submissions, several of which are correct solutions).
# usage: make-handout.sh OUTDIR    -> OUTDIR/labkit/ and OUTDIR/labkit-handout.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: make-handout.sh OUTDIR}
git rev-parse --git-dir >/dev/null 2>&1 || { echo "make-handout: needs the kit's git checkout (it ships tracked files only)" >&2; exit 1; }
rm -rf "$out/labkit" "$out/labkit-handout.tar.gz"
mkdir -p "$out/labkit"
git ls-files -z | grep -zv -e '^solutions/' -e '^grader/examples/' | xargs -0 cp --parents -t "$out/labkit"
tar -C "$out" -czf "$out/labkit-handout.tar.gz" labkit
echo "handout: $out/labkit/ and $out/labkit-handout.tar.gz ($(git ls-files | grep -cv -e '^solutions/' -e '^grader/examples/') files)"
