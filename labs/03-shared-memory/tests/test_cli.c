/* The lab's program through its real command line (CPU only: --serial). */
#include "lab.h"
#include "swe/swe_testing.h"

Test(cli, serial_run_prints_the_manifest_hash)
{
    swe sim;
    char md5[33], out[8192];
    lk_test_swe_load("swe-bumps-thin", &sim, NULL, md5);
    swe_free(&sim);
    char *argv[] = {"lab03", "--dataset", "swe-bumps-thin", "--serial", "--json", NULL};
    int status = lk_run_captured(lk_lab_main, 5, argv, out, sizeof out);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, md5), "the md5 %s of the manifest is not in the output:\n%s", md5, out);
}

Test(cli, help_names_the_global_variant)
{
    char out[8192];
    char *argv[] = {"lab03", "-h", NULL};
    int status = lk_run_captured(lk_lab_main, 2, argv, out, sizeof out);
    cr_assert_eq(status, 0, "output:\n%s", out);
    cr_assert(strstr(out, "--variant NAME       global:"), "%s", out);
}
