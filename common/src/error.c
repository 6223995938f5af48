#include "labkit/error.h"

#include <stdio.h>
#include <stdlib.h>

void lk_error_clear(lk_error *err)
{
    if (err)
        err->msg[0] = '\0';
}

int lk_vfail(lk_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int lk_fail(lk_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lk_vfail(err, fmt, ap);
    va_end(ap);
    return -1;
}

void lk_die(const char *prog, const lk_error *err)
{
    fprintf(stderr, "%s: %s\n", prog, err && err->msg[0] ? err->msg : "unknown error");
    exit(1);
}
