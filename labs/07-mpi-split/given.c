/* Lab 07, given (read-only): ranks and GPUs, the split, the buffers, the time loop that
   calls your exchange.c and kernels.cu, and the CPU back end of the per-rank step. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_Query_cuda_support, where Open MPI was built with it */
#endif
#include <cuda_runtime_api.h>

#include "given.h"
#include "labkit/compare.h"
#include "labkit/cuda_check.h"
#include "labkit/timing.h"

const lk_variant lab07_variants[LAB07_NVARIANTS + 1] = {
    {.name = "sync", .help = ": exchange the ghost rows, then the whole step (default)"},
    {.name = "overlap", .help = ": inner rows computed while the ghost rows travel"},
    {.name = "cpu", .help = ": the sync loop on the CPU back end (no GPU needed)", .cpu = 1},
    {.name = "cpu-overlap", .help = ": the overlap loop on the CPU back end", .cpu = 1},
    {0}};

int lab07_variant_parse(const char *name, lab07_variant *out, lk_error *err)
{
    if (!name || !name[0]) {
        *out = LAB07_SYNC;
        return 0;
    }
    for (int v = 0; v < LAB07_NVARIANTS; v++)
        if (strcmp(name, lab07_variants[v].name) == 0) {
            *out = (lab07_variant)v;
            return 0;
        }
    return lk_fail(err, "--variant %s: unknown variant: use sync, overlap, cpu or cpu-overlap",
                   name);
}

static int on_gpu(lab07_variant v) { return v == LAB07_SYNC || v == LAB07_OVERLAP; }
static int overlapped(lab07_variant v) { return v == LAB07_OVERLAP || v == LAB07_CPU_OVERLAP; }

/* ---- the split ------------------------------------------------------------------------ */

static int active_ranks(int rows, int nranks)
{
    int most = rows / LAB07_MIN_ROWS;
    if (most < 1)
        most = 1;
    return nranks < most ? nranks : most;
}

void lab07_decompose(int rows, int nranks, int rank, int *first, int *nrows)
{
    const int active = active_ranks(rows, nranks);
    if (rank >= active) {
        *first = rows;
        *nrows = 0;
        return;
    }
    const int base = rows / active, extra = rows % active;
    *first = rank * base + (rank < extra ? rank : extra);
    *nrows = base + (rank < extra);
}

/* ---- the CPU back end ----------------------------------------------------------------- */

void lab07_cpu_flows(const lab07_slab *s, int row_begin, int row_end)
{
    int b, e;
    lab07_interior_rows(s, row_begin, row_end, &b, &e);
    for (int l = b; l < e; l++)
        for (int j = 1; j < s->cols - 1; j++) {
            sciddicat_reset_cell(l, j, s->lrows, s->cols, s->Sf);
            sciddicat_flows_cell(l, j, s->lrows, s->cols, s->z, s->h, s->Sf,
                                 SCIDDICAT_P_R, SCIDDICAT_P_EPSILON);
        }
}

void lab07_cpu_width(const lab07_slab *s, int row_begin, int row_end)
{
    int b, e;
    lab07_interior_rows(s, row_begin, row_end, &b, &e);
    for (int l = b; l < e; l++)
        for (int j = 1; j < s->cols - 1; j++)
            s->h[sciddicat_at(l, j, s->cols)] =
                sciddicat_width_cell(l, j, s->lrows, s->cols, s->h, s->Sf);
}

/* Flows or width of local rows [b, e) on the slab's back end; empty ranges do nothing. */
static int flows(const lab07_slab *s, int b, int e, cudaStream_t stream, lk_error *err)
{
    if (e <= b)
        return 0;
    if (!s->device) {
        lab07_cpu_flows(s, b, e);
        return 0;
    }
    return lab07_gpu_flows(s, b, e, stream, err);
}

static int width(const lab07_slab *s, int b, int e, cudaStream_t stream, lk_error *err)
{
    if (e <= b)
        return 0;
    if (!s->device) {
        lab07_cpu_width(s, b, e);
        return 0;
    }
    return lab07_gpu_width(s, b, e, stream, err);
}

/* ---- ranks and GPUs ------------------------------------------------------------------- */

