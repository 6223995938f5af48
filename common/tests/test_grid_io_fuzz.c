/*
 * Deterministic mutation fuzzing of the grid parsers: valid header, body and .asc texts are
 * mutated thousands of times and every result goes through all three parsers. A parser must
 * never crash, must return 0 or -1, must explain every -1 with a message that starts with the
 * file path, and must only accept what a plain-decimal reference tokenizer accepts, with the
 * same doubles as atof().
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labkit/grid_io.h"
#include "labkit/rng.h"
#include "labkit/testing.h"

TestSuite(grid_io_fuzz, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove, .timeout = 120);

#define ITERATIONS 3000 /* per base text; three base texts, three parsers each */
#define BODY_ROWS 4
#define BODY_COLS 5


static const char base_header[] = "ncols 5\nnrows 4\nxllcorner 1000.5\nyllcorner -20\n"
                                  "cellsize 10\nNODATA_value -9999\n";
static const char base_body[] = "1 2.5 -3 4e2 .5\n"
                                "6. 7 8 9 10\n"
                                "-0 0.1 1e-300 123456.789 5\n"
                                "1 1 1 1 1\n";
static const char base_asc[] = "NCOLS 5\r\nNROWS 4\r\nXLLCORNER 0\r\nYLLCORNER 0\r\nCELLSIZE 2\r\n"
                               "1\t2.5 -3 4e2 .5\r\n6. 7 8 9 10\r\n-0 0.1 1e-300 123456.789 5\r\n"
                               "1 1 1 1 1\r\n";

/* Tokens that sit on the edges of what the parsers accept. */
static const char *const tricky[] = {
    "nan", "NaN", "-nan", "inf", "-Infinity", "1e999", "-1e999", "1e-999", "-", "+", ".",
    "0x1p3", "0X1.8P1", "1e", "1e+", "e5", "1.5.5", "--1", "1,5", "7.", ".5", "-0", "0",
    "-1", "2147483648", "1000001", "99999999999999999999", "ncols", "NROWS", "xllcenter",
    "NODATA_value", "cellsize", "celsize", "\r\n", "\t", "\n", " ", "\v", "\f", "\r",
    "4.9406564584124654e-324", "1.7976931348623157e308", "nan(0x7)", "1d5", "\xff\xfe",
};

typedef struct text {
    char *b;
    size_t n, cap;
} text;

static void reserve(text *t, size_t extra)
{
    if (t->n + extra + 1 > t->cap) {
        t->cap = (t->n + extra + 1) * 2;
        t->b = realloc(t->b, t->cap);
        cr_assert_not_null(t->b);
    }
}

static void insert(text *t, size_t at, const char *s, size_t n)
{
    reserve(t, n);
    memmove(t->b + at + n, t->b + at, t->n - at);
    memcpy(t->b + at, s, n);
    t->n += n;
}

static size_t pick(lk_rng *r, size_t n) { return n ? (size_t)lk_rng_below(r, n) : 0; }

static void mutate(text *t, lk_rng *r)
{
    size_t at = pick(r, t->n + 1);
    switch (lk_rng_below(r, 11)) {
    case 0: /* flip a bit */
        if (t->n)
            t->b[pick(r, t->n)] ^= (char)(1u << lk_rng_below(r, 8));
        break;
    case 1: /* replace a byte */
        if (t->n)
            t->b[pick(r, t->n)] = (char)lk_rng_below(r, 256);
        break;
    case 2: { /* insert random bytes, NUL included */
        char bytes[8];
        size_t k = 1 + pick(r, 8);
        for (size_t i = 0; i < k; i++)
            bytes[i] = (char)lk_rng_below(r, 256);
        insert(t, at, bytes, k);
        break;
    }
    case 3:
    case 4: { /* insert a tricky token, alone or glued to its neighbours */
        const char *s = tricky[pick(r, sizeof tricky / sizeof tricky[0])];
        int spaced = lk_rng_below(r, 2) != 0;
        if (spaced)
            insert(t, at, " ", 1);
        insert(t, at, s, strlen(s));
        if (spaced)
            insert(t, at, " ", 1);
        break;
    }
    case 5: /* insert a NUL byte */
        insert(t, at, "", 1);
        break;
    case 6: { /* delete a range */
        size_t k = pick(r, 12) + 1;
        if (at + k > t->n)
            k = t->n - at;
        memmove(t->b + at, t->b + at + k, t->n - at - k);
        t->n -= k;
        break;
    }
    case 7: /* truncate */
        t->n = at;
        break;
    case 8: { /* duplicate a line */
        size_t s = at;
        while (s > 0 && t->b[s - 1] != '\n')
            s--;
        size_t e = at;
        while (e < t->n && t->b[e] != '\n')
            e++;
        if (e < t->n)
            e++;
        char *line = malloc(e - s + 1);
        memcpy(line, t->b + s, e - s);
        insert(t, e, line, e - s);
        free(line);
        break;
    }
    case 9: { /* a long token: digits (a valid but huge or tiny number) or letters */
        size_t k = 100 + pick(r, 5000);
        char *tok = malloc(k);
        memset(tok, lk_rng_below(r, 2) ? '7' : 'q', k);
        if (lk_rng_below(r, 2)) {
            tok[0] = '0';
            tok[1] = '.';
        }
        insert(t, at, tok, k);
        free(tok);
        break;
    }
    default: { /* add spacing within a line, or a line break (which splits a row or token) */
        static const char *const ws[] = {" ", "\t", "\n", "\r\n"};
        const char *w = ws[lk_rng_below(r, 4)];
        insert(t, at, w, strlen(w));
        break;
    }
    }
}

