// Example submission "cpu-fallback": right results without the GPU. lab01_gpu_run copies
// nothing to the device and runs the serial algorithm, ported by hand, on the host: correct
// on every small dataset, hundreds of times slower than a GPU kernel on the large one.

#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "sciddicat/sciddicat.h"

// The flows of serial.c (minimisation of differences), ported by hand in the serial order.
static void cell_flows(int i, int j, int rows, int cols, const double *z,
                                  const double *h, double *Sf, double p_r, double p_epsilon)
{
    double u[5];
    const double m = h[sciddicat_at(i, j, cols)] - p_epsilon;
    u[0] = z[sciddicat_at(i, j, cols)] + p_epsilon;
    u[1] = z[sciddicat_at(i - 1, j, cols)] + h[sciddicat_at(i - 1, j, cols)];
    u[2] = z[sciddicat_at(i, j - 1, cols)] + h[sciddicat_at(i, j - 1, cols)];
    u[3] = z[sciddicat_at(i, j + 1, cols)] + h[sciddicat_at(i, j + 1, cols)];
    u[4] = z[sciddicat_at(i + 1, j, cols)] + h[sciddicat_at(i + 1, j, cols)];
    unsigned gone = 0;
    double average;
    int again;
    do {
        again = 0;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!(gone & (1u << n))) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !(gone & (1u << n))) {
                gone |= 1u << n;
                again = 1;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!(gone & (1u << (k + 1))))
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = (average - u[k + 1]) * p_r;
}

// The width update of serial.c, ported by hand: inflows minus outflows, in the order North,
// West, East, South (the order of the additions is the reference's).
static double new_width(int i, int j, int rows, int cols, const double *h,
                                   const double *Sf)
{
    double t = h[sciddicat_at(i, j, cols)];
    const size_t layer = (size_t)rows * cols, c = sciddicat_at(i, j, cols);
    t += Sf[3 * layer + c - cols] - Sf[0 * layer + c];
    t += Sf[2 * layer + c - 1] - Sf[1 * layer + c];
    t += Sf[1 * layer + c + 1] - Sf[2 * layer + c];
    t += Sf[0 * layer + c + cols] - Sf[3 * layer + c];
    return t;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    (void)block_x;
    (void)block_y;
    const size_t cells = (size_t)rows * cols;
    double *Sf = (double *)calloc(4 * cells, sizeof(double));
    if (!Sf)
        return lk_fail(err, "cpu-fallback: out of memory");
    memcpy(h_out, h_in, cells * sizeof(double));
    for (int s = 0; s < steps && rows > 2 && cols > 2; s++) {
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                for (int k = 0; k < 4; k++)
                    Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                cell_flows(i, j, rows, cols, z, h_out, Sf, SCIDDICAT_P_R,
                           SCIDDICAT_P_EPSILON);
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < cols - 1; j++)
                h_out[sciddicat_at(i, j, cols)] = new_width(i, j, rows, cols, h_out, Sf);
    }
    free(Sf);
    return 0;
}
