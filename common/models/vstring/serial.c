/* The serial string program (read-only), the reference of lab 05: the thesis's Listing 4.1
   (Kulbe 2012, after M. Korch's sequential solver) for the vibrating string, corrected. This
   is the code the tests, the driver, the grader and the dataset generator run.

   y_{i+1} = y_i + h f(y_i): every component j of the new state is computed from the old
   state only, and the two states swap roles by the parity of the step. The corrections
   (Kulbe 2012, Listing 4.1, figures 3.2 and 5.6; full reference in
   labs/05-diamond-tiling/README.md): the time loop closes before the final copy; the swap
   is by step, not inside the j loop; the boundary loads are guarded (the thesis's f reads
   y[-2] and y[n]), giving the fixed ends u_{-1} = u_N = 0. The model is autonomous, so f
   takes no t. The arithmetic is vstring_point_step()'s (vstring/vstring.h), which the kernels
   call, so the GPU result equals this one to the bit. */
#include <stdlib.h>
#include <string.h>

#include "vstring/vstring.h"

/* u of mass point p, 0 beyond the fixed ends. */
static double u_at(const double *y, int n, long p)
{
    return p >= 0 && p < n ? y[2 * p] : 0.0;
}

/* The thesis's ode_eval_comp: component j of f(y) for the interleaved state of n points. */
static double ode_eval_comp(long j, const double *y, int n)
{
    const long p = j / 2;
    if (j % 2 == 0)
        return y[j + 1];                                       /* u_p' = v_p */
    return VSTRING_K2 * (u_at(y, n, p - 1) - 2.0 * y[j - 1] + u_at(y, n, p + 1));
}

int vstring_serial(const vstring *sim, int steps, double *y_out, lk_error *err)
{
    if (steps < 0)
        return lk_fail(err, "serial: %d steps: the number of steps must be >= 0", steps);
    const int n = sim->n;
    const long len = 2 * (long)n;
    const double h = VSTRING_H;
    double *Y[2] = {malloc(len * sizeof(double)), malloc(len * sizeof(double))};
    if (!Y[0] || !Y[1]) {
        free(Y[0]);
        free(Y[1]);
        return lk_fail(err, "serial: out of memory for two states of %d mass points", n);
    }
    memcpy(Y[0], sim->y0, len * sizeof(double));
    for (int i = 0; i < steps; i++) {
        const double *cur = Y[i & 1];
        double *nxt = Y[1 - (i & 1)];
        for (long j = 0; j < len; j++)
            nxt[j] = cur[j] + h * ode_eval_comp(j, cur, n);
    }
    memcpy(y_out, Y[steps & 1], len * sizeof(double)); /* the result is in slot steps & 1 */
    free(Y[0]);
    free(Y[1]);
    return 0;
}
