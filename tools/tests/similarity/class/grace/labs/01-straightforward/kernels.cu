// Lab 01 - grace
// every thread gets one cell of the whole grid
#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"

// error check
#define CHECK(call)                                                                       \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      lk_fail(err, "kernels.cu:%d: %s: %s", __LINE__, #call, cudaGetErrorString(e_)); \
      goto fail;                                                                 \
    }                                                                                 \
  } while (0)

__device__ static int next_to(int idx, int side, int ncols)
{
  switch (side) {
  case 1: return idx - ncols; // north
  case 2: return idx - 1;     // west
  case 3: return idx + 1;     // east
  case 4: return idx + ncols; // south
  default: return idx;
  }
}

__device__ static bool is_edge(int idx, int nrows, int ncols)
{
  int r = idx / ncols, c = idx % ncols;
  return r == 0 || c == 0 || r == nrows - 1 || c == ncols - 1;
}

__global__ void phase_reset(double *outflow, int nrows, int ncols)
{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int ncells = nrows * ncols;
  if (idx >= ncells || is_edge(idx, nrows, ncols))
    return;
  for (int d = 0; d < 4; d++)
    outflow[d * ncells + idx] = 0.0;
}

__global__ void phase_flows(double *outflow, const double *alt, const double *thick, int nrows,
              int ncols)
{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int ncells = nrows * ncols;
  if (idx >= ncells || is_edge(idx, nrows, ncols))
    return;
  double val[5];
  char keep[5];
  for (int d = 0; d < 5; d++) {
    int nb = next_to(idx, d, ncols);
    val[d] = d == 0 ? alt[nb] + SCIDDICAT_P_EPSILON : alt[nb] + thick[nb];
    keep[d] = 1;
  }
  double avg = 0.0;
  for (;;) {
    int n_in = 0;
    avg = thick[idx] - SCIDDICAT_P_EPSILON;
    for (int d = 0; d < 5; d++)
      if (keep[d]) {
        avg += val[d];
        n_in++;
      }
    if (n_in != 0)
      avg /= n_in;
    int n_out = 0;
    for (int d = 0; d < 5; d++)
      if (keep[d] && avg <= val[d]) {
        keep[d] = 0;
        n_out++;
      }
    if (n_out == 0)
      break;
  }
  for (int d = 1; d < 5; d++)
    if (keep[d])
      outflow[(d - 1) * ncells + idx] = (avg - val[d]) * SCIDDICAT_P_R;
}

__global__ void phase_balance(double *thick, const double *outflow, int nrows, int ncols)
{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int ncells = nrows * ncols;
  if (idx >= ncells || is_edge(idx, nrows, ncols))
    return;
  double sum = thick[idx];
  for (int d = 1; d < 5; d++) {
    int nb = next_to(idx, d, ncols);
    sum += outflow[(4 - d) * ncells + nb] - outflow[(d - 1) * ncells + idx];
  }
  thick[idx] = sum;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
               double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
  const int ncells = rows * cols;
  const int block_sz = block_x * block_y;
  const int grid_sz = (ncells + block_sz - 1) / block_sz;
  double *alt = NULL, *thick = NULL, *outflow = NULL;
  int ret = -1;
  CHECK(cudaMalloc((void **)&alt, ncells * sizeof(double)));
  CHECK(cudaMalloc((void **)&thick, ncells * sizeof(double)));
  CHECK(cudaMalloc((void **)&outflow, 4 * ncells * sizeof(double)));
  CHECK(cudaMemset(outflow, 0, 4 * ncells * sizeof(double)));
  CHECK(cudaMemcpy(alt, z, ncells * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(thick, h_in, ncells * sizeof(double), cudaMemcpyHostToDevice));
  for (int it = 0; it < steps; it++) {
    phase_reset<<<grid_sz, block_sz>>>(outflow, rows, cols);
    CHECK(cudaGetLastError());
    phase_flows<<<grid_sz, block_sz>>>(outflow, alt, thick, rows, cols);
    CHECK(cudaGetLastError());
    phase_balance<<<grid_sz, block_sz>>>(thick, outflow, rows, cols);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaMemcpy(h_out, thick, ncells * sizeof(double), cudaMemcpyDeviceToHost));
  ret = 0;
fail:
  cudaFree(alt);
  cudaFree(thick);
  cudaFree(outflow);
  return ret;
}
