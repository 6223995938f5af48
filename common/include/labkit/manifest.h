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

/** What a model's generator returns when the generator spec itself is wrong. */
#define LK_BAD_SPEC 1

/**
 * How one model makes the problem of a dataset (the struct its functions take, e.g. an
 * swe), for lk_dataset_load() and the drivers: one per model, beside its generator.
 */
typedef struct lk_dataset_kind {
    const char *model; /**< The manifest's model column, e.g. "swe". */
    const char *noun;  /**< Its datasets in errors, e.g. "shallow-water". */
    /** Make @p problem from the generator spec @p spec: 0; LK_BAD_SPEC when the spec is
        wrong, -1 when a right one cannot be made (@p err says why). */
    int (*generate)(const char *spec, void *problem, lk_error *err);
    /** Load @p problem from the files of dataset @p name stored under @p dir (the
        manifest's folder); NULL when the model's datasets are always generated. */
    int (*load_stored)(const char *dir, const char *name, void *problem, lk_error *err);
} lk_dataset_kind;

/**
 * Make the problem of dataset @p name of @p kind's model in the manifest at
 * @p manifest_path (errors as lk_manifest_lookup()): from its stored files, or from its
 * generator spec, where a wrong spec is the manifest line's error. The entry's steps and
 * md5 go to @p steps and @p md5 (either may be NULL). Returns 0 or -1.
 */
int lk_dataset_load(const lk_dataset_kind *kind, const char *manifest_path, const char *name,
                    void *problem, int *steps, char *md5, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
