#include "labkit/compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

void lk_poison(double *v, size_t n)
{
    const uint64_t bits = LK_POISON_BITS;
    for (size_t i = 0; i < n; i++)
        memcpy(&v[i], &bits, sizeof bits);
}

int lk_is_poison(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == LK_POISON_BITS;
}

/* Bits, not ==: -0.0 and 0.0 must differ and equal NaN payloads must match. */
static int same_bits(const double *a, const double *b) { return memcmp(a, b, sizeof *a) == 0; }

size_t lk_compare_grids(const double *expected, const double *got, int rows, int cols,
                        int kfirst, lk_compare *out)
{
    lk_compare local;
    lk_compare *c = out ? out : &local;
    memset(c, 0, sizeof *c);
    c->max_row = c->max_col = -1;
    if (!expected || !got || rows < 1 || cols < 1)
        return 0;
    if (kfirst < 0)
        kfirst = 0;
    if (kfirst > LK_COMPARE_FIRST_MAX)
        kfirst = LK_COMPARE_FIRST_MAX;

    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            size_t k = (size_t)i * (size_t)cols + (size_t)j;
            double e = expected[k], g = got[k];
            if (same_bits(&e, &g))
                continue;
            c->ndiff++;
            if (c->nfirst < kfirst)
                c->first[c->nfirst++] = (lk_cell_diff){i, j, e, g};
            if (isnan(g) && !isnan(e))
                c->nnan++;
            if (lk_is_poison(g))
                c->npoison++;
            double a = (isnan(e) || isnan(g)) ? INFINITY : fabs(g - e);
            /* Relative to |expected|; against a zero reference any nonzero change is
               infinitely large (a sign-of-zero change has abs 0 and rel 0). */
            double r = e != 0.0 ? a / fabs(e) : (a > 0.0 ? INFINITY : 0.0);
            if (c->max_row < 0 || a > c->max_abs) {
                c->max_abs = a;
                c->max_row = i;
                c->max_col = j;
            }
            if (r > c->max_rel)
                c->max_rel = r;
        }
    }
    return c->ndiff;
}

/* One writer for both outputs, so print and format always say the same thing. */
typedef struct writer {
    FILE *f;
    char *buf;
    size_t size, len;
    int truncated;
} writer;

__attribute__((format(printf, 2, 3))) static void put(writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (w->f) {
        vfprintf(w->f, fmt, ap);
    } else if (!w->truncated && w->size > 0) {
        size_t room = w->size - w->len;
        int n = vsnprintf(w->buf + w->len, room, fmt, ap);
        if (n < 0 || (size_t)n >= room) {
            w->truncated = 1;
            w->len = w->size - 1;
        } else {
            w->len += (size_t)n;
        }
    }
    va_end(ap);
}

/* A value as a student should read it: poison and NaN named, numbers in full precision. */
static const char *value_text(char *s, size_t size, double v)
{
    if (lk_is_poison(v))
        snprintf(s, size, "poison (never written)");
    else
        snprintf(s, size, "%.17g", v);
    return s;
}

static void explain(writer *w, const lk_compare *c, int rows, int cols, const char *what)
{
    if (!what || !*what)
        what = "grid";
    size_t ncells = rows > 0 && cols > 0 ? (size_t)rows * (size_t)cols : 0;
    if (!c) {
        put(w, "%s: no comparison result\n", what);
        return;
    }
    if (c->ndiff == 0) {
        put(w, "%s: all %zu cells identical (%d x %d grid)\n", what, ncells, rows, cols);
        return;
    }
    put(w, "%s: %zu of %zu cells differ%s (%d x %d grid)\n", what, c->ndiff, ncells,
        c->ndiff == 1 ? "s" : "", rows, cols);
    int nfirst = c->nfirst < 0 ? 0 : c->nfirst > LK_COMPARE_FIRST_MAX ? LK_COMPARE_FIRST_MAX
                                                                      : c->nfirst;
    if (nfirst > 0) {
        put(w, "  first differences (row, col): expected -> got\n");
        for (int i = 0; i < nfirst; i++) {
            const lk_cell_diff *d = &c->first[i];
            char se[48], sg[48];
            put(w, "    (%d, %d): %s -> %s", d->row, d->col,
                value_text(se, sizeof se, d->expected), value_text(sg, sizeof sg, d->got));
            if (isnan(d->expected) || isnan(d->got)) {
                put(w, "\n");
            } else {
                double a = fabs(d->got - d->expected);
                if (a == 0.0)
                    put(w, " (abs 0: the sign of zero differs)\n");
                else if (d->expected == 0.0)
                    put(w, " (abs %.2g, rel inf)\n", a);
                else
                    put(w, " (abs %.2g, rel %.2g)\n", a, a / fabs(d->expected));
            }
        }
        if (c->ndiff > (size_t)nfirst)
            put(w, "    ... and %zu more\n", c->ndiff - (size_t)nfirst);
    }
    put(w, "  max abs difference %.2g at (%d, %d), max rel %.2g\n", c->max_abs, c->max_row,
        c->max_col, c->max_rel);
    if (c->npoison > 0)
        put(w,
            "  %zu %s the poison value written before the run: your code never wrote "
            "%s (did you copy the result back? do your kernels cover every cell?)\n",
            c->npoison, c->npoison == 1 ? "cell still holds" : "cells still hold",
            c->npoison == 1 ? "it" : "them");
    if (c->nnan > c->npoison)
        put(w,
            "  %zu %s NaN where the expected value is not: the computation produced NaN "
            "(a division by zero, an uninitialised value read, or an out-of-bounds access?)\n",
            c->nnan - c->npoison, c->nnan - c->npoison == 1 ? "cell is" : "cells are");
}

void lk_compare_print(FILE *f, const lk_compare *c, int rows, int cols, const char *what)
{
    writer w = {.f = f ? f : stderr};
    explain(&w, c, rows, cols, what);
}

void lk_compare_format(char *buf, size_t size, const lk_compare *c, int rows, int cols,
                       const char *what)
{
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    writer w = {.buf = buf, .size = size};
    explain(&w, c, rows, cols, what);
    /* Mark a cut so a reader knows the explanation goes on. */
    if (w.truncated && size >= 4)
        memcpy(buf + size - 4, "...", 4);
}
