#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/md5.h"
#include "labkit/rng.h"
#include "labkit/testing.h"

TestSuite(md5, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove);



static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static unsigned char *random_bytes(size_t n, uint64_t seed)
{
    unsigned char *b = malloc(n);
    cr_assert_not_null(b);
    lk_rng r;
    lk_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)lk_rng_u64(&r);
    return b;
}

Test(md5, known_vectors_rfc1321)
{
    static const struct {
        const char *in, *md5;
    } v[] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    lk_error err;
    char hex[33];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        LK_ASSERT_OK(lk_md5_buffer(v[i].in, strlen(v[i].in), hex, &err), &err);
        cr_assert_str_eq(hex, v[i].md5, "md5(\"%s\")", v[i].in);
    }
}

Test(md5, million_a_file_matches_known_vector)
{
    const size_t n = 1000000;
    char *a = malloc(n);
    cr_assert_not_null(a);
    memset(a, 'a', n);
    write_bytes(lk_tmp_path("a.bin"), a, n);
    free(a);
    lk_error err;
    char hex[33];
    LK_ASSERT_OK(lk_md5_file(lk_tmp_path("a.bin"), hex, &err), &err);
    cr_assert_str_eq(hex, "7707d6ae4e027c70eea2a935c2296f21");
}

Test(md5, empty_file)
{
    write_bytes(lk_tmp_path("empty"), "", 0);
    lk_error err;
    char hex[33];
    LK_ASSERT_OK(lk_md5_file(lk_tmp_path("empty"), hex, &err), &err);
    cr_assert_str_eq(hex, "d41d8cd98f00b204e9800998ecf8427e");
}

/* Larger than the 1 MiB read chunk and not a multiple of it, so chunking is exercised. */
Test(md5, file_equals_buffer)
{
    const size_t n = 3 * (1u << 20) + 12345;
    unsigned char *b = random_bytes(n, 11);
    write_bytes(lk_tmp_path("r.bin"), b, n);
    lk_error err;
    char from_file[33], from_buf[33];
    LK_ASSERT_OK(lk_md5_buffer(b, n, from_buf, &err), &err);
    LK_ASSERT_OK(lk_md5_file(lk_tmp_path("r.bin"), from_file, &err), &err);
    cr_assert_str_eq(from_file, from_buf);
    free(b);
}

Test(md5, incremental_equals_one_shot)
{
    const size_t n = 200000;
    unsigned char *b = random_bytes(n, 5);
    lk_error err;
    char one[33], inc[33];
    LK_ASSERT_OK(lk_md5_buffer(b, n, one, &err), &err);
    lk_rng r;
    lk_rng_seed(&r, 9);
    lk_md5 *m = lk_md5_begin(&err);
    cr_assert_not_null(m, "%s", err.msg);
    size_t done = 0;
    while (done < n) {
        /* Pieces of 0..4999 bytes, empty updates included. */
        size_t k = (size_t)lk_rng_below(&r, 5000);
        if (k > n - done)
            k = n - done;
        LK_ASSERT_OK(lk_md5_update(m, b + done, k, &err), &err);
        done += k;
    }
    LK_ASSERT_OK(lk_md5_end(m, inc, &err), &err);
    cr_assert_str_eq(inc, one);
    free(b);
}

Test(md5, output_is_32_lowercase_hex)
{
    lk_error err;
    char hex[33];
    memset(hex, 'X', sizeof hex);
    LK_ASSERT_OK(lk_md5_buffer("The quick brown fox jumps over the lazy dog", 43, hex, &err),
                 &err);
    cr_assert_str_eq(hex, "9e107d9d372bb6826bd81d3542a419d6");
    cr_assert_eq(strlen(hex), 32);
}

Test(md5, missing_file_gives_clear_error)
{
    lk_error err;
    char hex[33];
    const char *p = lk_tmp_path("no_such_file.txt");
    cr_assert_eq(lk_md5_file(p, hex, &err), -1);
    cr_assert(strncmp(err.msg, p, strlen(p)) == 0, "message does not start with the path: %s",
              err.msg);
    cr_assert_not_null(strstr(err.msg, "No such file or directory"), "%s", err.msg);
}

Test(md5, directory_is_a_read_error)
{
    lk_error err;
    char hex[33];
    cr_assert_eq(lk_md5_file(lk_tmpdir, hex, &err), -1);
    cr_assert_not_null(strstr(err.msg, lk_tmpdir), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "Is a directory"), "%s", err.msg);
}

Test(md5, abort_frees_unfinished_state)
{
    lk_error err;
    lk_md5_abort(NULL);
    lk_md5 *m = lk_md5_begin(&err);
    cr_assert_not_null(m, "%s", err.msg);
    LK_ASSERT_OK(lk_md5_update(m, "abc", 3, &err), &err);
    lk_md5_abort(m);
}
