/**
 * @file error.h
 * @brief Error reporting: functions that can fail return -1 and fill an lk_error.
 *
 * Messages follow the kit's convention `where: what went wrong: what to do`, where `where`
 * is `file:line` (or `file:line:column`) whenever the problem has a location.
 */
#ifndef LABKIT_ERROR_H
#define LABKIT_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest message kept, including the terminating NUL. */
#define LK_ERROR_MAX 1024

/** An error message filled by a failing function. */
typedef struct lk_error {
    char msg[LK_ERROR_MAX]; /**< NUL-terminated message; empty when nothing failed. */
} lk_error;

/** Clear @p err (may be NULL). */
void lk_error_clear(lk_error *err);

/** Format a message into @p err (may be NULL) and return -1, for `return lk_fail(...)`. */
int lk_fail(lk_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** As lk_fail(), taking a va_list. */
int lk_vfail(lk_error *err, const char *fmt, va_list ap);

/** Print `prog: message` to stderr and exit with status 1. */
void lk_die(const char *prog, const lk_error *err) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
#endif
