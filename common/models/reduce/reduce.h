/**
 * @file reduce.h
 * @brief The inputs of lab 06 (reductions): fields to reduce and Lagrange interpolation
 * problems, their generators, and the tolerance rule their floating-point sums are judged by.
 *
 * A generator spec is `KIND:ROWSxCOLS:SEED`. Fields (part A): `debris` (SciddicaT source
 * thickness, sciddicat_generate()), `lake` (shallow-water water height Z of
 * swe_generate()'s bumps, interior only), and the adversarial sets `equal` (one value
 * everywhere), `alternating` (signs alternate, the sum cancels), `denormal` (subnormal
 * values of both signs), `nan` (uniform values and one NaN). Lagrange problems (part B):
 * ROWS = n + 1 Chebyshev nodes on [-5, 5], COLS = S evaluation points, equispaced on
 * [-5, 5] for SEED 0, uniformly random otherwise; data `runge` 1/(1+x^2), `sign` sign(x),
 * `ones` 1 (partition of unity), `cubic` x^3 - 2x.
 *
 * Outputs: a field gives REDUCE_NOUT values (reduce_out); a Lagrange problem gives its
 * S interpolated values. Max, count and bounding box are exact; a sum is judged against its
 * reference with reduce_sum_bound(), an interpolated value with
 * lk_lagrange_bound().
 */
#ifndef LABKIT_REDUCE_H
#define LABKIT_REDUCE_H

#include <stddef.h>

#include "labkit/error.h"
#include "labkit/manifest.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Unit roundoff of double, 2^-53. */
#define REDUCE_U 0x1p-53

/** Where each result of a field reduction sits in the output. */
typedef enum reduce_out {
    LK_OUT_SUM = 0,     /**< Sum of all values (tolerance). */
    LK_OUT_MAX = 1,     /**< Largest value; NaN if any value is NaN (exact). */
    LK_OUT_COUNT = 2,   /**< Number of values above the threshold (exact). */
    LK_OUT_ROW_MIN = 3, /**< Bounding box of those cells: first row (rows when none). */
    LK_OUT_ROW_MAX = 4, /**< Last row (-1 when none). */
    LK_OUT_COL_MIN = 5, /**< First column (cols when none). */
    LK_OUT_COL_MAX = 6, /**< Last column (-1 when none). */
    REDUCE_NOUT = 7  /**< Values in the output. */
} reduce_out;

/** What a generator makes. */
typedef enum reduce_kind {
    REDUCE_DEBRIS, REDUCE_LAKE, REDUCE_EQUAL, REDUCE_ALTERNATING,
    REDUCE_DENORMAL, REDUCE_NAN,
    LK_LAGRANGE_RUNGE, LK_LAGRANGE_SIGN, LK_LAGRANGE_ONES, LK_LAGRANGE_CUBIC,
    REDUCE_NKINDS
} reduce_kind;

/** A parsed generator spec. */
typedef struct reduce_spec {
    reduce_kind kind;     /**< What to make. */
    int rows;                /**< Field rows, or n + 1 nodes. */
    int cols;                /**< Field columns, or S points. */
    unsigned long long seed; /**< Seed. */
} reduce_spec;

/** One input of lab 06, owned (reduce_input_free()). */
typedef struct reduce_input {
    reduce_spec spec; /**< Where it came from. */
    int lagrange;        /**< 1: a Lagrange problem (part B), 0: a field (part A). */
    /* Part A */
    int rows;            /**< Field rows. */
    int cols;            /**< Field columns. */
    double *field;       /**< rows x cols values, row-major. */
    double threshold;    /**< Count and bounding box take the values above it (>). */
    /* Part B */
    int n1;              /**< Nodes, n + 1. */
    int S;               /**< Evaluation points. */
    double *x;           /**< Nodes (Chebyshev, first kind, on [-5, 5]). */
    double *y;           /**< Data at the nodes. */
    double *xs;          /**< Evaluation points. */
    /** The reference the GPU output is judged against (filled by the lab's driver from its
        serial reference, the "gold"), and each value's bound (0: exact). */
    double *gold;
    double *bound;       /**< Bound of each output value; 0 means exact. */
    size_t nout;         /**< Values in the output: REDUCE_NOUT or S. */
    int have_reference;  /**< 1 once the driver filled gold and bound. A graded build has no
                              reference: its `--bin` holds the raw values, which a trusted
                              build judges (`--judge`). */
} reduce_input;