/* The GPU of this process: local rank modulo the GPUs it sees. No GPU is not an error here:
   the CPU variants need none, and the harness says why a GPU variant cannot run. */
static void choose_gpu(lab07_world *w)
{
    if (cudaGetDeviceCount(&w->gpus) != cudaSuccess) {
        w->gpus = 0;
        cudaGetLastError();
    }
    w->gpu = -1;
    if (w->gpus > 0) {
        w->gpu = w->local_rank % w->gpus;
        if (cudaSetDevice(w->gpu) != cudaSuccess) {
            w->gpu = -1;
            cudaGetLastError();
        }
    }
}

#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
/* Whether this run leaves Open MPI's CUDA support on: its control variable opal_cuda_support
   (OMPI_MCA_opal_cuda_support=0 turns it off), read through MPI_T. Open MPI 4's
   MPIX_Query_cuda_support() answers from the build alone, so a run with the support off would
   otherwise pass device pointers to an MPI that treats them as host memory. An MPI without
   the variable (not Open MPI) has no such switch: on. */
static int cuda_support_switched_on(void)
{
    int provided, index, on = 1;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return 1;
    if (MPI_T_cvar_get_index("opal_cuda_support", &index) == MPI_SUCCESS) {
        char name[64], desc[256];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope, count;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        MPI_T_cvar_handle handle;
        if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) == MPI_SUCCESS &&
            MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS) {
            if (type == MPI_C_BOOL) {
                _Bool value = 1;
                if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS)
                    on = value;
            } else if (type == MPI_INT) {
                int value = 1;
                if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS)
                    on = value != 0;
            }
            MPI_T_cvar_handle_free(&handle);
        }
    }
    MPI_T_finalize();
    return on;
}
#endif

static int start_mpi(lab07_world *w, int *argc, char ***argv)
{
    /* Where the launcher says the local rank, the GPU is chosen before MPI_Init, so that a
       CUDA-aware MPI starts with the rank's device current (NVIDIA's advice). */
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (local) {
        w->local_rank = atoi(local);
        choose_gpu(w);
    }
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed: check the Open MPI installation (make doctor)\n",
                w->prog);
        return -1;
    }
    w->mpi_started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w->nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &w->local_rank);
    MPI_Comm_size(node, &w->local_ranks);
    MPI_Comm_free(&node);
    /* The build (the macro is 0 without CUDA), the library and this run's switch must all say
       so: an Open MPI built with CUDA answers 1 even when OMPI_MCA_opal_cuda_support=0. */
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    w->cuda_aware = MPIX_Query_cuda_support() == 1 && cuda_support_switched_on();
#endif
    if (!local || w->gpu != (w->gpus > 0 ? w->local_rank % w->gpus : -1))
        choose_gpu(w);
    return 0;
}

int lab07_world_start(int *argc, char ***argv, lab07_world *w)
{
    memset(w, 0, sizeof *w);
    w->prog = *argc > 0 ? (*argv)[0] : "lab07";
    /* Open MPI's mpirun, PMIx launchers (srun) and MPICH's hydra say so in the environment. */
    w->launched = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
    if (w->launched)
        return start_mpi(w, argc, argv);
    w->nranks = w->local_ranks = 1;
    choose_gpu(w);
    return 0;
}

/* What rank 0 asks the other ranks to do; sent with one MPI_Bcast. */
enum { CMD_STOP = 0, CMD_RUN = 1 };
typedef struct command {
    int op, rows, cols, steps, variant, block_x, block_y;
} command;
#define COMMAND_INTS ((int)(sizeof(command) / sizeof(int)))

static lab07_step_stats step_stats[LAB07_NVARIANTS];

const lab07_step_stats *lab07_stats_of(lab07_variant variant)
{
    return &step_stats[variant];
}

