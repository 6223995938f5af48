#!/usr/bin/env bash
# The kit's CUDA is C-style (DESIGN.md, conventions): no templates, lambdas, classes,
# references, C++ casts, auto, namespaces or operator overloads. Checks the given files (by
# default every tracked .cu/.cuh of common/, labs/ and solutions/), comments stripped, and
# prints file:line: construct for each hit. The C++-only libraries the given baselines call
# are allowed by name: cub:: (lab 06's CUB reference) and cooperative_groups:: (lab 05's
# grid-wide barrier). Outside a git checkout (the student distribution) it checks the kit's
# own files there: common/ and the labs' given code, not the student's kernels.cu.
# usage: check-cuda-style.sh [FILE ...]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if [ $# -eq 0 ]; then
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        mapfile -t files < <(git ls-files 'common/*.cu' 'common/*.cuh' 'labs/*.cu' 'labs/*.cuh' \
                                          'solutions/*.cu' 'solutions/*.cuh')
    else
        mapfile -t files < <(find common labs \( -name build -prune \) -o \
                                  \( -name '*.cu' -o -name '*.cuh' \) ! -name kernels.cu -print |
                             sort)
    fi
    if [ "${#files[@]}" -eq 0 ]; then
        echo "check-cuda-style: no .cu files under common/, labs/, solutions/ of $top" \
             "(name the files to check)" >&2
        exit 2
    fi
else
    files=("$@")
fi

# ERE, name: clang-format writes a reference as `type &name`, a bitwise and as `a & b`.
W='(^|[^[:alnum:]_])' E='([^[:alnum:]_]|$)' # a word starts, a word ends (awk has no \b)
T=$'\t'
rules="${W}template[[:space:]]*<${T}a template
\\[[&=][^]]*\\][[:space:]]*\\(${T}a lambda
${W}(class|typename)${E}${T}a class
${W}(static|reinterpret|const|dynamic)_cast[[:space:]]*<${T}a C++ cast (write (type)value)
${W}auto${E}${T}auto
${W}namespace${E}${T}a namespace
${W}operator${E}${T}an operator overload
${W}(nullptr|constexpr)${E}${T}a C++11 keyword (NULL, a #define or const)
[[:alnum:]_] &[[:alpha:]_]${T}a reference (pass a pointer)"
# Qualified names: only the C++-only libraries the given baselines call.
allowed_scopes='^(cub|cooperative_groups)::'

status=0
for f in "${files[@]}"; do
    if [ ! -r "$f" ]; then
        echo "$f: cannot read it" >&2
        status=2
        continue
    fi
    # The preprocessor, includes untouched, strips the comments and keeps the line numbers.
    if ! text=$(gcc -x c++ -fpreprocessed -E -dD "$f" 2>&1); then
        echo "$f: the preprocessor could not read it: $text" >&2
        status=2
        continue
    fi
    hits=$(RULES=$rules ALLOWED=$allowed_scopes awk -v file="$f" '
        BEGIN { n = split(ENVIRON["RULES"], r, "\n"); allowed = ENVIRON["ALLOWED"]
                for (i = 1; i <= n; i++) {
                    k = index(r[i], "\t"); re[i] = substr(r[i], 1, k - 1); what[i] = substr(r[i], k + 1) } }
        /^# [0-9]+ "/ { line = $2 - 1; next }   # a line marker: the next line is number $2
        { line++; text = $0
          gsub(/"([^"\\]|\\.)*"/, "\"\"", text)       # string literals do not count
          for (i = 1; i <= n; i++)
              if (text ~ re[i]) printf "%s:%d: %s\n", file, line, what[i]
          t = text
          while (match(t, /([[:alpha:]_][[:alnum:]_]*::)+/)) { # a whole chain, a::b::
              if (substr(t, RSTART) !~ allowed) { printf "%s:%d: a qualified name\n", file, line; break }
              t = substr(t, RSTART + RLENGTH)
          } }' <<< "$text")
    if [ $? -ne 0 ]; then
        echo "$f: check-cuda-style's awk failed" >&2
        status=2
        continue
    fi
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits"
        status=1
    fi
done
if [ "$status" -eq 1 ]; then
    echo "check-cuda-style: C++ constructs above; the kit's CUDA is C-style (DESIGN.md," \
         "conventions): rewrite them as C (functions, structs, pointers, #define)" >&2
fi
exit "$status"
