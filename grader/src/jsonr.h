/**
 * @file jsonr.h
 * @brief Reading JSON: the drivers' result lines and the grader's own saved results.
 *
 * The parsing is cJSON's (Debian libcjson-dev); these are the few accessors the grader
 * needs, with errors in the kit's `where: line L column C: ...` form. Writing JSON uses the
 * kit's lk_json_string() / lk_json_number().
 */
#ifndef GRADER_JSONR_H
#define GRADER_JSONR_H

#include <cjson/cJSON.h>

#include "labkit/error.h"

/** A parsed JSON value (cJSON's tree: cJSON_IsArray(), ->child, ->next, ->valuedouble...). */
typedef cJSON gr_json;

/**
 * Parse @p text (one JSON value, surrounded by optional whitespace, nothing after it). On
 * error returns NULL with `where: line L column C: found '...': not valid JSON` in @p err,
 * @p where naming the source (a file, "result line").
 */
gr_json *gr_json_parse(const char *text, const char *where, lk_error *err);

/** Free a tree (NULL is fine). */
void gr_json_free(gr_json *j);

/** Member @p key of object @p j (the last one when repeated), or NULL (also when @p j is
    NULL or not an object). */
const gr_json *gr_json_get(const gr_json *j, const char *key);
/** Member @p key as a number, or @p dflt when absent or not a number. */
double gr_json_num(const gr_json *j, const char *key, double dflt);
/** Member @p key as a string, or NULL when absent or not a string. */
const char *gr_json_str(const gr_json *j, const char *key);
/** Member @p key is `true`. */
int gr_json_true(const gr_json *j, const char *key);
/** Number of members of an array or object (0 for other values and NULL). */
int gr_json_count(const gr_json *j);

#endif