/* Like LK_CUDA_TRY, but leaves through the cleanup of rank_run. */
#define CUDA_GO(call)                                                                       \
    do {                                                                                    \
        cudaError_t code_ = (call);                                                         \
        if (code_ != cudaSuccess) {                                                         \
            lk_cuda_fail(err, code_, #call, __FILE__, __LINE__);                            \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

/* A function of yours that fails must say why. */
static int student_call(int rc, const char *what, lk_error *err)
{
    if (rc == 0)
        return 0;
    if (!err->msg[0])
        lk_fail(err, "%s returned %d without a message: fill err (LK_CUDA_TRY, "
                     "LK_LAUNCH_TRY, lk_fail)", what, rc);
    return -1;
}
#define STUDENT_GO(call)                                                                    \
    do {                                                                                    \
        if (student_call((call), #call, err) != 0)                                          \
            goto done;                                                                      \
    } while (0)

/* Rank 0 sends every rank its rows: z with its ghost rows (z never changes), h without
   (the ghost rows of h stay NaN until your exchange fills them). MPI's default error
   handler ends the job on a failed send. */
static void distribute(const lab07_slab *s, const sciddicat *sim, double *z, double *h)
{
    const int G = LAB07_GHOST, cols = s->cols;
    for (int r = 0; r < s->nranks; r++) {
        int first, n;
        lab07_decompose(s->rows, s->nranks, r, &first, &n);
        if (n == 0 || (s->rank != 0 && r != s->rank))
            continue;
        const int z0 = first - G > 0 ? first - G : 0;
        const int z1 = first + n + G < s->rows ? first + n + G : s->rows;
        if (s->rank == 0 && r == 0) {
            memcpy(z + (size_t)(z0 - first + G) * cols, sim->z + (size_t)z0 * cols,
                   (size_t)(z1 - z0) * cols * sizeof *z);
            memcpy(h + (size_t)G * cols, sim->h0 + (size_t)first * cols,
                   (size_t)n * cols * sizeof *h);
        } else if (s->rank == 0) {
            MPI_Send(sim->z + (size_t)z0 * cols, (z1 - z0) * cols, MPI_DOUBLE, r, 1, s->comm);
            MPI_Send(sim->h0 + (size_t)first * cols, n * cols, MPI_DOUBLE, r, 2, s->comm);
        } else {
            MPI_Recv(z + (size_t)(z0 - first + G) * cols, (z1 - z0) * cols, MPI_DOUBLE, 0, 1,
                     s->comm, MPI_STATUS_IGNORE);
            MPI_Recv(h + (size_t)G * cols, n * cols, MPI_DOUBLE, 0, 2, s->comm,
                     MPI_STATUS_IGNORE);
        }
    }
}

/* One run on this rank: slab, buffers, steps, gather. times[0]: seconds of the time loop,
   times[1]: of them, in your lab07_halo_begin and lab07_halo_end. */
static int rank_run(const lab07_world *w, const command *cmd, const sciddicat *sim,
                    double *h_out, double times[2], lk_error *err)
{
    const int G = LAB07_GHOST;
    const lab07_variant variant = (lab07_variant)cmd->variant;
    lab07_slab s;
    memset(&s, 0, sizeof s);
    s.rows = cmd->rows;
    s.cols = cmd->cols;
    s.rank = w->rank;
    s.nranks = w->nranks;
    lab07_decompose(s.rows, s.nranks, s.rank, &s.first, &s.nrows);
    s.lrows = s.nrows + 2 * G;
    const int active = active_ranks(s.rows, s.nranks);
    s.up = s.rank > 0 && s.rank < active ? s.rank - 1 : MPI_PROC_NULL;
    s.down = s.rank < active - 1 ? s.rank + 1 : MPI_PROC_NULL;
    s.device = on_gpu(variant);
    s.cuda_aware = s.device && w->cuda_aware;
    s.block_x = cmd->block_x;
    s.block_y = cmd->block_y;
    double *exchange_s = &times[1];
    times[0] = times[1] = 0.0;

    const size_t n = (size_t)s.lrows * s.cols, bytes = n * sizeof(double);
    double *hz = NULL, *hh = NULL, *hSf = NULL;
    cudaEvent_t flows_done = NULL, halo_done = NULL;
    int rc = -1, comm_made = 0;
    if ((size_t)s.rows * s.cols > INT_MAX) {
        lk_fail(err, "%d x %d cells: more than MPI's int counts hold in one message: use a "
                     "grid of at most %d cells", s.rows, s.cols, INT_MAX);
        goto done;
    }
    if (s.device && w->gpu < 0) {
        lk_fail(err, "rank %d sees no GPU: run the cpu variants, or on a machine with one",
                s.rank);
        goto done;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &s.comm);
    comm_made = 1;
    hz = malloc(bytes);
    hh = malloc(bytes);
    if (!hz || !hh) {
        lk_fail(err, "out of memory for a slab of %d x %d cells", s.lrows, s.cols);
        goto done;
    }
    lk_poison(hz, n);
    lk_poison(hh, n);
    distribute(&s, sim, hz, hh);

    if (s.device) {
        CUDA_GO(cudaMalloc((void **)&s.z, bytes));
        CUDA_GO(cudaMalloc((void **)&s.h, bytes));
        CUDA_GO(cudaMalloc((void **)&s.Sf, SCIDDICAT_NFLOWS * bytes));
        CUDA_GO(cudaMemcpy(s.z, hz, bytes, cudaMemcpyHostToDevice));
        CUDA_GO(cudaMemcpy(s.h, hh, bytes, cudaMemcpyHostToDevice));
        /* Border outflows are read but never written: zero, as in serial.c. */
        CUDA_GO(cudaMemset(s.Sf, 0, SCIDDICAT_NFLOWS * bytes));
        int least, greatest; /* numerically: greatest priority is the lowest number */
        CUDA_GO(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        CUDA_GO(cudaStreamCreateWithPriority(&s.compute, cudaStreamNonBlocking, least));
        CUDA_GO(cudaStreamCreateWithPriority(&s.halo, cudaStreamNonBlocking, greatest));
        CUDA_GO(cudaEventCreateWithFlags(&flows_done, cudaEventDisableTiming));
        CUDA_GO(cudaEventCreateWithFlags(&halo_done, cudaEventDisableTiming));
        if (!s.cuda_aware) {
            const size_t edge = (size_t)G * s.cols * sizeof(double);
            CUDA_GO(cudaMallocHost((void **)&s.send_up, edge));
            CUDA_GO(cudaMallocHost((void **)&s.send_down, edge));
            CUDA_GO(cudaMallocHost((void **)&s.recv_up, edge));
            CUDA_GO(cudaMallocHost((void **)&s.recv_down, edge));
            CUDA_GO(cudaMallocHost((void **)&s.gather_buf,
                                   (s.nrows > 0 ? (size_t)s.nrows : 1) * s.cols * sizeof(double)));
        }
        CUDA_GO(cudaDeviceSynchronize());
    } else {
        hSf = calloc(SCIDDICAT_NFLOWS * n, sizeof *hSf);
        if (!hSf) {
            lk_fail(err, "out of memory for the outflows of a slab of %d x %d cells", s.lrows,
                    s.cols);
            goto done;
        }
        s.z = hz;
        s.h = hh;
        s.Sf = hSf;
    }

    /* Owned rows are local [a, b); the outflows of one ghost row on each side are computed
       here too (from the two ghost rows of h), so one exchange per step is enough. */
    const int a = G, b = G + s.nrows;
    MPI_Barrier(s.comm);
    const double loop_t0 = lk_wall_seconds();
    for (int step = 0; step < cmd->steps && s.nrows > 0; step++) {
        if (!overlapped(variant)) {
            if (s.device)
                CUDA_GO(cudaStreamSynchronize(s.compute));
            double t0 = lk_wall_seconds();
            STUDENT_GO(lab07_halo_begin(&s, err));
            STUDENT_GO(lab07_halo_end(&s, err));
            *exchange_s += lk_wall_seconds() - t0;
            STUDENT_GO(flows(&s, a - 1, b + 1, s.compute, err));
            STUDENT_GO(width(&s, a, b, s.compute, err));
            continue;
        }
        /* Overlap: the edge rows (two on each side) belong to the halo stream, the inner rows
           to the compute stream; events order what one reads and the other writes. */
        double t0 = lk_wall_seconds();
        STUDENT_GO(lab07_halo_begin(&s, err));
        *exchange_s += lk_wall_seconds() - t0;
        if (s.device && step > 0)
            CUDA_GO(cudaStreamWaitEvent(s.compute, halo_done, 0));
        STUDENT_GO(flows(&s, a + 1, b - 1, s.compute, err));
        if (s.device)
            CUDA_GO(cudaEventRecord(flows_done, s.compute));
        STUDENT_GO(width(&s, a + 2, b - 2, s.compute, err));
        t0 = lk_wall_seconds();
        STUDENT_GO(lab07_halo_end(&s, err));
        *exchange_s += lk_wall_seconds() - t0;
        const int top = a + 1 < b + 1 ? a + 1 : b + 1, bottom = b - 1 > a + 1 ? b - 1 : a + 1;
        STUDENT_GO(flows(&s, a - 1, top, s.halo, err));
        STUDENT_GO(flows(&s, bottom, b + 1, s.halo, err));
        /* The edge rows' width needs the outflows of the first inner rows. */
        if (s.device)
            CUDA_GO(cudaStreamWaitEvent(s.halo, flows_done, 0));
        const int wtop = a + 2 < b ? a + 2 : b, wbottom = b - 2 > a + 2 ? b - 2 : a + 2;
        STUDENT_GO(width(&s, a, wtop, s.halo, err));
        STUDENT_GO(width(&s, wbottom, b, s.halo, err));
        if (s.device)
            CUDA_GO(cudaEventRecord(halo_done, s.halo));
    }
    /* Errors inside the kernels (an out-of-bounds access) surface here. */
    if (s.device)
        CUDA_GO(cudaDeviceSynchronize());
    times[0] = lk_wall_seconds() - loop_t0;
    STUDENT_GO(lab07_gather(&s, h_out, err));
    if (s.device)
        CUDA_GO(cudaDeviceSynchronize());
    rc = 0;
done:
    if (s.device) {
        /* After a kernel fault every call fails: keep the first message, free what we can. */
        if (s.compute)
            cudaStreamDestroy(s.compute);
        if (s.halo)
            cudaStreamDestroy(s.halo);
        if (flows_done)
            cudaEventDestroy(flows_done);
        if (halo_done)
            cudaEventDestroy(halo_done);
        cudaFree(s.z);
        cudaFree(s.h);
        cudaFree(s.Sf);
        cudaFreeHost(s.send_up);
        cudaFreeHost(s.send_down);
        cudaFreeHost(s.recv_up);
        cudaFreeHost(s.recv_down);
        cudaFreeHost(s.gather_buf);
    }
    free(hz);
    free(hh);
    free(hSf);
    if (comm_made)
        MPI_Comm_free(&s.comm);
    return rc;
}

/* A failed rank in a job of several cannot tell the others, which may wait for it in an
   exchange: end the whole job with its message. */
static void end_job_if_failed(const lab07_world *w, int rc, const lk_error *err)
{
    if (rc == 0 || w->nranks == 1)
        return;
    fprintf(stderr, "%s: rank %d of %d: %s\n", w->prog, w->rank, w->nranks, err->msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* After a run, the slowest rank's times go to rank 0. */
static void slowest(const double times[2], double most[2])
{
    MPI_Reduce(times, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
}

int lab07_run(lab07_world *w, const sciddicat *sim, double *h_out, int steps,
              lab07_variant variant, int block_x, int block_y, lk_error *err)
{
    lk_error_clear(err);
    if (!w->mpi_started && start_mpi(w, NULL, NULL) != 0)
        return lk_fail(err, "MPI_Init failed: check the Open MPI installation (make doctor)");
    command cmd = {CMD_RUN, sim->rows, sim->cols, steps, (int)variant, block_x, block_y};
    MPI_Bcast(&cmd, COMMAND_INTS, MPI_INT, 0, MPI_COMM_WORLD);
    double times[2], most[2];
    int rc = rank_run(w, &cmd, sim, h_out, times, err);
    end_job_if_failed(w, rc, err);
    slowest(times, most);
    lab07_step_stats *st = &step_stats[variant];
    if (rc == 0 && steps > 0 && st->n < (int)(sizeof st->step_ms / sizeof(double))) {
        st->step_ms[st->n] = most[0] * 1e3 / steps;
        st->exchange_ms[st->n] = most[1] * 1e3 / steps;
        st->steps[st->n++] = steps;
    }
    return rc;
}

int lab07_serve(lab07_world *w)
{
    for (;;) {
        command cmd;
        MPI_Bcast(&cmd, COMMAND_INTS, MPI_INT, 0, MPI_COMM_WORLD);
        if (cmd.op == CMD_STOP)
            break;
        lk_error err;
        lk_error_clear(&err);
        double times[2], most[2];
        int rc = rank_run(w, &cmd, NULL, NULL, times, &err);
        end_job_if_failed(w, rc, &err);
        slowest(times, most);
    }
    MPI_Finalize();
    return 0;
}

int lab07_world_end(lab07_world *w, int status)
{
    if (!w->mpi_started)
        return status;
    if (w->rank == 0) {
        command cmd = {CMD_STOP, 0, 0, 0, 0, 0, 0};
        MPI_Bcast(&cmd, COMMAND_INTS, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return status;
}

static int gpus_used(const lab07_world *w)
{
    return w->gpus < w->nranks ? w->gpus : w->nranks;
}

void lab07_describe(lab07_world *w, lk_run *run)
{
    if (run->status != 0 || !run->opt.gpu)
        return;
    if (!w->mpi_started && start_mpi(w, NULL, NULL) != 0) {
        lk_fail(&run->err, "MPI_Init failed: check the Open MPI installation (make doctor)");
        lk_run_fail(run);
        return;
    }
    lab07_variant v = LAB07_SYNC;
    lk_error ignored;
    lab07_variant_parse(run->opt.variant, &v, &ignored);
    if (!on_gpu(v) && !run->opt.bench)
        snprintf(run->details, sizeof run->details, ", %d rank%s on the CPU", w->nranks,
                 w->nranks == 1 ? "" : "s");
    else
        snprintf(run->details, sizeof run->details, ", %d rank%s on %d GPU%s, MPI %s",
                 w->nranks, w->nranks == 1 ? "" : "s", gpus_used(w), gpus_used(w) == 1 ? "" : "s",
                 w->cuda_aware ? "CUDA-aware (device buffers)"
                               : "not CUDA-aware (staged through pinned host buffers)");
}

static int compare_doubles(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_of(const double *v, int n)
{
    double sorted[64];
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    return sorted[n / 2];
}

void lab07_bench_report(const lab07_world *w, const lk_run *run)
{
    if (!run->opt.bench || run->status != 0)
        return;
    const int used = gpus_used(w);
    printf("  ranks              %d on %d GPU%s (%d on this node; local rank r uses GPU r %% %d)\n",
           w->nranks, used, used == 1 ? "" : "s", w->local_ranks, w->gpus);
    printf("  MPI                %s\n",
           w->cuda_aware ? "CUDA-aware: device buffers passed to MPI"
                         : "not CUDA-aware: staged through pinned host buffers");
    for (int v = 0; v < LAB07_NVARIANTS; v++) {
        /* The timed runs only: the checked run has the serial reference's steps. */
        const lab07_step_stats *all = &step_stats[v];
        lab07_step_stats timed = {.n = 0};
        for (int i = 0; i < all->n; i++)
            if (all->steps[i] == run->steps) {
                timed.step_ms[timed.n] = all->step_ms[i];
                timed.exchange_ms[timed.n++] = all->exchange_ms[i];
            }
        const lab07_step_stats *st = &timed;
        if (st->n == 0)
            continue;
        const double step = median_of(st->step_ms, st->n), exch = median_of(st->exchange_ms, st->n);
        printf("  variant %-10s time loop %.4f ms per step, of which %.4f ms in the exchange "
               "calls (slowest rank, median of %d runs)\n", lab07_variants[v].name, step, exch,
               st->n);
        printf("lab07-bench ranks=%d gpus=%d aware=%d variant=%s rows=%d cols=%d step_ms=%.6f "
               "exchange_ms=%.6f\n", w->nranks, used, w->cuda_aware, lab07_variants[v].name,
               run->shape.rows, run->shape.cols, step, exch);
    }
}