/* ---- checks ---- */

static void check_failure_message(const lk_error *err, const char *path, const char *what)
{
    size_t lp = strlen(path);
    cr_assert(err->msg[0] != '\0', "%s: -1 without a message", what);
    cr_assert(strncmp(err->msg, path, lp) == 0 && err->msg[lp] == ':',
              "%s: message does not start with the path: %s", what, err->msg);
    for (const char *c = err->msg; *c; c++)
        cr_assert((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f,
                  "%s: message holds a raw byte 0x%02x: %s", what, (unsigned char)*c, err->msg);
}

/* An independent statement of the body syntax: a POSIX regex for plain decimals. */
static regex_t decimal_re;

static void compile_reference(void)
{
    cr_assert_eq(regcomp(&decimal_re,
                         "^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$",
                         REG_EXTENDED | REG_NOSUB),
                 0);
}

/*
 * Reference verdict for a body text of BODY_ROWS x BODY_COLS values, each line ('\n') empty
 * or one row of BODY_COLS values: 1 if it must be accepted (and then the expected doubles,
 * from atof), else 0.
 */
static int reference_body(const text *t, double *want)
{
    size_t i = 0, count = 0, on_line = 0;
    char tok[8192];
    while (i < t->n) {
        unsigned char c = (unsigned char)t->b[i];
        if (c == '\n') {
            if (on_line != 0 && on_line != BODY_COLS)
                return 0;
            on_line = 0;
        }
        if (c == ' ' || (c >= '\t' && c <= '\r')) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < t->n && !((unsigned char)t->b[i] == ' ' ||
                             ((unsigned char)t->b[i] >= '\t' && (unsigned char)t->b[i] <= '\r')))
            i++;
        size_t len = i - s;
        if (count == BODY_ROWS * BODY_COLS || len >= sizeof tok || memchr(t->b + s, 0, len))
            return 0;
        memcpy(tok, t->b + s, len);
        tok[len] = '\0';
        if (regexec(&decimal_re, tok, 0, NULL, 0) != 0)
            return 0;
        double v = atof(tok);
        if (!isfinite(v))
            return 0;
        want[count++] = v;
        on_line++;
    }
    return count == BODY_ROWS * BODY_COLS && (on_line == 0 || on_line == BODY_COLS);
}

static int check_header_parse(const char *path, const text *t)
{
    lk_error err;
    lk_grid_header h;
    err.msg[0] = '\0';
    int rc = lk_read_header(path, &h, &err);
    cr_assert(rc == 0 || rc == -1, "lk_read_header returned %d", rc);
    if (rc == -1) {
        check_failure_message(&err, path, "lk_read_header");
        return 0;
    }
    cr_assert(h.ncols > 0 && h.nrows > 0 && h.ncols <= LK_GRID_MAX_DIM &&
                  h.nrows <= LK_GRID_MAX_DIM,
              "accepted dimensions %d x %d from:\n%.*s", h.nrows, h.ncols, (int)t->n, t->b);
    cr_assert(isfinite(h.xllcorner) && isfinite(h.yllcorner) && isfinite(h.nodata) &&
                  isfinite(h.cellsize) && h.cellsize > 0,
              "accepted non-finite or bad values from:\n%.*s", (int)t->n, t->b);
    return 1;
}

