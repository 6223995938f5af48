#!/usr/bin/env bash
# check-cuda-style.sh must pass C-style CUDA and fail, naming file, line and construct, on each
# C++ construct it forbids; comments, strings and the allowed libraries do not count.
# CI runs it after the check itself.
# usage: test-check-cuda-style.sh [WORKDIR]   (default: build/test-cuda-style)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/build/test-cuda-style}
rm -rf "$work" && mkdir -p "$work"
fails=0

# NAME BODY pass|fail [WHAT]: a file whose line 4 is BODY, checked; a failure must name line 4.
expect() {
    local f="$work/$1.cu" out status
    printf '// %s\n#include "lab.h"\n\n%s\n__global__ void after(int n) { (void)n; }\n' "$1" "$2" > "$f"
    out=$("$top/tools/check-cuda-style.sh" "$f" 2>&1); status=$?
    if [ "$3" = pass ] && [ "$status" -ne 0 ]; then
        echo "FAIL $1: C-style code was refused:"; echo "$out"; fails=$((fails + 1)); return
    fi
    if [ "$3" = fail ] && { [ "$status" -ne 1 ] || ! grep -qF -- "$f:4: $4" <<< "$out"; }; then
        echo "FAIL $1: expected '$f:4: $4', got status $status:"; echo "$out"
        fails=$((fails + 1)); return
    fi
    echo "ok   $1"
}

expect clean '__device__ static inline double twice(const double *x, int n) { return x[n] * 2.0 & 1; }' pass
expect bitwise-and 'static int low(int a, int mask) { return (a & mask) + (a && mask); }' pass
expect address-of 'static void f(int *p) { int v; g(&v, p); }' pass
expect in-comment '/* template <int N>, [&](), a::b, reinterpret_cast<T> */ int x; // auto &y' pass
expect in-string 'static const char *s = "template <int N> [&] std::vector auto";' pass
expect cub 'static int f(void *t, size_t b) { return (int)cub::DeviceReduce::Sum(t, b, x, y, 1); }' pass
expect grid-sync '__device__ void f(void) { cooperative_groups::this_grid().sync(); }' pass
expect template 'template <int N> __device__ int f(void) { return N; }' fail 'a template'
expect lambda '__device__ void f(void) { int a = 0; auto g = [&](int x) { a += x; }; g(1); }' fail 'a lambda'
expect class 'class pair { int a; };' fail 'a class'
expect cast 'static double *f(float *p) { return reinterpret_cast<double *>(p); }' fail 'a C++ cast'
expect auto '__device__ void f(int n) { auto m = n; (void)m; }' fail 'auto'
expect namespace 'namespace cg = cooperative_groups;' fail 'a namespace'
expect operator 'static int operator+(pair a, pair b);' fail 'an operator overload'
expect nullptr 'static int *p = nullptr;' fail 'a C++11 keyword'
expect reference '__device__ void load(const double *z, cell_pair &c) { c.za = z[0]; }' fail 'a reference'
expect qualified 'static int n = std::max(1, 2);' fail 'a qualified name'

# The kit's own tree passes.
if out=$("$top/tools/check-cuda-style.sh" 2>&1); then
    echo "ok   the kit's CUDA files"
else
    echo "FAIL the kit's CUDA files:"; echo "$out"; fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "test-check-cuda-style: $fails failed" >&2
    exit 1
fi
echo "test-check-cuda-style: all passed"
