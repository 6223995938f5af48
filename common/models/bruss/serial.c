/* The serial Brusselator program (read-only), the reference of lab 05's stretch model, the
   2-D Brusselator BRUSS2D-MIX (bruss/bruss.h): the same listing as the string's
   (common/models/vstring/serial.c), only ode_eval_comp differs. Its access distance is
   N2 = 2m components (one grid row of U and V), and a missing neighbour at the border is a
   second copy of the opposite one. */
#include <stdlib.h>
#include <string.h>

#include "bruss/bruss.h"

/* Korch's ode_eval_comp of BRUSS2D-MIX: component i = 2m k + 2j + v of f(y) on an m x m
   grid; the arithmetic is bruss/bruss.h's, which the kernels call. */
static double bruss_eval_comp(long i, const double *y, int m, double c)
{
    const long n2 = 2L * m, k = i / n2, j = (i % n2) / 2;
    const long north = k == 0 ? i + n2 : i - n2, south = k == m - 1 ? i - n2 : i + n2;
    const long west = j == 0 ? i + 2 : i - 2, east = j == m - 1 ? i - 2 : i + 2;
    if (i % 2 == 0)
        return bruss_f_u(c, y[i], y[i + 1], y[north], y[south], y[west], y[east]);
    return bruss_f_v(c, y[i - 1], y[i], y[north], y[south], y[west], y[east]);
}

int bruss_serial(const bruss *sim, int steps, double *y_out, lk_error *err)
{
    if (steps < 0)
        return lk_fail(err, "serial: %d steps: the number of steps must be >= 0", steps);
    const int m = sim->m;
    if (m < BRUSS_MIN_M || m > BRUSS_MAX_M)
        return lk_fail(err, "serial: a Brusselator of side %d: m must be from %d to %d", m,
                       BRUSS_MIN_M, BRUSS_MAX_M);
    const long len = (long)bruss_components(m);
    const double h = bruss_h(m), c = bruss_c(m);
    double *Y[2] = {malloc(len * sizeof(double)), malloc(len * sizeof(double))};
    if (!Y[0] || !Y[1]) {
        free(Y[0]);
        free(Y[1]);
        return lk_fail(err, "serial: out of memory for two states of a %d x %d grid", m, m);
    }
    memcpy(Y[0], sim->y0, len * sizeof(double));
    for (int i = 0; i < steps; i++) {
        const double *cur = Y[i & 1];
        double *nxt = Y[1 - (i & 1)];
        for (long j = 0; j < len; j++)
            nxt[j] = cur[j] + h * bruss_eval_comp(j, cur, m, c);
    }
    memcpy(y_out, Y[steps & 1], len * sizeof(double));
    free(Y[0]);
    free(Y[1]);
    return 0;
}
