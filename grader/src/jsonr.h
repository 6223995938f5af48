/**
 * @file jsonr.h
 * @brief Reading JSON: the drivers' result lines and the grader's own saved results.
 *
 * A small strict parser (RFC 8259; nesting at most 64 deep) into a tree. Writing JSON uses
 * the kit's lk_json_string() / lk_json_number().
 */
#ifndef GRADER_JSONR_H
#define GRADER_JSONR_H

#include "labkit/error.h"

/** Kinds of JSON values. */
typedef enum gr_json_kind {
    GR_JSON_NULL,
    GR_JSON_BOOL,
    GR_JSON_NUMBER,
    GR_JSON_STRING,
    GR_JSON_ARRAY,
    GR_JSON_OBJECT
} gr_json_kind;

/** A JSON value; arrays and objects hold their members as a linked list. */
typedef struct gr_json {
    gr_json_kind kind;     /**< What it is. */
    char *key;             /**< Member name inside an object, else NULL. */
    double number;         /**< GR_JSON_NUMBER value; GR_JSON_BOOL: 0 or 1. */
    char *string;          /**< GR_JSON_STRING value (UTF-8, NUL-terminated). */
    struct gr_json *child; /**< First member of an array or object. */
    struct gr_json *next;  /**< Next member of the parent. */
} gr_json;

/**
 * Parse @p text (one JSON value, surrounded by optional whitespace). On error returns NULL
 * with `where: line L column C: what was found: what was expected` in @p err, @p where
 * naming the source (a file, "result line").
 */
gr_json *gr_json_parse(const char *text, const char *where, lk_error *err);

/** Free a tree (NULL is fine). */
void gr_json_free(gr_json *j);

/** Member @p key of object @p j, or NULL (also when @p j is NULL or not an object). */
const gr_json *gr_json_get(const gr_json *j, const char *key);
/** Member @p key as a number, or @p dflt when absent or not a number. */
double gr_json_num(const gr_json *j, const char *key, double dflt);
/** Member @p key as a string, or NULL when absent or not a string. */
const char *gr_json_str(const gr_json *j, const char *key);
/** Number of members of an array or object (0 for other values and NULL). */
int gr_json_count(const gr_json *j);

#endif
