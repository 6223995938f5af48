/* The driver's command line, run in this process as a lone rank (no mpirun): options,
   variants and bad input, which end before MPI starts; and a whole CPU run under mpirun. */
#include <stdlib.h>

#include "helpers.h"

static int run(char **argv, char *out, size_t size)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lk_run_captured(lk_lab_main, argc, argv, out, size);
}

Test(cli, help_lists_the_variants)
{
    char *argv[] = {"lab07", "-h", NULL};
    char out[8192];
    cr_assert_eq(run(argv, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "sync") && strstr(out, "overlap") && strstr(out, "cpu-overlap"),
              "%s", out);
}

/* A real run needs MPI, which a lone process starts by forking a daemon: under load that
   can fail, so this one runs under mpirun -np 1 (the tests above never start MPI). */
Test(cli, one_rank_on_the_cpu_matches_serial, .timeout = 600)
{
    const char *args[] = {"--variant", "cpu", "--dataset", "sciddicat-tiny", NULL};
    char out[1 << 15];
    lab07_skip_if_exchange_not_written();
    int status = lab07_mpirun(1, NULL, args, out, sizeof out);
    cr_assert_eq(status, 0, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "1 rank on the CPU") && strstr(out, "identical"), "%s", out);
    /* The CPU variant is named as such: no "gpu" line, no block, no "GPU result". */
    cr_assert(strstr(out, "\ncpu ") && strstr(out, "the CPU variant's result identical"), "%s",
              out);
    cr_assert(!strstr(out, "\ngpu ") && !strstr(out, "block") && !strstr(out, "GPU result"),
              "%s", out);
}

Test(cli, unknown_variant_is_a_usage_error)
{
    char *argv[] = {"lab07", "--variant", "nccl", "--dataset", "sciddicat-tiny", NULL};
    char out[8192];
    int status = run(argv, out, sizeof out);
    cr_assert_eq(status, 2, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "--variant nccl: unknown variant"), "%s", out);
}

Test(cli, tile_is_not_an_option_of_lab07)
{
    char *argv[] = {"lab07", "--serial", "--tile", "32x8", "--dataset", "sciddicat-tiny", NULL};
    char out[8192];
    int status = run(argv, out, sizeof out);
    cr_assert_eq(status, 2, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "--tile: lab 07-mpi-split has no tiles"), "%s", out);
}

Test(cli, bad_generator_spec_is_explained)
{
    char *argv[] = {"lab07", "--serial", "--gen", "valley:0x9:1", NULL};
    char out[8192];
    int status = run(argv, out, sizeof out);
    cr_assert_eq(status, 1, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "valley:0x9:1"), "%s", out);
}

Test(cli, truncated_input_file_names_file_and_line, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    const char *h = lk_tmp_put("header.txt", "ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\n"
                                             "cellsize 10\nNODATA_value -9999\n");
    const char *d = lk_tmp_put("dem.txt", "1 2 3\n4 5 6\n7 8\n");
    const char *s = lk_tmp_put("source.txt", "0 0 0\n0 1 0\n0 0 0\n");
    char *argv[] = {"lab07", "--variant", "cpu", (char *)h, (char *)d, (char *)s, NULL};
    char out[8192];
    int status = run(argv, out, sizeof out);
    cr_assert_eq(status, 1, "exit %d:\n%s", status, out);
    cr_assert(strstr(out, "dem.txt:3") && strstr(out, "after 8 of 9 values"), "%s", out);
}
