/* CPU tests of what lab 03 gives: the wall image swe_cell_walled() that the given time
   loop and your kernel use instead of a ghost layer must be, bit for bit, what the serial
   program's ghost layer holds, or the GPU results could not equal serial.c's. */
#include <string.h>

#include "swe/swe_testing.h"

/* Every non-corner cell of a state, ghost ring included, read through the wall image from
   a copy whose ghost layer is NaN, equals the cell of the serial program's walled state. */
static void check_walls(const char *spec)
{
    swe sim;
    lk_test_swe_gen(spec, &sim);
    swe_fields walled, stale;
    lk_test_swe_serial(&sim, 7, &walled); /* a state some steps in, with momentum */
    swe_ghosts(sim.rows, sim.cols, &walled);
    lk_test_swe_fields(&sim, &stale);
    const size_t bytes = swe_cells(&sim) * sizeof(double);
    memcpy(stale.Z, walled.Z, bytes);
    memcpy(stale.Qx, walled.Qx, bytes);
    memcpy(stale.Qy, walled.Qy, bytes);
    lk_test_swe_poison_ghosts(&sim, &stale);
    const int rows = sim.rows, cols = sim.cols, width = cols + 2;
    for (int i = 0; i <= rows + 1; i++) {
        for (int j = 0; j <= cols + 1; j++) {
            if ((i == 0 || i == rows + 1) && (j == 0 || j == cols + 1))
                continue; /* corners: no interior cell reads them */
            const swe_q want = swe_load(walled.Z, walled.Qx, walled.Qy, swe_at(i, j, width));
            const swe_q got = swe_cell_walled(i, j, rows, cols, stale.Z, stale.Qx, stale.Qy);
            cr_assert(memcmp(&want, &got, sizeof want) == 0,
                      "%s: cell (%d, %d): swe_cell_walled gives (%.17g, %.17g, %.17g), the "
                      "ghost layer holds (%.17g, %.17g, %.17g)",
                      spec, i, j, got.z, got.qx, got.qy, want.z, want.qx, want.qy);
        }
    }
    swe_fields_free(&walled);
    swe_fields_free(&stale);
    swe_free(&sim);
}

Test(given_walls, wall_image_equals_the_ghost_layer) { check_walls("bumps:13x9:5"); }
Test(given_walls, wall_image_on_a_one_cell_grid) { check_walls("bumps:1x1:2"); }
Test(given_walls, wall_image_on_strips) { check_walls("bumps:1x17:3"); check_walls("bumps:17x1:4"); }
