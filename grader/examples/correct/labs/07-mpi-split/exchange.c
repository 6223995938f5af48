/* Lab 07, exchange.c: the halo exchange as two shifts with MPI_Sendrecv (the first rows
   shift up while the rows from below arrive, then the last rows shift down while the rows
   from above arrive), and the gather in units of whole rows (an MPI row datatype).
   halo_begin only starts the staging copies on the halo stream; halo_end runs the two
   shifts, so on the GPU the overlap variant's inner rows compute while MPI moves the rows. */
#include <stdlib.h>

#include "lab.h"
#include "labkit/cuda_check.h"

enum { SHIFT_UP = 21, SHIFT_DOWN = 22 }; /* the tag is the direction the rows travel */

/* Local row l of h. */
static double *h_row(const lab07_slab *s, int l) { return s->h + (size_t)l * s->cols; }

static int mpi_ok(int code, const char *what, lk_error *err)
{
    if (code == MPI_SUCCESS)
        return 1;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    lk_fail(err, "%s: %s", what, text);
    return 0;
}

static int staged(const lab07_slab *s) { return s->device && !s->cuda_aware; }

int lab07_halo_begin(lab07_slab *s, lk_error *err)
{
    s->nreq = 0; /* nothing is left pending between begin and end */
    if (!staged(s))
        return 0;
    const size_t bytes = (size_t)LAB07_GHOST * s->cols * sizeof(double);
    if (s->up != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(s->send_up, h_row(s, LAB07_GHOST), bytes,
                                         cudaMemcpyDeviceToHost, s->halo));
    if (s->down != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(s->send_down, h_row(s, s->nrows), bytes,
                                         cudaMemcpyDeviceToHost, s->halo));
    return 0;
}

int lab07_halo_end(lab07_slab *s, lk_error *err)
{
    const int count = LAB07_GHOST * s->cols;
    const size_t bytes = (size_t)count * sizeof(double);
    const int staging = staged(s);
    /* The rows to send (or their staged copies) are complete once the halo stream is. */
    if (s->device)
        LK_CUDA_TRY(err, cudaStreamSynchronize(s->halo));
    double *first = staging ? s->send_up : h_row(s, LAB07_GHOST);
    double *last = staging ? s->send_down : h_row(s, s->nrows);
    double *ghost_top = staging ? s->recv_up : h_row(s, 0);
    double *ghost_bottom = staging ? s->recv_down : h_row(s, LAB07_GHOST + s->nrows);
    if (!mpi_ok(MPI_Sendrecv(first, count, MPI_DOUBLE, s->up, SHIFT_UP, ghost_bottom, count,
                             MPI_DOUBLE, s->down, SHIFT_UP, s->comm, MPI_STATUS_IGNORE),
                "MPI_Sendrecv (first rows up, ghost rows from below)", err) ||
        !mpi_ok(MPI_Sendrecv(last, count, MPI_DOUBLE, s->down, SHIFT_DOWN, ghost_top, count,
                             MPI_DOUBLE, s->up, SHIFT_DOWN, s->comm, MPI_STATUS_IGNORE),
                "MPI_Sendrecv (last rows down, ghost rows from above)", err))
        return -1;
    if (!staging)
        return 0;
    if (s->up != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(h_row(s, 0), s->recv_up, bytes,
                                         cudaMemcpyHostToDevice, s->halo));
    if (s->down != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(h_row(s, LAB07_GHOST + s->nrows), s->recv_down, bytes,
                                         cudaMemcpyHostToDevice, s->halo));
    LK_CUDA_TRY(err, cudaStreamSynchronize(s->halo));
    return 0;
}

/* Counts and displacements in rows: rank 0 receives whole rows of `cols` doubles. */
int lab07_gather(lab07_slab *s, double *h_root, lk_error *err)
{
    int *counts = NULL, *displs = NULL;
    if (s->rank == 0) {
        counts = malloc(2 * (size_t)s->nranks * sizeof *counts);
        if (!counts)
            return lk_fail(err, "lab07_gather: out of memory for %d ranks' counts", s->nranks);
        displs = counts + s->nranks;
        for (int r = 0; r < s->nranks; r++)
            lab07_decompose(s->rows, s->nranks, r, &displs[r], &counts[r]);
    }
    const double *mine = h_row(s, LAB07_GHOST);
    int ok = 1;
    if (s->device) {
        /* The last step's kernels may still run on either stream. */
        cudaError_t code = cudaDeviceSynchronize();
        if (code == cudaSuccess && staged(s) && s->nrows > 0) {
            code = cudaMemcpy(s->gather_buf, mine, (size_t)s->nrows * s->cols * sizeof(double),
                              cudaMemcpyDeviceToHost);
            mine = s->gather_buf;
        }
        if (code != cudaSuccess) {
            free(counts);
            return lk_fail(err, "lab07_gather: the slab's rows could not be read back: %s",
                           cudaGetErrorString(code));
        }
    }
    MPI_Datatype grid_row;
    ok = mpi_ok(MPI_Type_contiguous(s->cols, MPI_DOUBLE, &grid_row), "MPI_Type_contiguous",
                err);
    if (ok) {
        ok = mpi_ok(MPI_Type_commit(&grid_row), "MPI_Type_commit", err) &&
             mpi_ok(MPI_Gatherv(mine, s->nrows, grid_row, h_root, counts, displs, grid_row, 0,
                                s->comm),
                    "MPI_Gatherv of the slabs' rows", err);
        MPI_Type_free(&grid_row);
    }
    free(counts);
    return ok ? 0 : -1;
}
