#!/usr/bin/env bash
# Build one slide deck: pandoc Markdown -> LaTeX beamer -> PDF (pdflatex, twice for the page
# totals), then read the log and fail on what would show on the screen as a defect: an
# overfull line or slide more than LK_SLIDES_OVERFULL_PT points too wide or tall (text cut at
# the edge), a missing glyph, a font substituted for a missing one. The message names the deck and slide.
# usage: build-deck.sh slides/NN-name.md build/slides/NN-name.pdf   (V=1: full commands, output)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: build-deck.sh DECK.md OUT.pdf}
out=${2:?usage: build-deck.sh DECK.md OUT.pdf}
tolerance=${LK_SLIDES_OVERFULL_PT:-10}
name=$(basename "$src" .md)
for tool in pandoc pdflatex; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "$src: $tool not found: apt-get install pandoc texlive-latex-recommended" \
             "texlive-pictures lmodern (the list in .ci/run)" >&2
        exit 1; }
done
[ -f "$src" ] || { echo "$src: no such deck" >&2; exit 1; }
for sty in beamer.cls tikz.sty lmodern.sty; do
    [ -n "$(kpsewhich "$sty")" ] || {
        echo "$src: TeX cannot find $sty: apt-get install texlive-latex-recommended" \
             "texlive-pictures lmodern (the list in .ci/run)" >&2
        exit 1; }
done
mkdir -p "$(dirname "$out")"
work="$(cd "$(dirname "$out")" && pwd)/tex/$name"
rm -rf "$work" && mkdir -p "$work"

run() {  # show the command with V=1, else keep its output in the work folder's log
    if [ "${V:-0}" = 1 ]; then echo "$*"; "$@"; else "$@" >> "$work/build.out" 2>&1; fi
}
# Plots, the preamble and the handouts' figures (labs/NN-name/figures/...) are found through
# TEXINPUTS (kpathsea: the trailing ':' keeps the system paths); max_print_line keeps every
# log message on one line for the checks below.
printf '\\newcommand{\\lkdeck}{%s}\n' "$name" > "$work/deck.tex"
export TEXINPUTS="$top/slides/plots:$top/slides:$top:" max_print_line=100000
if ! run pandoc "$src" --from markdown --to beamer --standalone --slide-level=1 \
         --include-in-header="$work/deck.tex" --include-in-header="$top/slides/preamble.tex" \
         --variable aspectratio=169 \
         --resource-path="$top/slides" --output "$work/$name.tex"; then
    [ "${V:-0}" = 1 ] || cat "$work/build.out" >&2
    echo "$src: pandoc failed (above)" >&2
    exit 1
fi
for pass in 1 2; do
    if ! (cd "$work" && run pdflatex -interaction=nonstopmode -halt-on-error "$name.tex"); then
        echo "$src: LaTeX error (pass $pass; log: $work/$name.log):" >&2
        grep -A 6 '^!' "$work/$name.log" | head -20 >&2 || true
        exit 1
    fi
done

# The log prints a frame's title (slides/preamble.tex) after typesetting its body: a line too
# wide belongs to the next title printed, a frame too tall (overfull \vbox) to the last one.
if ! awk -v deck="$src" -v tol="$tolerance" '
    function report(where, msg) { printf "%s: %s: %s\n", deck, where, msg > "/dev/stderr"; bad = 1 }
    function title(line) {
        sub(/^LABKIT-FRAME /, "", line); sub(/\\ifnum .*/, "", line); sub(/: \{/, ": ", line)
        return "slide " line
    }
    function flush(where,    i) {
        for (i = 1; i <= npending; i++) report(where, pending[i])
        npending = 0
    }
    /^LABKIT-FRAME / { frame = title($0); flush(frame); next }
    /^Overfull \\[hv]box/ {
        pt = $0; sub(/^Overfull \\[hv]box \(/, "", pt); sub(/pt too (wide|high).*/, "", pt)
        if (pt + 0 <= tol) next
        if ($0 ~ /hbox/)
            pending[++npending] = sprintf("a line is %spt too wide (tolerance %spt): text runs past the slide edge: shorten or break it", pt, tol)
        else
            report(frame ? frame : "title page", sprintf("the slide is %spt too tall (tolerance %spt): the bottom is cut: move something to another slide", pt, tol))
    }
    /Missing character: There is no/ {
        pending[++npending] = $0 ": use a character the font has, or declare it in slides/preamble.tex"
    }
    /^LaTeX Font Warning: Font shape .* undefined|^LaTeX Font Warning: Some font shapes were not available/ {
        pending[++npending] = $0 ": a font is missing (install the packages of .ci/run, or use another shape)"
    }
    END { flush(frame ? frame " or the slide after it" : "title page"); exit bad }' "$work/$name.log"; then
    echo "$src: the slides have defects (above); full log: $work/$name.log" >&2
    exit 1
fi
pages=$(sed -n 's/^Output written on .*(\([0-9]*\) pages\?.*/\1/p' "$work/$name.log")
cp "$work/$name.pdf" "$out"
echo "  SLIDES  ${out#"$top"/} ($pages pages)"
