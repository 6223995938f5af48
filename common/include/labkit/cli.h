/**
 * @file cli.h
 * @brief Strict parsing of command-line values for getopt_long-based drivers.
 *
 * Each parser rejects empty strings, trailing junk, out-of-range values and overflow with
 * a message naming the option, the value given and what is expected.
 */
#ifndef LABKIT_CLI_H
#define LABKIT_CLI_H

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parse a decimal integer in [min, max] given to option @p opt (e.g. "--steps"). */
int lk_parse_long(const char *opt, const char *s, long min, long max, long *out,
                  lk_error *err);
/** Parse an int in [min, max]. */
int lk_parse_int(const char *opt, const char *s, int min, int max, int *out, lk_error *err);
/** Parse a finite double in [min, max]. */
int lk_parse_double(const char *opt, const char *s, double min, double max, double *out,
                    lk_error *err);
/** Parse `WxH` (e.g. "32x8") with each part in [1, max]. */
int lk_parse_dims(const char *opt, const char *s, int max, int *w, int *h, lk_error *err);
/** Parse a 64-bit unsigned seed (decimal or 0x hex). */
int lk_parse_seed(const char *opt, const char *s, unsigned long long *out, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
