/* Lab 07 solution, exchange.c: the halo exchange of h with the neighbour ranks (non-blocking,
   two ghost rows each way, device pointers when MPI is CUDA-aware, else staged through
   pinned host buffers) and the gather of every rank's rows into rank 0's grid. */
#include <stdlib.h>

#include "lab.h"
#include "labkit/cuda_check.h"

enum { TAG_DOWN = 10, TAG_UP = 11 }; /* direction the rows travel */

/* Local row l of h, and the size of a ghost block. */
static double *row(const lab07_slab *s, int l) { return s->h + (size_t)l * s->cols; }
static size_t edge_bytes(const lab07_slab *s)
{
    return (size_t)LAB07_GHOST * s->cols * sizeof(double);
}

/* MPI calls return an error code only when the communicator's handler returns instead of
   aborting; keep the message for that case. */
static int mpi_try(int code, const char *what, lk_error *err)
{
    if (code == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return lk_fail(err, "%s failed: %s", what, msg);
}

int lab07_halo_begin(lab07_slab *s, lk_error *err)
{
    const int G = LAB07_GHOST, count = G * s->cols;
    const int staged = s->device && !s->cuda_aware;
    /* Top owned rows go up, bottom owned rows go down; ghost rows come back the same way. */
    double *send_up = row(s, G), *send_down = row(s, s->nrows);
    double *recv_up = row(s, 0), *recv_down = row(s, G + s->nrows);
    if (staged) {
        if (s->up != MPI_PROC_NULL)
            LK_CUDA_TRY(err, cudaMemcpyAsync(s->send_up, send_up, edge_bytes(s),
                                             cudaMemcpyDeviceToHost, s->halo));
        if (s->down != MPI_PROC_NULL)
            LK_CUDA_TRY(err, cudaMemcpyAsync(s->send_down, send_down, edge_bytes(s),
                                             cudaMemcpyDeviceToHost, s->halo));
        send_up = s->send_up, send_down = s->send_down;
        recv_up = s->recv_up, recv_down = s->recv_down;
    }
    /* MPI reads the buffers as soon as it is called and knows nothing of streams. */
    if (s->device)
        LK_CUDA_TRY(err, cudaStreamSynchronize(s->halo));
    MPI_Request *r = s->req;
    r[0] = r[1] = r[2] = r[3] = MPI_REQUEST_NULL; /* a failed call leaves nothing to wait for */
    s->nreq = 4;
    if (mpi_try(MPI_Irecv(recv_up, count, MPI_DOUBLE, s->up, TAG_DOWN, s->comm, &r[0]),
                "MPI_Irecv from the rank above", err) ||
        mpi_try(MPI_Irecv(recv_down, count, MPI_DOUBLE, s->down, TAG_UP, s->comm, &r[1]),
                "MPI_Irecv from the rank below", err) ||
        mpi_try(MPI_Isend(send_up, count, MPI_DOUBLE, s->up, TAG_UP, s->comm, &r[2]),
                "MPI_Isend to the rank above", err) ||
        mpi_try(MPI_Isend(send_down, count, MPI_DOUBLE, s->down, TAG_DOWN, s->comm, &r[3]),
                "MPI_Isend to the rank below", err))
        return -1;
    return 0;
}

int lab07_halo_end(lab07_slab *s, lk_error *err)
{
    if (mpi_try(MPI_Waitall(s->nreq, s->req, MPI_STATUSES_IGNORE), "MPI_Waitall", err))
        return -1;
    s->nreq = 0;
    if (!s->device || s->cuda_aware)
        return 0;
    if (s->up != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(row(s, 0), s->recv_up, edge_bytes(s),
                                         cudaMemcpyHostToDevice, s->halo));
    if (s->down != MPI_PROC_NULL)
        LK_CUDA_TRY(err, cudaMemcpyAsync(row(s, LAB07_GHOST + s->nrows), s->recv_down,
                                         edge_bytes(s), cudaMemcpyHostToDevice, s->halo));
    LK_CUDA_TRY(err, cudaStreamSynchronize(s->halo));
    return 0;
}

int lab07_gather(lab07_slab *s, double *h_root, lk_error *err)
{
    const int count = s->nrows * s->cols;
    int *counts = NULL, *displs = NULL;
    if (s->rank == 0) {
        counts = malloc(s->nranks * sizeof *counts);
        displs = malloc(s->nranks * sizeof *displs);
        if (!counts || !displs) {
            free(counts);
            free(displs);
            return lk_fail(err, "out of memory for %d gather counts", s->nranks);
        }
        for (int r = 0; r < s->nranks; r++) {
            int first, n;
            lab07_decompose(s->rows, s->nranks, r, &first, &n);
            counts[r] = n * s->cols;
            displs[r] = first * s->cols;
        }
    }
    const double *send = row(s, LAB07_GHOST);
    if (s->device && !s->cuda_aware && count > 0) {
        if (cudaMemcpy(s->gather_buf, send, (size_t)count * sizeof(double),
                       cudaMemcpyDeviceToHost) != cudaSuccess) {
            free(counts);
            free(displs);
            return lk_fail(err, "cudaMemcpy of the slab into the gather buffer failed: %s",
                           cudaGetErrorString(cudaGetLastError()));
        }
        send = s->gather_buf;
    }
    int rc = mpi_try(MPI_Gatherv(send, count, MPI_DOUBLE, h_root, counts, displs, MPI_DOUBLE,
                                 0, s->comm), "MPI_Gatherv", err);
    free(counts);
    free(displs);
    return rc;
}