static int check_body_parse(const char *path, const text *t)
{
    lk_error err;
    double v[BODY_ROWS * BODY_COLS], want[BODY_ROWS * BODY_COLS];
    err.msg[0] = '\0';
    int rc = lk_read_body(path, BODY_ROWS, BODY_COLS, v, &err);
    cr_assert(rc == 0 || rc == -1, "lk_read_body returned %d", rc);
    int ok = reference_body(t, want);
    if (rc == -1) {
        check_failure_message(&err, path, "lk_read_body");
        cr_assert(!ok, "valid body rejected: %s\n%.*s", err.msg, (int)t->n, t->b);
        return 0;
    }
    cr_assert(ok, "invalid body accepted:\n%.*s", (int)t->n, t->b);
    for (int k = 0; k < BODY_ROWS * BODY_COLS; k++) {
        cr_assert(isfinite(v[k]), "non-finite value %g accepted", v[k]);
        cr_assert(memcmp(&v[k], &want[k], sizeof v[k]) == 0, "value %d: read %a, atof gives %a",
                  k, v[k], want[k]);
    }
    return 1;
}

static int check_asc_parse(const char *path, const text *t)
{
    lk_error err;
    lk_grid_header h;
    lk_grid g = {0};
    err.msg[0] = '\0';
    int rc = lk_read_asc(path, &h, &g, &err);
    cr_assert(rc == 0 || rc == -1, "lk_read_asc returned %d", rc);
    if (rc == -1) {
        check_failure_message(&err, path, "lk_read_asc");
        cr_assert_null(g.data, "lk_read_asc failed but returned a grid");
        return 0;
    }
    cr_assert(g.rows == h.nrows && g.cols == h.ncols && g.rows > 0 && g.cols > 0,
              "grid %d x %d, header %d x %d", g.rows, g.cols, h.nrows, h.ncols);
    cr_assert(isfinite(h.cellsize) && h.cellsize > 0);
    for (long long k = 0; k < (long long)g.rows * g.cols; k++)
        cr_assert(isfinite(g.data[k]), "non-finite value accepted from:\n%.*s", (int)t->n, t->b);
    lk_grid_free(&g);
    return 1;
}

static void fuzz(const char *base, uint64_t seed)
{
    lk_rng r;
    lk_rng_seed(&r, seed);
    compile_reference();
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz.txt", lk_tmpdir);
    text t = {0};
    int accepted[3] = {0};
    for (int it = 0; it < ITERATIONS; it++) {
        t.n = 0;
        insert(&t, 0, base, strlen(base));
        int nmut = 1 + (int)lk_rng_below(&r, 4);
        for (int m = 0; m < nmut; m++)
            mutate(&t, &r);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(t.b, 1, t.n, f), t.n);
        cr_assert_eq(fclose(f), 0);

        accepted[0] += check_header_parse(path, &t);
        accepted[1] += check_body_parse(path, &t);
        accepted[2] += check_asc_parse(path, &t);
    }
    free(t.b);
    regfree(&decimal_re);
    cr_log_info("seed %llu: %d mutants; accepted as header %d, body %d, asc %d",
                (unsigned long long)seed, ITERATIONS, accepted[0], accepted[1], accepted[2]);
}

Test(grid_io_fuzz, mutated_headers) { fuzz(base_header, 1); }
Test(grid_io_fuzz, mutated_bodies) { fuzz(base_body, 2); }
Test(grid_io_fuzz, mutated_asc_files) { fuzz(base_asc, 3); }

/* The mutators must leave some inputs valid, or the fuzzing would only test error paths. */
Test(grid_io_fuzz, mutants_include_accepted_inputs)
{
    lk_rng r;
    lk_rng_seed(&r, 2);
    compile_reference();
    text t = {0};
    double want[BODY_ROWS * BODY_COLS];
    int valid = 0;
    for (int it = 0; it < 500; it++) {
        t.n = 0;
        insert(&t, 0, base_body, strlen(base_body));
        mutate(&t, &r);
        valid += reference_body(&t, want);
    }
    free(t.b);
    regfree(&decimal_re);
    cr_assert_gt(valid, 50, "only %d of 500 single mutants are valid bodies", valid);
    cr_assert_lt(valid, 450, "%d of 500 single mutants are valid: mutations too weak", valid);
}
