#include <stdlib.h>
#include <unistd.h>

#include "labkit/manifest.h"
#include "labkit/testing.h"

static const char *write_manifest(const char *text) { return lk_tmp_put("MANIFEST", text); }

static void expect_error(const char *text, const char *phrase)
{
    lk_manifest m;
    lk_error err;
    const char *path = write_manifest(text);
    cr_assert_eq(lk_manifest_read(path, &m, &err), -1, "accepted: %s", text);
    cr_assert(strstr(err.msg, path), "message lacks the path: %s", err.msg);
    cr_assert(strstr(err.msg, phrase), "message lacks '%s': %s", phrase, err.msg);
    cr_assert_null(m.e);
}

#define MD5 "0123456789abcdef0123456789abcdef"

Test(manifest, parses_entries_comments_and_blank_lines, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    lk_manifest m;
    lk_error err;
    const char *path = write_manifest("# header\n\n"
                                      "a sciddicat valley:3x3:1 10 yes " MD5 "  # note\n"
                                      "\tb  sciddicat plane:5x4:2 0 no " MD5 "\n");
    LK_ASSERT_OK(lk_manifest_read(path, &m, &err), &err);
    cr_assert_eq(m.n, 2);
    const lk_manifest_entry *b = lk_manifest_find(&m, "b");
    cr_assert_not_null(b);
    cr_assert_str_eq(b->spec, "plane:5x4:2");
    cr_assert_eq(b->steps, 0);
    cr_assert_eq(b->stored, 0);
    cr_assert_eq(b->line, 4);
    cr_assert_eq(m.e[0].stored, 1);
    cr_assert_null(lk_manifest_find(&m, "c"));
    lk_manifest_free(&m);
}

Test(manifest, rejects_wrong_field_count, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("a sciddicat valley:3x3:1 10 yes\n", ":1: found 5 fields, expected 6");
}
Test(manifest, rejects_bad_steps, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("a sciddicat valley:3x3:1 ten yes " MD5 "\n", ":1: steps: 'ten' is not an integer");
}
Test(manifest, rejects_bad_stored, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("a sciddicat valley:3x3:1 1 maybe " MD5 "\n", "write yes or no");
}
Test(manifest, rejects_bad_md5, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("a sciddicat valley:3x3:1 1 yes 0123456789ABCDEF0123456789abcdef\n",
                 "not 32 lowercase hex digits");
}
Test(manifest, rejects_duplicate_names, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("a sciddicat valley:3x3:1 1 yes " MD5 "\na sciddicat valley:3x3:2 1 yes " MD5 "\n",
                 ":2: dataset 'a' is already defined on line 1");
}
Test(manifest, rejects_empty_manifest, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    expect_error("# nothing\n", "no dataset listed");
}
Test(manifest, missing_file_is_an_error)
{
    lk_manifest m;
    lk_error err;
    cr_assert_eq(lk_manifest_read("/nonexistent/MANIFEST", &m, &err), -1);
    cr_assert(strstr(err.msg, "/nonexistent/MANIFEST: cannot open"), "%s", err.msg);
}

Test(manifest, find_model_explains_unknown_names_and_wrong_models, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    lk_manifest m;
    lk_error err;
    const char *path = write_manifest("a sciddicat valley:3x3:1 1 yes " MD5 "\n"
                                      "b swe dam:5x5 1 no " MD5 "\n");
    LK_ASSERT_OK(lk_manifest_read(path, &m, &err), &err);
    cr_assert_not_null(lk_manifest_find_model(&m, path, "a", "sciddicat", &err));
    cr_assert_null(lk_manifest_find_model(&m, path, "c", "sciddicat", &err));
    cr_assert(strstr(err.msg, "no dataset named 'c': known sciddicat datasets: a"), "%s", err.msg);
    cr_assert_null(lk_manifest_find_model(&m, path, "b", "sciddicat", &err));
    cr_assert(strstr(err.msg, ":2: dataset 'b' is for model 'swe', not sciddicat"), "%s", err.msg);
    lk_manifest_free(&m);
}

/* lk_dataset_load with a toy model: a spec "n:N" makes the problem N; "n:0" cannot be made;
   anything else is a wrong spec. Stored datasets record the folder they were read from. */
typedef struct toy {
    int n;
    char stored_dir[256];
} toy;

static int toy_generate(const char *spec, void *problem, lk_error *err)
{
    toy *t = problem;
    if (sscanf(spec, "n:%d", &t->n) != 1) {
        lk_fail(err, "toy spec '%s': write n:N", spec);
        return LK_BAD_SPEC;
    }
    return t->n == 0 ? lk_fail(err, "a toy of 0 cannot be made") : 0;
}

static int toy_load_stored(const char *dir, const char *name, void *problem, lk_error *err)
{
    toy *t = problem;
    t->n = -1;
    snprintf(t->stored_dir, sizeof t->stored_dir, "%s", dir);
    return 0;
}

static const lk_dataset_kind toy_generated = {.model = "toy", .noun = "toy",
                                              .generate = toy_generate};
static const lk_dataset_kind toy_stored = {.model = "toy", .noun = "toy",
                                           .generate = toy_generate,
                                           .load_stored = toy_load_stored};

Test(dataset_load, generates_from_the_spec_and_hands_out_steps_and_md5, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    const char *path = write_manifest("a toy n:7 12 no " MD5 "\n");
    toy t = {0};
    int steps = 0;
    char md5[33];
    lk_error err;
    LK_ASSERT_OK(lk_dataset_load(&toy_generated, path, "a", &t, &steps, md5, &err), &err);
    cr_assert_eq(t.n, 7);
    cr_assert_eq(steps, 12);
    cr_assert_str_eq(md5, MD5);
}

Test(dataset_load, a_wrong_spec_is_the_manifest_lines_error, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    const char *path = write_manifest("a toy n:1 1 no " MD5 "\nb toy seven 1 no " MD5 "\n");
    toy t = {0};
    lk_error err;
    cr_assert_eq(lk_dataset_load(&toy_generated, path, "b", &t, NULL, NULL, &err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:2: toy spec 'seven': write n:N", path);
    cr_assert_str_eq(err.msg, want);
}

Test(dataset_load, a_spec_that_cannot_be_made_says_so_without_the_line,
     .init = lk_tmpdir_make, .fini = lk_tmpdir_remove)
{
    const char *path = write_manifest("a toy n:0 1 no " MD5 "\n");
    toy t = {0};
    lk_error err;
    cr_assert_eq(lk_dataset_load(&toy_generated, path, "a", &t, NULL, NULL, &err), -1);
    cr_assert_str_eq(err.msg, "a toy of 0 cannot be made");
}

Test(dataset_load, stored_datasets_load_from_the_manifests_folder, .init = lk_tmpdir_make,
     .fini = lk_tmpdir_remove)
{
    const char *path = write_manifest("a toy n:3 1 yes " MD5 "\n");
    toy t = {0};
    lk_error err;
    LK_ASSERT_OK(lk_dataset_load(&toy_stored, path, "a", &t, NULL, NULL, &err), &err);
    cr_assert_eq(t.n, -1);
    cr_assert_str_eq(t.stored_dir, lk_tmpdir);
    /* A model whose datasets are always generated refuses a stored one. */
    cr_assert_eq(lk_dataset_load(&toy_generated, path, "a", &t, NULL, NULL, &err), -1);
    cr_assert(strstr(err.msg, ":1: dataset 'a' is marked stored, but toy datasets are always "
                              "generated from their spec: write no"), "%s", err.msg);
}
