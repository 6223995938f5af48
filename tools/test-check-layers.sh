#!/usr/bin/env bash
# tools/check-layers.sh passes on the kit and finds each kind of arrow planted in a copy.
set -uo pipefail
. "$(dirname "$0")/testlib.sh"

check "the kit has no arrow back" "$here/check-layers.sh" "$top"

# plant KIND FILE LINE: a copy of the kit's code folders with LINE appended to FILE; the
# check must fail and name FILE.
plant() {
    local copy=$work/$1
    mkdir -p "$copy/tools"
    cp -a "$top/common" "$top/datasets" "$top/labs" "$copy/"
    if [ "$3" = LINK ]; then rm -f "$copy/$2" && echo '/* a copy */' >"$copy/$2"
    else echo "$3" >>"$copy/$2"; fi
    "$here/check-layers.sh" "$copy" >"$work/$1.out" 2>&1 && return 1
    grep -q "^$2" "$work/$1.out"
}
check "a kit header that includes a model's"    plant kit-model common/include/labkit/harness.h '#include "swe/swe.h"'
check "the generator including a lab's header"  plant gen-lab datasets/labkit-gen.c '#include "../labs/06-reductions/given.h"'
check "a lab including another lab's serial.c"  plant lab-c labs/04-halo-tiling/main.c '#include "../01-straightforward/serial.c"'
check "a lab's serial.c that is a copy"         plant copy labs/02-coalescing/serial.c LINK
checks_done test-check-layers
