/* The manifest is the kit's ground truth: committed inputs must be exactly what the
   generator makes, and the serial reference must still give every listed hash. */
#include <stdlib.h>
#include <sys/wait.h>

#include "bruss/bruss.h"
#include "labkit/manifest.h"
#include "labkit/md5.h"
#include "reduce/reduce.h"
#include "sciddicat/sciddicat.h"
#include "labkit/testing.h"
#include "vstring/vstring.h"

static void read_manifest(lk_manifest *m)
{
    char path[4096];
    lk_error err;
    LK_ASSERT_OK(lk_manifest_read(lk_test_path(path, sizeof path, "datasets/MANIFEST"), m, &err), &err);
}

static void check_hash(const char *name)
{
    char manifest[4096], md5[33], hex[33];
    int steps;
    sciddicat sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(sciddicat_load_dataset(manifest, name, &sim, &steps, md5, &err), &err);
    double *h = malloc((size_t)sim.rows * sim.cols * sizeof *h);
    LK_ASSERT_OK(sciddicat_serial(&sim, steps, h, NULL, &err), &err);
    LK_ASSERT_OK(lk_course_text_md5(h, sim.rows, sim.cols, hex, &err), &err);
    cr_expect_str_eq(hex, md5, "dataset %s: serial reference gives md5 %s after %d steps, "
                     "the manifest says %s", name, hex, steps, md5);
    free(h);
    sciddicat_free(&sim);
}

/* Every dataset but the big ones, which have tests of their own (they run in parallel). */
Test(manifest, small_dataset_hashes)
{
    lk_manifest m;
    read_manifest(&m);
    int checked = 0;
    for (int i = 0; i < m.n; i++)
        if (strcmp(m.e[i].model, "sciddicat") == 0 &&
            strcmp(m.e[i].name, "sciddicat-course-size") != 0 &&
            strcmp(m.e[i].name, "sciddicat-large") != 0 &&
            strcmp(m.e[i].name, "sciddicat-large-wet") != 0 &&
            strcmp(m.e[i].name, "sciddicat-scale") != 0) {
            check_hash(m.e[i].name);
            checked++;
        }
    cr_assert_geq(checked, 8, "expected at least 8 small SciddicaT datasets, found %d", checked);
    lk_manifest_free(&m);
}

Test(manifest, course_size_hash, .timeout = 600) { check_hash("sciddicat-course-size"); }
Test(manifest, large_hash, .timeout = 600) { check_hash("sciddicat-large"); }
Test(manifest, large_wet_hash, .timeout = 600) { check_hash("sciddicat-large-wet"); }
Test(manifest, scale_hash, .timeout = 600) { check_hash("sciddicat-scale"); }

/* Regenerate each committed dataset with labkit-gen and compare the files byte for byte. */
Test(manifest, committed_inputs_equal_regenerated_ones)
{
    lk_manifest m;
    read_manifest(&m);
    char tmpl[] = "/tmp/labkit-manifest-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    int stored = 0;
    for (int i = 0; i < m.n; i++) {
        if (!m.e[i].stored)
            continue;
        stored++;
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "'%s' dataset '%s' '%s' >/dev/null", LK_GEN, m.e[i].name, tmpl);
        int status = system(cmd);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed", cmd);
        static const char *parts[] = {"header", "dem", "source"};
        for (int p = 0; p < 3; p++) {
            char made[4200], committed[4200], rel[512], a[33], b[33];
            lk_error err;
            snprintf(made, sizeof made, "%s/%s_%s.txt", tmpl, m.e[i].name, parts[p]);
            snprintf(rel, sizeof rel, "datasets/%s/%s_%s.txt", m.e[i].model, m.e[i].name, parts[p]);
            lk_test_path(committed, sizeof committed, rel);
            LK_ASSERT_OK(lk_md5_file(made, a, &err), &err);
            LK_ASSERT_OK(lk_md5_file(committed, b, &err), &err);
            cr_expect_str_eq(a, b, "%s differs from what `labkit-gen dataset %s` makes now: "
                             "regenerate it and update the manifest", rel, m.e[i].name);
            remove(made);
        }
    }
    cr_assert_gt(stored, 0, "no committed dataset in the manifest");
    rmdir(tmpl);
    lk_manifest_free(&m);
}

