#!/usr/bin/env bash
# The graded build (labs/lab.mk GRADED=1): the driver that runs a student's code holds no
# serial reference. For lab 01 and lab 04 (whose serial.c includes lab 01's), built from the
# `correct` example: every global name of the lab's serial object is lk_no_reference in the
# driver, --serial fails with the one-line error, --gpu still parses its options, loads and
# gets as far as the GPU (runs, on a machine with one); the lab's tests still link the real
# reference, and the same build folder without GRADED=1 gets it back. A serial object that
# defines data stops the graded build. Without a GPU: builds and the CPU side only.
# usage: test-graded-build.sh
set -euo pipefail
# shellcheck source=tools/testlib.sh
source "$(dirname "$0")/testlib.sh"
unset MAKEFLAGS MFLAGS
spec=valley:61x49:1
# The `correct` example; the student distribution has no grader/examples: the lab's own.
examples=$top/grader/examples/correct/labs
[ -d "$examples" ] || { examples=$top/labs; echo "(no grader/examples: the labs' own kernels.cu)"; }

# lab_make LAB B [ARGS...]: make in the lab's folder with the chosen kernels.cu.
lab_make() {
    local lab=$1 b=$2
    shift 2
    make --no-print-directory -C "$top/labs/$lab" VARIANT=student \
        KERNELS="$examples/$lab/kernels.cu" B="$b" "$@"
}
# address PROGRAM NAME: where PROGRAM defines the global NAME (empty when it does not).
address() { nm --defined-only -g "$1" | awk -v n="$2" '$3 == n { print $1 }'; }
# all_are_no_reference PROGRAM OBJECT: every global OBJECT defines sits at lk_no_reference.
all_are_no_reference() {
    local stand_in names name
    stand_in=$(address "$1" lk_no_reference)
    names=$(nm --defined-only -g "$2" | awk '{ print $3 }')
    [ -n "$stand_in" ] && [ -n "$names" ] || return 1
    for name in $names; do
        if [ "$(address "$1" "$name")" != "$stand_in" ]; then
            echo "    $name is real code" >&2
            return 1
        fi
    done
}
# none_is_no_reference PROGRAM OBJECT: every global OBJECT defines is real code in PROGRAM.
none_is_no_reference() {
    local stand_in names name at
    stand_in=$(address "$1" lk_no_reference)
    names=$(nm --defined-only -g "$2" | awk '{ print $3 }')
    [ -n "$names" ] || return 1
    for name in $names; do
        at=$(address "$1" "$name")
        if [ -z "$at" ] || [ "$at" = "$stand_in" ]; then
            echo "    $name is not real code" >&2
            return 1
        fi
    done
}
# quiet COMMAND...: run it, its output dropped.
quiet() { "$@" >/dev/null 2>&1; }
# says_reference_absent FILE: the error line, once, and nothing else on stderr.
says_reference_absent() {
    [ "$(wc -l <"$1")" = 1 ] &&
        grep -q ': the serial reference is not part of a graded build: .*GRADED=1' "$1"
}

for lab in 01-straightforward 04-halo-tiling; do
    id=${lab%%-*}
    b=$work/$id
    prog=$b/lab$id
    echo "lab $id, GRADED=1 (the grader's student build):"
    status=0
    lab_make "$lab" "$b" GRADED=1 "$prog" >"$work/build-$id.log" 2>&1 || status=$?
    check "the driver builds" test "$status" = 0
    [ "$status" = 0 ] || { cat "$work/build-$id.log" >&2; continue; }
    check "the serial object defines the reference" test -n "$(address "$b/serial.o" sciddicat_serial)"
    check "every name of the serial object is lk_no_reference in the driver" \
        all_are_no_reference "$prog" "$b/serial.o"

    status=0
    "$prog" --serial --gen "$spec" --steps 3 >"$work/serial-$id.out" 2>"$work/serial-$id.err" || status=$?
    check "--serial fails (status 1)" test "$status" = 1
    check "--serial: one line says the reference is not part of the build" \
        says_reference_absent "$work/serial-$id.err"

    status=0
    "$prog" --gen "$spec" --steps 3 --bin "$work/gpu-$id.bin" --gpu >"$work/gpu-$id.out" \
        2>"$work/gpu-$id.err" || status=$?
    if grep -q 'no GPU on this machine\|GPU not usable' "$work/gpu-$id.err"; then
        check "--gen --steps --bin --gpu: parsed and loaded, stops only for the missing GPU" \
            test "$status" = 1
    elif [ "$examples" != "$top/labs" ]; then
        check "--gen --steps --bin --gpu: runs (status 0) and writes 61 x 49 doubles" \
            test "$status" = 0 -a "$(stat -c %s "$work/gpu-$id.bin" 2>/dev/null)" = $((61 * 49 * 8))
    fi
    check "--gpu: not a word about the reference" sh -c "! grep -q 'serial reference' '$work/gpu-$id.err'"
done

echo "lab 01: the tests of a graded build, and the same folder without GRADED=1:"
b=$work/01
status=0
lab_make 01-straightforward "$b" GRADED=1 "$b/tests/test_serial" >"$work/tests.log" 2>&1 || status=$?
check "a test builds under GRADED=1" test "$status" = 0
check "... and links the real reference" none_is_no_reference "$b/tests/test_serial" "$b/serial.o"
status=0
lab_make 01-straightforward "$b" "$b/lab01" >"$work/full.log" 2>&1 || status=$?
check "the driver relinks without GRADED=1" test "$status" = 0
check "... with the real reference" none_is_no_reference "$b/lab01" "$b/serial.o"
check "... and --serial runs" quiet "$b/lab01" --serial --gen "$spec" --steps 3 --no-md5

echo "a serial object that defines data:"
b=$work/data
mkdir -p "$b"
printf 'double lk_table[4] = {1, 2, 3, 4};\nint lk_serial_fn(void) { return 0; }\n' >"$work/data.c"
gcc -c "$work/data.c" -o "$b/serial.o"
touch -d '+1 hour' "$b/serial.o" # newer than serial.c: make keeps it
status=0
lab_make 01-straightforward "$b" GRADED=1 "$b/no-reference.flags" >"$work/data.log" 2>&1 || status=$?
check "the graded build stops" test "$status" -ne 0
check "... naming the data symbol" grep -q 'lk_table (nm type D) is not a function' "$work/data.log"
check "... and leaves no options behind" test ! -e "$b/no-reference.flags"

checks_done test-graded-build
