# Sourced by the tools/test-*.sh scripts: $here (tools/), $top (the kit), a work folder $work
# removed at exit, `check WHAT COMMAND...` (ok or FAIL, counted) and `checks_done NAME`, which
# ends the script: status 1 with the count when a check failed.
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() { # check WHAT COMMAND...
    local what=$1; shift
    if "$@"; then echo "  ok    $what"; else echo "  FAIL  $what" >&2; fails=$((fails + 1)); fi
}
checks_done() { # checks_done NAME
    if [ "$fails" -ne 0 ]; then echo "$1: $fails check(s) failed" >&2; exit 1; fi
    echo "$1: all checks passed"
}
