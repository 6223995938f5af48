/* Lab 07, given (read-only): the MPI side of the driver (ranks, GPUs, the command rank 0
   sends the others for each run), the split, the buffers, the time loop that calls your
   exchange.c and kernels.cu, and the CPU back end of the per-rank step. */
#ifndef LAB07_GIVEN_H
#define LAB07_GIVEN_H

#include "lab.h"
#include "labkit/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The variants `--variant` names. */
typedef enum lab07_variant {
    LAB07_SYNC = 0,        /**< GPU: exchange, then the whole step. */
    LAB07_OVERLAP = 1,     /**< GPU: inner rows computed while the ghost rows travel. */
    LAB07_CPU = 2,         /**< CPU back end, the sync loop: your exchange.c without a GPU. */
    LAB07_CPU_OVERLAP = 3  /**< CPU back end, the overlap loop. */
} lab07_variant;

/** Number of variants. */
#define LAB07_NVARIANTS 4

/** The variants, in lab07_variant order (the CPU ones marked cpu: no GPU needed). */
extern const lk_variant lab07_variants[LAB07_NVARIANTS + 1];

/** Parse a variant name ("" means the first, sync). */
int lab07_variant_parse(const char *name, lab07_variant *out, lk_error *err);

/** This process in the MPI job. */
typedef struct lab07_world {
    int rank;        /**< Rank in MPI_COMM_WORLD. */
    int nranks;      /**< Ranks in MPI_COMM_WORLD. */
    int local_rank;  /**< Rank among the ranks of this node. */
    int local_ranks; /**< Ranks on this node. */
    int gpus;        /**< CUDA devices this process sees (0: none). */
    int gpu;         /**< The device of this rank, local_rank % gpus (-1: none). */
    int cuda_aware;  /**< MPI takes device pointers: built with CUDA and its support on. */
    int launched;    /**< Started by mpirun (or another MPI launcher), not alone. */
    int mpi_started; /**< MPI_Init was called. */
    const char *prog; /**< argv[0], for messages. */
} lab07_world;

/** What the runs of a variant cost, for `--bench` (rank 0): per run with steps > 0, the
    slowest rank's times per step. */
typedef struct lab07_step_stats {
    double step_ms[64];     /**< The time loop (from a barrier after the set-up to the end of
                                 the last step, before the gather) per step. */
    double exchange_ms[64]; /**< Time in lab07_halo_begin and lab07_halo_end per step. */
    int steps[64];          /**< Steps of the run. */
    int n;                  /**< Runs recorded. */
} lab07_step_stats;

/**
 * Under mpirun: MPI_Init, this rank's place on its node, its GPU (local rank modulo the GPUs
 * it sees; several ranks may share one) and whether MPI is CUDA-aware. Started alone, the
 * program is rank 0 of 1 and starts MPI only when it is about to run (lab07_describe):
 * Open MPI starts a lone process by forking a daemon, which `-h`, bad options and bad input
 * do not need. Returns 0 or -1 (message printed: MPI could not start).
 */
int lab07_world_start(int *argc, char ***argv, lab07_world *w);

/** Ranks other than 0: run what rank 0 asks until it says stop; returns the exit status. */
int lab07_serve(lab07_world *w);

/** Rank 0: tell the other ranks to stop, MPI_Finalize; returns @p status. */
int lab07_world_end(lab07_world *w, int status);

/**
 * Rank 0: one run on every rank, collective: split the grid of @p sim, send each rank its
 * slab, @p steps steps of @p variant, gather the thickness into @p h_out. A failure on any
 * rank of a job of several ranks ends the job (MPI_Abort) with that rank's message, as a
 * rank waiting for a neighbour that failed would otherwise wait for ever.
 */
int lab07_run(lab07_world *w, const sciddicat *sim, double *h_out, int steps,
              lab07_variant variant, int block_x, int block_y, lk_error *err);

/** Rank 0: the times recorded for @p variant. */
const lab07_step_stats *lab07_stats_of(lab07_variant variant);

/** Rank 0, once the input is loaded: start MPI if it is not yet (a lone process whose GPU
    code will run), and say in the run's summary line (run->details) how many ranks, on which
    GPUs, and how MPI moves device data. */
void lab07_describe(lab07_world *w, lk_run *run);

/** Rank 0, `--bench`: ranks, GPUs, MPI path, and the time loop's and the exchange's time
    per step of each variant run, with one `lab07-bench` line each for scaling.sh. */
void lab07_bench_report(const lab07_world *w, const lk_run *run);

/**
 * The CPU back end of the per-rank step (same contract as lab07_gpu_flows and
 * lab07_gpu_width): the shared cell functions of sciddicat/sciddicat.h on host memory.
 */
void lab07_cpu_flows(const lab07_slab *s, int row_begin, int row_end);
/** CPU back end of the width update (see lab07_cpu_flows). */
void lab07_cpu_width(const lab07_slab *s, int row_begin, int row_end);

#ifdef __cplusplus
}
#endif
#endif
