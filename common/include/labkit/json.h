/**
 * @file json.h
 * @brief Writing JSON strings safely (results lines, reports).
 */
#ifndef LABKIT_JSON_H
#define LABKIT_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Write @p s as a JSON string literal (quotes included) to @p f: quotes, backslashes and
 * control characters are escaped, invalid UTF-8 bytes become U+FFFD. NULL writes `null`.
 */
void lk_json_string(FILE *f, const char *s);

/** Write a double as a JSON number (`null` for NaN and infinities, which JSON lacks). */
void lk_json_number(FILE *f, double v);

#ifdef __cplusplus
}
#endif
#endif
