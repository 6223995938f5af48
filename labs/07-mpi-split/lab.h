/**
 * @file labs/07-mpi-split/lab.h
 * @brief Lab 07 contract between the harness and your `kernels.cu` and `exchange.c`
 * (read-only).
 *
 * The grid's rows are split over the MPI ranks: each rank owns a slab of consecutive rows
 * and keeps LAB07_GHOST ghost rows above and below it, copies of its neighbours' edge rows.
 * The given code (given.c) splits the grid, sends each rank its slab, owns the buffers and
 * runs the time loop; it calls your functions:
 *
 * @code
 *   variant sync, each step:            variant overlap, each step:
 *     lab07_halo_begin  (exchange.c)      lab07_halo_begin          post the exchange
 *     lab07_halo_end    (exchange.c)      flows + width, inner rows (compute stream)
 *     flows, rows first-1 .. last+1       lab07_halo_end            ghost rows arrive
 *     width, rows first .. last           flows + width, edge rows  (halo stream)
 *   after the last step: lab07_gather (exchange.c), every rank's rows into rank 0's grid
 * @endcode
 *
 * "flows" and "width" run your kernels (lab07_gpu_flows, lab07_gpu_width in kernels.cu) for
 * the GPU variants, and the given CPU code for the variants `cpu` and `cpu-overlap`, which
 * run your exchange.c on any machine: the decomposition never changes the arithmetic, so
 * the gathered grid equals the serial reference bit for bit for every number of ranks.
 *
 * Local rows: a slab's arrays have nrows + 2 * LAB07_GHOST rows of cols cells; local row l
 * is global row `first - LAB07_GHOST + l`, so the owned rows are local rows LAB07_GHOST ..
 * LAB07_GHOST + nrows - 1. Outflows: four layers of that size, `Sf[k * lrows * cols + l *
 * cols + j]` with lrows = nrows + 2 * LAB07_GHOST (0 North, 1 West, 2 East, 3 South).
 */
#ifndef LAB07_LAB_H
#define LAB07_LAB_H

#include <mpi.h>
#include <cuda_runtime_api.h>

#include "labkit/error.h"
#include "sciddicat/sciddicat.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Ghost rows above and below each slab: two, so that a rank can compute the outflows of
    its neighbours' edge rows itself and needs one exchange of h per step. */
#define LAB07_GHOST 2
/** Fewest rows a rank owns; ranks beyond rows / LAB07_MIN_ROWS own none (empty ranks). */
#define LAB07_MIN_ROWS LAB07_GHOST

/** One rank's part of the grid, its neighbours and its buffers (filled by given.c). */
typedef struct lab07_slab {
    int rows;      /**< Rows of the whole grid. */
    int cols;      /**< Columns of the whole grid (every slab has them all). */
    int first;     /**< Global row of the first owned row. */
    int nrows;     /**< Owned rows (0: an empty rank, which only takes part in the gather). */
    int lrows;     /**< Rows of the local arrays: nrows + 2 * LAB07_GHOST. */
    int rank;      /**< This rank in comm. */
    int nranks;    /**< Ranks in comm (empty ones included). */
    int up;        /**< Rank owning global row first - 1, or MPI_PROC_NULL. */
    int down;      /**< Rank owning global row first + nrows, or MPI_PROC_NULL. */
    MPI_Comm comm; /**< The communicator of the run (a duplicate of MPI_COMM_WORLD). */
    int device;     /**< 1: z, h, Sf are device memory (GPU variants); 0: host memory. */
    int cuda_aware; /**< 1: MPI accepts device pointers (checked at run time); when device
                         is 1 and this is 0, stage through the pinned buffers below. */
    double *z;     /**< Altitude, lrows x cols, ghost rows filled (it never changes). */
    double *h;     /**< Thickness, lrows x cols; ghost rows hold NaN until you fill them. */
    double *Sf;    /**< Outflows, 4 layers of lrows x cols, zero at the start. */
    /* Pinned host buffers of LAB07_GHOST * cols doubles each for a staged exchange (device
       is 1, cuda_aware 0); NULL otherwise. */
    double *send_up;   /**< Staged: the first owned rows, on their way up. */
    double *send_down; /**< Staged: the last owned rows, on their way down. */
    double *recv_up;   /**< Staged: the rows arriving from the rank above. */
    double *recv_down; /**< Staged: the rows arriving from the rank below. */
    /** Pinned host buffer of nrows * cols doubles for a staged gather; NULL otherwise. */
    double *gather_buf;
    cudaStream_t compute; /**< Stream of the inner rows (low priority; NULL on the CPU). */
    cudaStream_t halo;    /**< Stream of the exchange's copies and the edge rows (high
                               priority; NULL on the CPU). */
    int block_x;   /**< Thread block width for your kernels (`--block WxH`). */
    int block_y;   /**< Thread block height. */
    MPI_Request req[4]; /**< For your non-blocking exchange (lab07_halo_begin/end). */
    int nreq;           /**< Requests in use in req. */
} lab07_slab;

