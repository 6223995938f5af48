/* Your exchange.c with real MPI ranks, on the CPU: the CPU back end of the per-rank step
   (given.c, the shared cell functions) with your halo exchange and gather, 1 to 4 ranks
   (more ranks than cores is fine), both time loops. Every gathered grid must be the serial
   reference's, bit for bit: a ghost row off by one, a missed exchange or a rank's rows
   gathered in the wrong place all show up as differing cells. No GPU needed. While
   exchange.c is the untouched skeleton ("not written yet") the tests are skipped, before
   any mpirun. */
#include "helpers.h"

static void all_rank_counts(const char *variant, const char *dataset)
{
    for (int ranks = 1; ranks <= 4; ranks++)
        lab07_check_dataset(ranks, variant, dataset, NULL, 0);
}

#define DATASET_TESTS(name, dataset)                                                        \
    Test(ranks_cpu, name, .timeout = 600) { all_rank_counts("cpu", dataset); }              \
    Test(ranks_cpu_overlap, name, .timeout = 600) { all_rank_counts("cpu-overlap", dataset); }

/* 97 rows: 97, 49+48, 33+32+32, 25+24+24+24; the flow crosses every slab boundary. */
DATASET_TESTS(odd_size_uneven_split, "sciddicat-odd")
/* Flow that leaves through the borders, which the first and last ranks own. */
DATASET_TESTS(flow_reaching_the_border, "sciddicat-border")
DATASET_TESTS(flow_leaving_through_all_borders, "sciddicat-dome")
/* 12 rows: slabs of 3 and 4 rows, the ghost rows of a rank reach its neighbour's far edge. */
DATASET_TESTS(tiny_two_steps, "sciddicat-tiny")
/* Fewer rows than ranks need: the extra ranks are empty and only join the gather. */
DATASET_TESTS(three_by_three_has_one_active_rank, "sciddicat-3x3")
DATASET_TESTS(one_row_strip, "sciddicat-row-strip")
DATASET_TESTS(one_column_strip, "sciddicat-col-strip")
DATASET_TESTS(three_row_strip, "sciddicat-thin-rows")
DATASET_TESTS(three_column_strip, "sciddicat-thin-cols")

/* Generated grids the manifest does not list: the driver compares with serial itself. */
static void check_generated(int ranks, const char *variant, const char *spec, const char *steps)
{
    char out[1 << 15];
    const char *args[] = {"--variant", variant, "--gen", spec, "--steps", steps, "--json", NULL};
    lab07_skip_if_exchange_not_written();
    int status = lab07_mpirun(ranks, NULL, args, out, sizeof out);
    char cmd[2048];
    lab07_command_line(ranks, NULL, args, cmd, sizeof cmd);
    cr_assert_eq(status, 0, "%s: exit %d:\n%s", cmd, status, out);
    cr_assert(strstr(out, "\"match\":true"), "%s", out);
}

/* 9 rows over 4 ranks: 3+2+2+2, every active rank owns exactly the two rows its
   neighbours need. 5 rows over 4 ranks: two active ranks (3+2), two empty. */
Test(ranks_cpu, slabs_of_two_rows, .timeout = 600)
{
    for (int ranks = 1; ranks <= 4; ranks++) {
        check_generated(ranks, "cpu", "plane:9x23:3", "40");
        check_generated(ranks, "cpu-overlap", "plane:9x23:3", "40");
        check_generated(ranks, "cpu-overlap", "dome:5x31:4", "30");
    }
}

/* Zero steps: the gather alone must return the input. */
Test(ranks_cpu, zero_steps_gathers_the_input, .timeout = 600)
{
    for (int ranks = 1; ranks <= 4; ranks++)
        check_generated(ranks, "cpu", "valley:23x17:5", "0");
}
