#!/usr/bin/env bash
# Dependencies run one way: labs -> models -> kit (DESIGN.md section 2, labs/README.md).
# Fails, one line per arrow, when:
#   - a kit file (common/src, common/include) includes a model header (common/models/<m>/);
#   - a file of common/ or datasets/ includes anything from labs/ or solutions/;
#   - a lab includes a .c or .cu file, or reaches into another lab's folder;
#   - a lab's serial*.c is not a link into common/models/ (the one definition per model).
# Usage: tools/check-layers.sh [KIT]   (default: the kit this script belongs to)
set -euo pipefail
kit=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$kit"
found=0
arrow() { echo "$1: $2" >&2; found=$((found + 1)); }

# includes FILE...: "file:line:target" for every #include "target" of the files.
includes() { grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$@" 2>/dev/null |
    sed -E 's/^([^:]*):([0-9]+):[^"]*"([^"]*)".*/\1:\2:\3/' || true; }

models=$(find common/models -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | paste -sd'|')
mapfile -t kit_files < <(find common/src common/include -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \))
while IFS=: read -r file line target; do
    [ -n "$models" ] && [[ $target =~ ^($models)/ ]] &&
        arrow "$file:$line" "the kit includes the model header \"$target\": the kit knows no model (move the code into common/models/${target%%/*}/)"
done < <(includes "${kit_files[@]}")

mapfile -t below < <(find common datasets -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \))
lab_names=$(find labs -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | paste -sd'|')
while IFS=: read -r file line target; do
    dir=$(dirname "$file")
    if [[ $target == *labs/* || $target == *solutions/* ]] ||
        { [ -n "$lab_names" ] && [[ $target =~ (^|/)($lab_names)/ ]]; } ||
        { [ ! -e "$dir/$target" ] && [ -n "$(find labs -name "$(basename "$target")" -print -quit)" ] &&
          [ -z "$(find common -name "$(basename "$target")" -print -quit)" ]; }; then
        arrow "$file:$line" "\"$target\" is a lab's file: nothing in common/ or datasets/ uses a lab (move what both need into common/)"
    fi
done < <(includes "${below[@]}")

mapfile -t lab_files < <(find labs -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) ! -name 'serial*.c')
while IFS=: read -r file line target; do
    if [[ $target == *.c || $target == *.cu ]]; then
        arrow "$file:$line" "includes the source file \"$target\": a lab compiles its own files and links the kit's"
    elif [[ $target == ../* && $(realpath -m "$(dirname "$file")/$target") == "$kit"/labs/* ]]; then
        arrow "$file:$line" "\"$target\" is in another lab's folder: no lab uses another (move what both need into common/)"
    fi
done < <(includes "${lab_files[@]}")

for f in labs/*/serial.c labs/*/serial_*.c; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    target=$(readlink -f "$f" || true)
    [[ -L $f && $target == "$kit"/common/models/*/serial.c && -f $target ]] ||
        arrow "$f" "not a link to a model's reference (common/models/<model>/serial.c): a model has one serial program, and a lab shows it through a link (labs/README.md, \"Serial references\")"
done

if [ "$found" -ne 0 ]; then
    echo "check-layers: $found arrow(s) against labs -> models -> kit" >&2
    exit 1
fi
echo "check-layers: labs -> models -> kit, no arrow back"