/* Lab 05's string datasets: generated from their specs, hashed with the string's serial
   reference (common/models/vstring/serial.c). */
static void check_vstring_hash(const char *name)
{
    char manifest[4096], md5[33], hex[33];
    int steps;
    vstring sim;
    lk_error err;
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    LK_ASSERT_OK(vstring_load_dataset(manifest, name, &sim, &steps, md5, &err), &err);
    double *y = malloc(vstring_components(&sim) * sizeof *y);
    cr_assert_not_null(y);
    LK_ASSERT_OK(vstring_serial(&sim, steps, y, &err), &err);
    LK_ASSERT_OK(vstring_md5(y, sim.n, hex, &err), &err);
    cr_expect_str_eq(hex, md5, "dataset %s: serial reference gives md5 %s after %d steps, "
                     "the manifest says %s", name, hex, steps, md5);
    free(y);
    vstring_free(&sim);
}

Test(manifest, string_dataset_hashes, .timeout = 600)
{
    lk_manifest m;
    read_manifest(&m);
    int checked = 0;
    for (int i = 0; i < m.n; i++)
        if (strcmp(m.e[i].model, "vstring") == 0) {
            check_vstring_hash(m.e[i].name);
            checked++;
        }
    cr_assert_geq(checked, 7, "expected at least 7 string datasets, found %d", checked);
    lk_manifest_free(&m);
}

/* Lab 05's Brusselator datasets (the stretch model): hashed with its serial reference
   (common/models/bruss/serial.c). */
Test(manifest, brusselator_dataset_hashes, .timeout = 600)
{
    lk_manifest m;
    read_manifest(&m);
    char manifest[4096];
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    int checked = 0;
    for (int i = 0; i < m.n; i++) {
        if (strcmp(m.e[i].model, "bruss") != 0)
            continue;
        char md5[33], hex[33];
        int steps;
        bruss sim;
        lk_error err;
        LK_ASSERT_OK(bruss_load_dataset(manifest, m.e[i].name, &sim, &steps, md5, &err), &err);
        double *y = malloc(bruss_components(sim.m) * sizeof *y);
        cr_assert_not_null(y);
        LK_ASSERT_OK(bruss_serial(&sim, steps, y, &err), &err);
        LK_ASSERT_OK(bruss_md5(y, sim.m, hex, &err), &err);
        cr_expect_str_eq(hex, md5, "dataset %s: serial reference gives md5 %s after %d steps, "
                         "the manifest says %s", m.e[i].name, hex, steps, md5);
        free(y);
        bruss_free(&sim);
        checked++;
    }
    cr_assert_geq(checked, 5, "expected at least 5 Brusselator datasets, found %d", checked);
    lk_manifest_free(&m);
}

/* Lab 06's datasets: the serial reference's raw results hash to the manifest's md5 (the two
   largest fields are left to `labkit-gen expect`: 2^24 and 2^28 values). */
Test(manifest, reduction_dataset_hashes, .timeout = 300)
{
    lk_manifest m;
    read_manifest(&m);
    char manifest[4096];
    lk_test_path(manifest, sizeof manifest, "datasets/MANIFEST");
    int checked = 0;
    for (int i = 0; i < m.n; i++) {
        if (strcmp(m.e[i].model, "reduce") != 0 || strcmp(m.e[i].name, "reduce-2p24") == 0 ||
            strcmp(m.e[i].name, "reduce-2p28") == 0)
            continue;
        reduce_input in;
        char md5[33], hex[33];
        lk_error err;
        LK_ASSERT_OK(reduce_load_dataset(manifest, m.e[i].name, &in, NULL, md5, &err), &err);
        if (in.lagrange)
            reduce_lagrange_naive(in.x, in.y, in.n1, in.xs, in.gold, in.S);
        else
            reduce_serial(in.field, in.rows, in.cols, in.threshold, in.gold, NULL);
        LK_ASSERT_OK(lk_binary_md5(in.gold, in.nout, hex, &err), &err);
        cr_expect_str_eq(hex, md5, "dataset %s: serial reference gives md5 %s, the manifest "
                         "says %s", m.e[i].name, hex, md5);
        reduce_input_free(&in);
        checked++;
    }
    cr_assert_geq(checked, 10, "expected at least 10 lab 06 datasets, found %d", checked);
    lk_manifest_free(&m);
}
