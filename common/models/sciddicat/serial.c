/* The serial SciddicaT program (read-only), the one reference of labs 01, 04 and 07: the
   code the tests, the drivers, the grader and the dataset generator run, and the code lab 01
   ports to CUDA in kernels.cu: the time loop, three loops over the interior cells (reset,
   flows, width update) and their arithmetic.

   Grids are row-major, rows x cols: cell (i, j) is at i * cols + j. The four outflows of a
   cell are layers of Sf: Sf[k * rows * cols + i * cols + j], k = 0 North, 1 West, 2 East,
   3 South. Border cells are never updated: flow that reaches them leaves the grid. The
   order of every operation below is what makes the GPU result equal this one to the bit. */
#include <stdlib.h>
#include <string.h>

#include "sciddicat/sciddicat.h"

#define AT(i, j) ((size_t)(i) * (size_t)cols + (size_t)(j))
#define FLOW(k, i, j) ((size_t)(k) * (size_t)rows * (size_t)cols + AT(i, j))

/* Reset: every interior cell's four outflows to zero. */
static void reset_flows(int rows, int cols, double *Sf)
{
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++)
            for (int k = 0; k < 4; k++)
                Sf[FLOW(k, i, j)] = 0.0;
}

/* Flows: the minimisation of differences (Di Gregorio & Serra). u[0] is the cell itself,
   u[1..4] its North, West, East and South neighbours; neighbours at or above the average
   leave it until none does, and each remaining neighbour gets (average - u) * p_r. */
static void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf)
{
    const double p_r = SCIDDICAT_P_R, p_epsilon = SCIDDICAT_P_EPSILON;
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++) {
            const double m = h[AT(i, j)] - p_epsilon;
            double u[5];
            u[0] = z[AT(i, j)] + p_epsilon;
            u[1] = z[AT(i - 1, j)] + h[AT(i - 1, j)];
            u[2] = z[AT(i, j - 1)] + h[AT(i, j - 1)];
            u[3] = z[AT(i, j + 1)] + h[AT(i, j + 1)];
            u[4] = z[AT(i + 1, j)] + h[AT(i + 1, j)];
            int eliminated[5] = {0, 0, 0, 0, 0};
            double average;
            int again;
            do {
                again = 0;
                average = m;
                int count = 0;
                for (int n = 0; n < 5; n++)
                    if (!eliminated[n]) {
                        average += u[n];
                        count++;
                    }
                if (count != 0)
                    average /= count;
                for (int n = 0; n < 5; n++)
                    if (average <= u[n] && !eliminated[n]) {
                        eliminated[n] = 1;
                        again = 1;
                    }
            } while (again);
            for (int k = 0; k < 4; k++)
                if (!eliminated[k + 1])
                    Sf[FLOW(k, i, j)] = (average - u[k + 1]) * p_r;
        }
}

/* Width update: inflow from each neighbour minus the outflow towards it, in the order
   North, West, East, South. */
static void update_width(int rows, int cols, double *h, const double *Sf)
{
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < cols - 1; j++) {
            double t = h[AT(i, j)];
            t += Sf[FLOW(3, i - 1, j)] - Sf[FLOW(0, i, j)];
            t += Sf[FLOW(2, i, j - 1)] - Sf[FLOW(1, i, j)];
            t += Sf[FLOW(1, i, j + 1)] - Sf[FLOW(2, i, j)];
            t += Sf[FLOW(0, i + 1, j)] - Sf[FLOW(3, i, j)];
            h[AT(i, j)] = t;
        }
}

/* Thickness leaving through the border this step: outflows of the cells next to it. */
static double border_outflow(int rows, int cols, const double *Sf)
{
    double out = 0.0;
    for (int j = 1; j < cols - 1; j++)
        out += Sf[FLOW(0, 1, j)] + Sf[FLOW(3, rows - 2, j)];
    for (int i = 1; i < rows - 1; i++)
        out += Sf[FLOW(1, i, 1)] + Sf[FLOW(2, i, cols - 2)];
    return out;
}

int sciddicat_serial(const sciddicat *sim, int steps, double *h, double *lost,
                     lk_error *err)
{
    const int rows = sim->rows, cols = sim->cols;
    const size_t n = (size_t)rows * (size_t)cols;
    if (steps < 0)
        return lk_fail(err, "serial: %d steps: the number of steps must be >= 0", steps);
    /* Border outflows are read by the width update but never written: they stay zero. */
    double *Sf = calloc(4 * n, sizeof *Sf);
    if (!Sf)
        return lk_fail(err, "serial: out of memory for the outflows (%.1f MiB)",
                       4 * n * sizeof(double) / 1048576.0);
    memcpy(h, sim->h0, n * sizeof *h);
    double left = 0.0;
    for (int s = 0; s < steps; s++) {
        reset_flows(rows, cols, Sf);
        compute_flows(rows, cols, sim->z, h, Sf);
        if (lost && rows >= 3 && cols >= 3)
            left += border_outflow(rows, cols, Sf);
        update_width(rows, cols, h, Sf);
    }
    free(Sf);
    if (lost)
        *lost = left;
    return 0;
}