/**
 * The row split: rank @p rank of @p nranks owns rows [*first, *first + *nrows) of a grid of
 * @p rows rows. The active ranks are min(nranks, max(1, rows / LAB07_MIN_ROWS)); each gets
 * rows / active rows, the first rows % active one more; the others own none (their *first
 * is @p rows). Use it for the counts and displacements of your MPI_Gatherv.
 */
void lab07_decompose(int rows, int nranks, int rank, int *first, int *nrows);

/**
 * Clip local rows [@p row_begin, @p row_end) of @p s to those that are interior rows of the
 * whole grid (global rows 1 .. rows - 2): the rows a flows or width call computes. Returns
 * the count, and the clipped range in *begin, *end (empty when the count is 0).
 */
static inline int lab07_interior_rows(const lab07_slab *s, int row_begin, int row_end,
                                      int *begin, int *end)
{
    const int shift = s->first - LAB07_GHOST; /* global row of local row 0 */
    int b = row_begin > 1 - shift ? row_begin : 1 - shift;
    int e = row_end < s->rows - 1 - shift ? row_end : s->rows - 1 - shift;
    if (b < 0)
        b = 0;
    if (e > s->lrows)
        e = s->lrows;
    if (e < b)
        e = b;
    *begin = b;
    *end = e;
    return e - b;
}

/* ---------------------------------------------------------------------------------------
 * exchange.c: the halo exchange and the gather. Return 0, or -1 with @p err filled.
 * ------------------------------------------------------------------------------------- */

/**
 * Start exchanging ghost rows of h: this slab's first LAB07_GHOST owned rows go to @p s->up
 * (into its bottom ghost rows), its last LAB07_GHOST owned rows to @p s->down (into its top
 * ghost rows), and the neighbours' rows come back the same way. Non-blocking (MPI_Isend,
 * MPI_Irecv into s->req); with device memory and no CUDA-aware MPI, copy the rows to send
 * into the pinned buffers on s->halo first. The rows to send are ready once work already
 * queued on s->halo is done (the given loop orders the streams); MPI does not know CUDA
 * streams: synchronise before handing it a buffer.
 */
int lab07_halo_begin(lab07_slab *s, lk_error *err);

/**
 * Finish the exchange lab07_halo_begin started: wait for its requests and, when staged,
 * copy the received rows into the ghost rows of h. When it returns, the ghost rows of h
 * hold the neighbours' rows and any copy into them has completed.
 */
int lab07_halo_end(lab07_slab *s, lk_error *err);

/**
 * Gather every rank's owned rows of h into @p h_root on rank 0 (rows x cols, host memory;
 * NULL on the other ranks) with one MPI_Gatherv over s->comm, empty ranks included. With
 * device memory and no CUDA-aware MPI, stage through s->gather_buf.
 */
int lab07_gather(lab07_slab *s, double *h_root, lk_error *err);

/* ---------------------------------------------------------------------------------------
 * kernels.cu: the per-rank step on the GPU. Launch only (no synchronisation, no copies) on
 * @p stream, check the launch (LK_LAUNCH_TRY), return 0 or -1 with @p err filled. Local rows
 * [row_begin, row_end) may reach into the ghost rows; compute only those of them that are
 * interior cells of the whole grid (global rows 1 .. rows - 2, columns 1 .. cols - 2).
 * ------------------------------------------------------------------------------------- */

/**
 * Reset and flows computation of local rows [row_begin, row_end): zero the four outflows of
 * each interior cell, then the minimisation of differences (sciddicat_flows_cell) from
 * s->z and s->h into s->Sf.
 */
int lab07_gpu_flows(const lab07_slab *s, int row_begin, int row_end, cudaStream_t stream,
                    lk_error *err);

/**
 * Width update of local rows [row_begin, row_end), in place on s->h
 * (sciddicat_width_cell).
 */
int lab07_gpu_width(const lab07_slab *s, int row_begin, int row_end, cudaStream_t stream,
                    lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
