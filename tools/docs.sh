#!/usr/bin/env bash
# make docs: Doxygen HTML for common/include/labkit and every labs/*/lab.h, into OUT_DIR/html
# (default: $LK_BUILD/docs, else build/docs). Any Doxygen warning fails the run (exit 1).
# usage: tools/docs.sh [OUT_DIR]
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
out=${1:-${LK_BUILD:-$top/build}/docs}

if ! command -v doxygen >/dev/null 2>&1; then
    echo "docs: doxygen not found: apt-get install doxygen" >&2
    exit 1
fi

shopt -s nullglob
labs=(labs/*/lab.h)
inputs=""
for h in "${labs[@]}"; do inputs+=" \"$h\""; done

# Stale pages of removed headers must not survive; the log holds this run's warnings only.
rm -rf "$out/html"
mkdir -p "$out"
log=$out/warnings.log
rm -f "$log"
status=0
{
    cat Doxyfile
    [ -n "$inputs" ] && echo "INPUT += $inputs"
    echo "OUTPUT_DIRECTORY = \"$out\""
    echo "WARN_LOGFILE = \"$log\""
} | doxygen - || status=$?

if [ -s "$log" ]; then
    cat "$log" >&2
    echo "docs: $(grep -c . "$log") Doxygen warning(s) (warnings are errors): document the declarations named above" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "docs: doxygen failed (exit status $status)" >&2
    exit 1
fi
echo "docs: $out/html/index.html (common/include/labkit + ${#labs[@]} lab.h)"
