// Lab 03, given (read-only): the device-resident time loop that calls your lab03_step(),
// and the global-memory step kernel that `--variant global` and `--bench` compare you with.
// Neither keeps the ghost layer up to date: the step reads the walls through
// swe_cell_walled(), as your kernel must when its halo crosses the domain's edge.

#include "given.h"
#include "labkit/cuda_check.h"
#include "swe/swe.h"

// The global-memory step: thread (x, y) of the grid updates interior cell (1 + y, 1 + x).
static __global__ void lf_step_global(int rows, int cols, double r,
                                      const double *__restrict__ Z,
                                      const double *__restrict__ Qx,
                                      const double *__restrict__ Qy, double *__restrict__ Zn,
                                      double *__restrict__ Qxn, double *__restrict__ Qyn)
{
    int j = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i > rows || j > cols)
        return;
    swe_q q = swe_update(swe_cell_walled(i - 1, j, rows, cols, Z, Qx, Qy),
                               swe_cell_walled(i + 1, j, rows, cols, Z, Qx, Qy),
                               swe_cell_walled(i, j - 1, rows, cols, Z, Qx, Qy),
                               swe_cell_walled(i, j + 1, rows, cols, Z, Qx, Qy), r);
    swe_store(Zn, Qxn, Qyn, swe_at(i, j, cols + 2), q);
}

static int step_global(int rows, int cols, double r, swe_fields cur, swe_fields next,
                       int block_x, int block_y, lk_error *err)
{
    dim3 block(block_x, block_y);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    lf_step_global<<<grid, block>>>(rows, cols, r, cur.Z, cur.Qx, cur.Qy, next.Z, next.Qx,
                                    next.Qy);
    LK_LAUNCH_TRY(err);
    return 0;
}

typedef int (*step_fn)(int rows, int cols, double r, swe_fields cur, swe_fields next,
                       int block_x, int block_y, lk_error *err);

static int run_on_device(const swe *sim, int steps, const swe_fields *out,
                         int block_x, int block_y, step_fn step, double **d, lk_error *err)
{
    const size_t bytes = swe_cells(sim) * sizeof(double);
    const double *initial[3] = {sim->q.Z, sim->q.Qx, sim->q.Qy};
    for (int k = 0; k < 6; k++)
        LK_CUDA_TRY(err, cudaMalloc(&d[k], bytes));
    for (int k = 0; k < 3; k++)
        LK_CUDA_TRY(err, cudaMemcpy(d[k], initial[k], bytes, cudaMemcpyHostToDevice));
    swe_fields cur = {d[0], d[1], d[2]}, next = {d[3], d[4], d[5]};
    for (int s = 0; s < steps; s++) {
        if (step(sim->rows, sim->cols, swe_r(sim), cur, next, block_x, block_y, err) != 0)
            return -1;
        swe_fields t = cur;
        cur = next;
        next = t;
    }
    double *final[3] = {out->Z, out->Qx, out->Qy};
    const double *last[3] = {cur.Z, cur.Qx, cur.Qy};
    for (int k = 0; k < 3; k++)
        LK_CUDA_TRY(err, cudaMemcpy(final[k], last[k], bytes, cudaMemcpyDeviceToHost));
    return 0;
}

static int run(const swe *sim, int steps, const swe_fields *out, int block_x, int block_y,
               step_fn step, lk_error *err)
{
    double *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = run_on_device(sim, steps, out, block_x, block_y, step, d, err);
    for (int k = 0; k < 6; k++)
        cudaFree(d[k]);
    return rc;
}

extern "C" int lab03_gpu_run(const swe *sim, int steps, const swe_fields *out,
                             int block_x, int block_y, lk_error *err)
{
    return run(sim, steps, out, block_x, block_y, lab03_step, err);
}

extern "C" int lab03_global_run(const swe *sim, int steps, const swe_fields *out,
                                int block_x, int block_y, lk_error *err)
{
    return run(sim, steps, out, block_x, block_y, step_global, err);
}
