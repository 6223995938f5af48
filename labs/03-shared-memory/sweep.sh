#!/usr/bin/env bash
# Tile-shape sweep on the large grid (the tile is the block): lab 02's sweep script run on
# this lab's program; "speedup vs given" compares with the global-memory kernel of the
# same shape. usage and options: ../02-coalescing/sweep.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
LAB_DIR=$here SHAPES=${SHAPES:-32x8 32x4 32x16 64x4 64x8 128x2 16x16 32x32 16x8 8x8 256x1 1x64} \
    exec "$here/../02-coalescing/sweep.sh" "$@"