/** Names of the kinds, for messages: "debris, lake, ...". */
#define REDUCE_GEN_HELP                                                                 \
    "KIND:ROWSxCOLS:SEED; fields: debris, lake, equal, alternating, denormal, nan "        \
    "(e.g. debris:1024x1024:1); Lagrange: runge, sign, ones, cubic with ROWS = n+1 nodes, "  \
    "COLS = S points (e.g. runge:51x301:0)"

/** Parse `KIND:ROWSxCOLS:SEED`. */
int reduce_spec_parse(const char *s, reduce_spec *out, lk_error *err);

/** Generate @p spec into @p in (allocates; gold and bound are allocated, unfilled). */
int reduce_generate(const reduce_spec *spec, reduce_input *in, lk_error *err);

/** How the manifest's datasets of this model and `--gen` specs become an reduce_input
    (lk_dataset_load(), lk_run_open_dataset()). */
extern const lk_dataset_kind reduce_datasets;
/** Load a datasets/MANIFEST entry of model `reduce` or `lagrange`; @p steps and @p md5
    (33 bytes) may be NULL. */
int reduce_load_dataset(const char *manifest_path, const char *name, reduce_input *in,
                        int *steps, char *md5, lk_error *err);

/** Free an input (safe on a zeroed one). */
void reduce_input_free(reduce_input *in);

/**
 * Bound on |computed sum - reference| for a sum of @p n values whose absolute values sum to
 * @p sum_abs, computed in any order where no value goes through more than
 * d = ceil(sqrt(n)) + ceil(log2(n)) + 1 additions (runs of at most sqrt(n) values per
 * thread, then trees or atomics over the partial sums), against a compensated reference
 * @p reference: gamma_d sum_abs + 2u|reference| + (n u)^2 sum_abs.
 */
double reduce_sum_bound(size_t n, double sum_abs, double reference);

/** Bound of an interpolated value: 10 (n+1) u kappa, kappa = sum_j |y_j L_j(x)|. */
double lk_lagrange_bound(int n1, double kappa);

/* ---------------------------------------------------------------------------------------
 * The serial reference (common/models/reduce/serial.c; lab 06's serial.c compiles it).
 * ------------------------------------------------------------------------------------- */

/** Sum (compensated: the reference), max, count and bounding box of a field, as the
    REDUCE_NOUT values above; also sum |x| into @p sum_abs (may be NULL). */
void reduce_serial(const double *x, int rows, int cols, double threshold, double *out,
                   double *sum_abs);

/** The naive Lagrange evaluation, product of ratios (the serial baseline). */
void reduce_lagrange_naive(const double *x, const double *y, int n1, const double *xs,
                           double *ys, int S);

/** Barycentric (second form) Lagrange evaluation, the "gold" reference, with the condition
    number kappa_s = sum_j |y_j L_j(xs_s)| of each value into @p kappa (may be NULL). */
void reduce_lagrange_barycentric(const double *x, const double *y, int n1, const double *xs,
                                 double *ys, double *kappa, int S);

/**
 * The judged form of an output value: 2 when @p got equals @p reference (both NaN counts as
 * equal), else 2 + (got - reference) / bound (infinite for an exact value, bound 0). A value
 * is within its bound exactly when this is within [1, 3], i.e. within relative 0.5 of 2:
 * the grader's `policy tolerance 0.5` on `--bin` files is the derived bound.
 */
double reduce_judged(double got, double reference, double bound);

/**
 * Judge @p got (in->nout values) against in->gold and in->bound; returns how many are out of
 * bounds and says in @p buf where the first is. (lk_output_shape::judge, ctx = the input.)
 */
size_t reduce_judge(const void *in, const double *got, char *buf, size_t size);

/** Write @p v (n values) judged against in->gold/in->bound as raw doubles (`--bin`); without
    a reference (a graded build, in->have_reference 0) the values as they are. */
int reduce_write_judged(const char *path, const reduce_input *in, const double *v,
                        lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
