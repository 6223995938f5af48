/* The lab's program through its real command line (CPU only): variants and tiles are
   checked before anything is loaded or run, so a bad option never costs a GPU probe. */
#include "labkit/testing.h"

static void expect_usage_error(char **argv, const char *phrase)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char out[8192];
    int status = lk_run_captured(lk_lab_main, argc, argv, out, sizeof out);
    cr_assert_eq(status, 2, "exit status %d, expected 2; output:\n%s", status, out);
    cr_assert(strstr(out, phrase), "the message lacks '%s':\n%s", phrase, out);
}

Test(cli, unknown_variant_is_refused_even_for_serial)
{
    char *argv[] = {"lab04", "--serial", "--variant", "bogus", "--dataset", "sciddicat-tiny",
                    NULL};
    expect_usage_error(argv, "--variant bogus: unknown variant");
}

Test(cli, oversize_tile_is_refused_before_any_gpu_probe)
{
    char *argv[] = {"lab04", "--gpu", "--tile", "40x40", "--dataset", "no-such-dataset", NULL};
    expect_usage_error(argv, "--tile 40x40");
}

Test(cli, block_is_not_an_option_of_a_tiled_lab)
{
    char *argv[] = {"lab04", "--serial", "--block", "32x8", "--dataset", "sciddicat-tiny", NULL};
    expect_usage_error(argv, "--block: lab 04-halo-tiling does not take a thread block");
}
