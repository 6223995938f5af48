/**
 * @file manifest.h
 * @brief The dataset manifest (`datasets/MANIFEST`): every dataset of the kit, how it is
 * generated, how many steps it runs and the md5 the serial reference gives.
 *
 * One dataset per line, fields separated by whitespace, `#` starts a comment:
 * @code
 * # name             model      generator        steps  stored  md5
 * sciddicat-tiny     sciddicat  valley:12x10:1   2      yes     0123...
 * @endcode
 * `stored` is `yes` when the generated input files are committed under
 * `datasets/<model>/<name>_{header,dem,source}.txt`, `no` when they are made on demand.
 */
#ifndef LABKIT_MANIFEST_H
#define LABKIT_MANIFEST_H

#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One dataset. */
typedef struct lk_manifest_entry {
    char name[64];  /**< Unique name. */
    char model[32]; /**< Model it feeds (e.g. "sciddicat"). */
    char spec[128]; /**< Generator spec, e.g. "valley:610x496:1". */
    int steps;      /**< Steps the reference runs. */
    int stored;     /**< 1 if the input files are committed. */
    char md5[33];   /**< Expected md5 of the output. */
    int line;       /**< Line of the manifest it came from. */
} lk_manifest_entry;

/** A parsed manifest. */
typedef struct lk_manifest {
    int n;                /**< Number of entries. */
    lk_manifest_entry *e; /**< Entries in file order. */
} lk_manifest;

/** Parse @p path strictly (errors name the file, line and field). */
int lk_manifest_read(const char *path, lk_manifest *m, lk_error *err);
/** The entry called @p name, or NULL. */
const lk_manifest_entry *lk_manifest_find(const lk_manifest *m, const char *name);
/**
 * The entry called @p name for model @p model, or NULL with @p err saying that there is no
 * such dataset (listing the model's datasets) or that it belongs to another model.
 * @p path is the manifest's path, for the messages.
 */
const lk_manifest_entry *lk_manifest_find_model(const lk_manifest *m, const char *path,
                                                const char *name, const char *model,
                                                lk_error *err);
/**
 * Read the manifest at @p path and copy out the entry called @p name for model @p model
 * (errors as lk_manifest_find_model()). When @p generated_only is not NULL the dataset must
 * be generated from its spec, never stored: @p generated_only names the model's datasets in
 * the error (e.g. "string"). Returns 0 or -1.
 */
int lk_manifest_lookup(const char *path, const char *name, const char *model,
                       const char *generated_only, lk_manifest_entry *out, lk_error *err);
/** Free a manifest (safe on a zeroed struct). */
void lk_manifest_free(lk_manifest *m);

#ifdef __cplusplus
}
#endif
#endif
