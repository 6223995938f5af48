/* Your kernels.cu and exchange.c on the GPU with real MPI ranks: 1 to 4 ranks (sharing the
   GPUs there are: local rank r uses GPU r % GPUs), both time loops, both ways MPI moves
   device data. Staged: Open MPI's CUDA support switched off (OMPI_MCA_opal_cuda_support=0),
   so the driver finds MPI not CUDA-aware and stages through pinned buffers. CUDA-aware:
   switched on (=1, with the ob1 layer); skipped, with the reason, where this Open MPI has no
   CUDA support. While a student function is the skeleton's, every test fails at once with
   its TODO message, before any mpirun. */
#include "helpers.h"

static const char *const staged[] = {"OMPI_MCA_opal_cuda_support=0", NULL};
/* ob1: Open MPI's own point-to-point layer, whose shared-memory transport (smcuda) takes
   device pointers; a UCX layer built without CUDA would not. */
static const char *const aware[] = {"OMPI_MCA_opal_cuda_support=1", "OMPI_MCA_pml=ob1", NULL};

/* Skip unless this Open MPI reports CUDA-aware with its CUDA support on. */
static void require_cuda_aware(void)
{
    char out[1 << 14];
    const char *args[] = {"--gpu", "--variant", "sync", "--dataset", "sciddicat-tiny", NULL};
    int status = lab07_mpirun(1, aware, args, out, sizeof out);
    /* An Open MPI built without CUDA says so, then crashes, when its support is forced on. */
    if (strstr(out, "not compiled with any support") ||
        (status == 0 && strstr(out, "MPI not CUDA-aware")))
        cr_skip_test("this Open MPI is not CUDA-aware (built without CUDA, or "
                     "MPIX_Query_cuda_support() is 0 even with OMPI_MCA_opal_cuda_support=1): "
                     "the staged tests cover this machine");
}

static void all_rank_counts(const char *variant, const char *dataset, const char *const *env)
{
    lab07_require_gpu_and_written();
    if (env == aware)
        require_cuda_aware();
    for (int ranks = 1; ranks <= 4; ranks++) {
        const char *out = lab07_check_dataset(ranks, variant, dataset, env, 1);
        if (env == staged)
            cr_assert(strstr(out, "MPI not CUDA-aware"), "the staged runs should find MPI not "
                      "CUDA-aware:\n%s", out);
    }
}

#define GPU_TESTS(name, dataset)                                                           \
    Test(staged_sync, name, .timeout = 900) { all_rank_counts("sync", dataset, staged); }   \
    Test(staged_overlap, name, .timeout = 900) { all_rank_counts("overlap", dataset, staged); } \
    Test(aware_sync, name, .timeout = 900) { all_rank_counts("sync", dataset, aware); }     \
    Test(aware_overlap, name, .timeout = 900) { all_rank_counts("overlap", dataset, aware); }

GPU_TESTS(odd_size_uneven_split, "sciddicat-odd")
GPU_TESTS(flow_leaving_through_all_borders, "sciddicat-dome")
GPU_TESTS(tiny_two_steps, "sciddicat-tiny")
GPU_TESTS(three_by_three_has_one_active_rank, "sciddicat-3x3")
GPU_TESTS(one_row_strip, "sciddicat-row-strip")
GPU_TESTS(three_column_strip, "sciddicat-thin-cols")

/* The course-size grid, 4000 steps, on 4 ranks: the md5 of the whole course run. */
Test(staged_overlap, course_size_4_ranks, .timeout = 900)
{
    lab07_require_gpu_and_written();
    lab07_check_dataset(4, "overlap", "sciddicat-course-size", staged, 1);
}

/* Odd thread blocks: the kernels must cover any row range with any block. */
Test(staged_sync, odd_blocks, .timeout = 900)
{
    lab07_require_gpu_and_written();
    const char *blocks[] = {"1x1", "7x5", "1024x1", "32x8"};
    for (int i = 0; i < 4; i++) {
        char out[1 << 15];
        const char *run_args[] = {"--variant", "overlap", "--block", blocks[i], "--dataset",
                                  "sciddicat-odd", "--steps", "60", "--json", NULL};
        int status = lab07_mpirun(3, staged, run_args, out, sizeof out);
        char cmd[2048];
        lab07_command_line(3, staged, run_args, cmd, sizeof cmd);
        cr_assert_eq(status, 0, "%s: exit %d:\n%s", cmd, status, out);
        cr_assert(strstr(out, "\"match\":true"), "--block %s:\n%s", blocks[i], out);
    }
}

/* A block of 2048 threads cannot launch: the error must reach the report, not hang. */
Test(staged_sync, impossible_block_is_reported, .timeout = 900)
{
    lab07_require_gpu_and_written();
    char out[1 << 15];
    const char *args[] = {"--dataset", "sciddicat-tiny", "--block", "64x32", NULL};
    int status = lab07_mpirun(2, staged, args, out, sizeof out);
    cr_assert_neq(status, 0, "a 64x32 block cannot launch, yet the run succeeded:\n%s", out);
    cr_assert_neq(status, 124, "the failed launch made the ranks hang:\n%s", out);
    cr_assert(strstr(out, "launch") || strstr(out, "configuration"),
              "the message should say the launch failed:\n%s", out);
}
