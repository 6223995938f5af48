#include "labkit/cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *name_of(const char *opt) { return opt && opt[0] ? opt : "value"; }

/* strto* skip leading blanks and accept them; a value with blanks is almost always a
   quoting mistake in a script, so reject it instead of guessing. */
static int starts_with_space(const char *s) { return isspace((unsigned char)s[0]); }

/* The value as it can be shown on one line: control bytes escaped (\n, \t, \xNN), long
   values cut with "...". */
typedef struct shown {
    char s[256];
} shown;

static shown show(const char *s)
{
    shown o;
    size_t k = 0;
    for (; *s && k + 8 < sizeof o.s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            k += (size_t)snprintf(o.s + k, sizeof o.s - k, "\\n");
        else if (c == '\t')
            k += (size_t)snprintf(o.s + k, sizeof o.s - k, "\\t");
        else if (c < 0x20 || c == 0x7f)
            k += (size_t)snprintf(o.s + k, sizeof o.s - k, "\\x%02x", c);
        else
            o.s[k++] = (char)c;
    }
    if (*s)
        k += (size_t)snprintf(o.s + k, sizeof o.s - k, "...");
    o.s[k] = '\0';
    return o;
}

int lk_parse_long(const char *opt, const char *s, long min, long max, long *out,
                  lk_error *err)
{
    const char *o = name_of(opt);
    if (!s || !s[0])
        return lk_fail(err, "%s: no value given: give a whole number between %ld and %ld", o,
                       min, max);
    char *end = (char *)s;
    errno = 0;
    long v = starts_with_space(s) ? 0 : strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return lk_fail(err, "%s: '%s' is not an integer: give a whole number between %ld and %ld",
                       o, show(s).s, min, max);
    if (errno == ERANGE || v < min || v > max)
        return lk_fail(err, "%s: '%s' is out of range: give a whole number between %ld and %ld",
                       o, show(s).s, min, max);
    *out = v;
    return 0;
}

int lk_parse_int(const char *opt, const char *s, int min, int max, int *out, lk_error *err)
{
    long v = 0;
    if (lk_parse_long(opt, s, min, max, &v, err) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

int lk_parse_double(const char *opt, const char *s, double min, double max, double *out,
                    lk_error *err)
{
    const char *o = name_of(opt);
    if (!s || !s[0])
        return lk_fail(err, "%s: no value given: give a number between %g and %g", o, min, max);
    char *end = (char *)s;
    errno = 0;
    double v = starts_with_space(s) ? 0 : strtod(s, &end);
    if (end == s || *end != '\0')
        return lk_fail(err, "%s: '%s' is not a number: give a number between %g and %g", o,
                       show(s).s, min, max);
    if (!isfinite(v) && errno != ERANGE)
        return lk_fail(err, "%s: '%s' is not a finite number: give a number between %g and %g",
                       o, show(s).s, min, max);
    /* ERANGE with a subnormal result is still a usable value; overflow (inf) and underflow
       to zero are not what the user wrote. */
    if ((errno == ERANGE && (v == 0 || isinf(v))) || v < min || v > max)
        return lk_fail(err, "%s: '%s' is out of range: give a number between %g and %g", o,
                       show(s).s, min, max);
    *out = v;
    return 0;
}

/* One part of WxH: digits only (no sign, no blanks), at most max. Returns the end or NULL. */
static const char *dim_part(const char *p, long *v)
{
    if (!isdigit((unsigned char)p[0]))
        return NULL;
    char *end;
    errno = 0;
    *v = strtol(p, &end, 10);
    if (errno == ERANGE)
        *v = LONG_MAX;
    return end;
}

int lk_parse_dims(const char *opt, const char *s, int max, int *w, int *h, lk_error *err)
{
    const char *o = name_of(opt);
    if (!s || !s[0])
        return lk_fail(err,
                       "%s: no value given: give WIDTHxHEIGHT, e.g. 32x8, each between 1 and %d",
                       o, max);
    long vw = 0, vh = 0;
    const char *p = dim_part(s, &vw);
    if (p && (*p == 'x' || *p == 'X'))
        p = dim_part(p + 1, &vh);
    else
        p = NULL;
    if (!p || *p != '\0')
        return lk_fail(err,
                       "%s: '%s' is not WIDTHxHEIGHT: give two whole numbers joined by x, e.g. "
                       "32x8, each between 1 and %d",
                       o, show(s).s, max);
    if (vw < 1 || vw > max || vh < 1 || vh > max)
        return lk_fail(err,
                       "%s: '%s' is out of range: give WIDTHxHEIGHT with each between 1 and %d", o,
                       show(s).s, max);
    *w = (int)vw;
    *h = (int)vh;
    return 0;
}

int lk_parse_seed(const char *opt, const char *s, unsigned long long *out, lk_error *err)
{
    const char *o = name_of(opt);
    const char *what = "give a whole number between 0 and 18446744073709551615 (decimal, or hex "
                       "with 0x)";
    if (!s || !s[0])
        return lk_fail(err, "%s: no value given: %s", o, what);
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *digits = hex ? s + 2 : s;
    /* strtoull accepts a sign (and wraps "-1" to the maximum), so require a digit first. */
    int ok = hex ? isxdigit((unsigned char)digits[0]) : isdigit((unsigned char)digits[0]);
    char *end = NULL;
    errno = 0;
    unsigned long long v = ok ? strtoull(digits, &end, hex ? 16 : 10) : 0;
    if (!ok || *end != '\0')
        return lk_fail(err, "%s: '%s' is not a seed: %s", o, show(s).s, what);
    if (errno == ERANGE)
        return lk_fail(err, "%s: '%s' is out of range: %s", o, show(s).s, what);
    *out = v;
    return 0;
}
