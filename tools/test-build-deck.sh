#!/usr/bin/env bash
# The slides' own check: build-deck.sh must pass a clean deck and fail, naming the slide, on
# a line too wide, a slide too tall and a missing glyph; make builds one deck by its path
# from the kit's top. CI runs it after make slides.
# usage: test-build-deck.sh [WORKDIR]   (default: build/slides/test)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/build/slides/test}
rm -rf "$work" && mkdir -p "$work"
fails=0

deck() {  # NAME BODY: a two-slide deck whose second slide is BODY
    printf -- '---\ntitle: "build-deck test"\n---\n\n# A clean slide\n\nSome text.\n\n# The planted slide\n\n%s\n' "$2" > "$work/$1.md"
}
expect() {  # NAME pass|fail PATTERN: build the deck, check the outcome and the message
    local out status
    out=$("$top/tools/build-deck.sh" "$work/$1.md" "$work/$1.pdf" 2>&1); status=$?
    if [ "$2" = pass ] && [ "$status" -ne 0 ]; then
        echo "FAIL $1: a clean deck was refused:"; echo "$out"; fails=$((fails + 1)); return
    fi
    if [ "$2" = fail ] && { [ "$status" -eq 0 ] || ! grep -q -- "$3" <<< "$out"; }; then
        echo "FAIL $1: expected a failure matching '$3', got status $status:"; echo "$out"
        fails=$((fails + 1)); return
    fi
    echo "ok   $1"
}

deck clean 'A short line.'
expect clean pass ''
deck too-wide '```
a code line far too long for any slide: 0123456789012345678901234567890123456789012345678901234567890123456789
```'
expect too-wide fail 'slide 3: The planted slide: a line is .*pt too wide'
deck too-tall "$(for i in $(seq 1 30); do echo "- item $i"; done)"
expect too-tall fail 'slide 3: The planted slide: the slide is .*pt too tall'
deck no-glyph '```{=latex}
{\font\plaincm=cmr10 \plaincm\char"C8}
```'
expect no-glyph fail 'slide 3: The planted slide: Missing character'

# make build/slides/NN-name.pdf, as if the deck had just been edited (-W; -n: the commands
# only): it must rebuild that deck, not call the existing PDF done.
rel=$(cd "$top" && MAKEFLAGS= make --no-print-directory -n -W slides/01-straightforward.md \
      LK_BUILD="$top/build" build/slides/01-straightforward.pdf 2>&1)
if grep -q 'tools/build-deck.sh slides/01-straightforward.md' <<< "$rel"; then
    echo "ok   relative-path"
else
    echo "FAIL relative-path: make build/slides/01-straightforward.pdf did not rebuild it:"
    echo "$rel"; fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "test-build-deck: $fails of 5 cases failed (decks and logs in $work)" >&2
    exit 1
fi
echo "test-build-deck: all 5 cases passed"
