/* The serial shallow-water program (read-only), the one reference of labs 02 and 03: the
   code the tests, the drivers, the grader and the dataset generator run. Each step first
   applies the closed-wall rule to the ghost layer of the current state, then computes every
   interior cell of the next state from its four neighbours; the two states swap roles after
   each step.

   The wall rule is swe_ghosts() (common/models/swe/swe.c: the generators use it too).
   Fields are (rows + 2) x (cols + 2) doubles with a ghost layer; interior cell (i, j),
   1 <= i <= rows, 1 <= j <= cols, is at i * (cols + 2) + j. The per-cell arithmetic is
   shared with the kernels (swe/swe.h), so the GPU result equals this one to the bit. */
#include "swe/swe.h"

void swe_step(int rows, int cols, double r, const swe_fields *cur,
              const swe_fields *next)
{
    const int width = cols + 2;
    swe_ghosts(rows, cols, cur);
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= cols; j++)
            swe_step_cell(i, j, width, r, cur->Z, cur->Qx, cur->Qy, next->Z, next->Qx,
                          next->Qy);
}

int swe_serial(const swe *sim, int steps, const swe_fields *out, lk_error *err)
{
    if (steps < 0)
        return lk_fail(err, "serial: %d steps: the number of steps must be >= 0", steps);
    swe_fields tmp;
    if (swe_fields_alloc(&tmp, sim->rows, sim->cols, err) != 0)
        return -1;
    /* Ping-pong between out and tmp, starting where the last step lands in out. */
    swe_fields a = steps % 2 == 0 ? *out : tmp, b = steps % 2 == 0 ? tmp : *out;
    swe_fields_copy(sim, &sim->q, &a);
    const double r = swe_r(sim);
    for (int s = 0; s < steps; s++) {
        swe_step(sim->rows, sim->cols, r, &a, &b);
        swe_fields t = a;
        a = b;
        b = t;
    }
    swe_fields_free(&tmp);
    return 0;
}
