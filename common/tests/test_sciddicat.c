#include <stdlib.h>
#include <string.h>

#include "labkit/sciddicat.h"
#include "labkit/testing.h"

Test(sciddicat, spec_parses_and_rejects_malformed_specs)
{
    lk_sciddicat_spec s;
    lk_error err;
    LK_ASSERT_OK(lk_sciddicat_spec_parse("plane:97x131:0x10", &s, &err), &err);
    cr_assert_eq(s.terrain, LK_TERRAIN_PLANE);
    cr_assert_eq(s.rows, 97);
    cr_assert_eq(s.cols, 131);
    cr_assert_eq(s.seed, 16);
    const char *bad[] = {"valley", "valley:3x3", "hill:3x3:1", "valley:0x3:1", "valley:3x:1",
                         "valley:3x3:-1", "valley:3x3:1:2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(lk_sciddicat_spec_parse(bad[i], &s, &err), -1, "accepted '%s'", bad[i]);
        cr_assert(strstr(err.msg, bad[i]) || !bad[i][0], "message lacks the spec: %s", err.msg);
    }
}

/* `--gen valley:0x5:1` once answered "give WIDTHxHEIGHT": the spec gives rows first. */
Test(sciddicat, spec_size_errors_show_the_rows_first_form)
{
    lk_sciddicat_spec s;
    lk_error err;
    const char *bad[] = {"valley:0x5:1", "plane:5x:1", "dome:5:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(lk_sciddicat_spec_parse(bad[i], &s, &err), -1, "accepted '%s'", bad[i]);
        cr_assert(strstr(err.msg, "is not ROWSxCOLS") && strstr(err.msg, "e.g. 610x496"),
                  "%s", err.msg);
        cr_assert_null(strstr(err.msg, "WIDTH"), "%s", err.msg);
    }
}

Test(sciddicat, generator_is_deterministic_and_seed_dependent)
{
    lk_sciddicat_spec s = {LK_TERRAIN_VALLEY, 40, 30, 5};
    double a[1200], b[1200], sa[1200], sb[1200];
    lk_grid_header h;
    lk_error err;
    LK_ASSERT_OK(lk_sciddicat_generate(&s, &h, a, sa, &err), &err);
    LK_ASSERT_OK(lk_sciddicat_generate(&s, &h, b, sb, &err), &err);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    cr_assert_eq(memcmp(sa, sb, sizeof sa), 0);
    cr_assert_eq(h.nrows, 40);
    cr_assert_eq(h.ncols, 30);
    s.seed = 6;
    LK_ASSERT_OK(lk_sciddicat_generate(&s, &h, b, sb, &err), &err);
    cr_assert_neq(memcmp(a, b, sizeof a), 0, "another seed must give another terrain");
    int wet = 0;
    for (int k = 0; k < 1200; k++) {
        cr_assert_geq(sa[k], 0.0);
        wet += sa[k] > 0;
    }
    cr_assert_gt(wet, 0, "the source blob is empty");
}

static double row_mean(const double *z, int i, int cols)
{
    double s = 0;
    for (int j = 0; j < cols; j++)
        s += z[lk_sciddicat_at(i, j, cols)];
    return s / cols;
}

/* The valley falls southwards into a basin whose far side rises again, so debris comes to
   rest inside the grid. */
Test(sciddicat, valley_descends_into_a_basin_and_source_avoids_the_border)
{
    lk_sciddicat_spec s = {LK_TERRAIN_VALLEY, 100, 60, 1};
    double *z = malloc(6000 * sizeof *z), *src = malloc(6000 * sizeof *src);
    lk_grid_header h;
    lk_error err;
    LK_ASSERT_OK(lk_sciddicat_generate(&s, &h, z, src, &err), &err);
    cr_assert_gt(row_mean(z, 0, 60), row_mean(z, 60, 60) + 20.0, "the valley must descend");
    cr_assert_gt(row_mean(z, 99, 60), row_mean(z, 73, 60) + 5.0, "the basin must rise again");
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 60; j++)
            if (i == 0 || j == 0 || i == 99 || j == 59)
                cr_assert_eq(src[lk_sciddicat_at(i, j, 60)], 0.0, "source on border (%d,%d)", i, j);
    free(z);
    free(src);
}


#define HEADER "ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 10\nNODATA_value -9999\n"

Test(sciddicat, load_applies_initialisation, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *hdr = lk_tmp_put("h.txt", HEADER);
    const char *dem = lk_tmp_put("d.txt", "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.txt", "0 0 0\n0 2 0\n0 0 0\n");
    lk_sciddicat sim;
    lk_error err;
    LK_ASSERT_OK(lk_sciddicat_load(hdr, dem, src, &sim, &err), &err);
    cr_assert_eq(sim.z[4], 7.0);
    cr_assert_eq(sim.h0[4], 2.0);
    cr_assert_eq(sim.z[0], 5.0);
    lk_sciddicat_free(&sim);
}

Test(sciddicat, negative_source_thickness_is_rejected, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *hdr = lk_tmp_put("h.txt", HEADER);
    const char *dem = lk_tmp_put("d.txt", "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.txt", "0 0 0\n0 -2 0\n0 0 0\n");
    lk_sciddicat sim;
    lk_error err;
    cr_assert_eq(lk_sciddicat_load(hdr, dem, src, &sim, &err), -1);
    cr_assert(strstr(err.msg, src) && strstr(err.msg, "row 1, col 1") && strstr(err.msg, ">= 0"),
              "%s", err.msg);
}

Test(sciddicat, asc_grids_of_different_sizes_are_rejected, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *dem = lk_tmp_put("d.asc", HEADER "5 5 5\n5 9 5\n5 5 5\n");
    const char *src = lk_tmp_put("s.asc", "ncols 2\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 10\n"
                                   "0 0\n0 1\n0 0\n");
    lk_sciddicat sim;
    lk_error err;
    cr_assert_eq(lk_sciddicat_load_asc(dem, src, &sim, &err), -1);
    cr_assert(strstr(err.msg, "same grid") && strstr(err.msg, src), "%s", err.msg);
}

Test(sciddicat, unknown_dataset_lists_the_known_ones)
{
    char manifest[4096];
    lk_sciddicat sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    cr_assert_eq(lk_sciddicat_load_dataset(manifest, "no-such", &sim, NULL, NULL, &err), -1);
    cr_assert(strstr(err.msg, "no dataset named 'no-such'") && strstr(err.msg, "sciddicat-tiny"),
              "%s", err.msg);
}
