#!/usr/bin/env bash
# Block-shape sweep on the large grid (question 1): lab 02's sweep script run on this lab's
# program, one Markdown table. usage and options: ../02-coalescing/sweep.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
LAB_DIR=$here SHAPES=${SHAPES:-32x1 32x4 32x8 16x16 8x32 1x32 128x2} \
    exec "$here/../02-coalescing/sweep.sh" "$@"
