/**
 * @file compare.h
 * @brief Explaining a mismatch between an expected and a computed grid.
 */
#ifndef LABKIT_COMPARE_H
#define LABKIT_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Bit pattern (a signalling NaN) that tests and drivers write into outputs before a run;
 * a cell still holding it was never written. Device buffers are poisoned with it too.
 */
#define LK_POISON_BITS 0x7ff4dead7ff4deadULL

/** How many differing cells a comparison remembers. */
#define LK_COMPARE_FIRST_MAX 16

/** One differing cell. */
typedef struct lk_cell_diff {
    int row;         /**< Row (0 at the top). */
    int col;         /**< Column. */
    double expected; /**< Reference value. */
    double got;      /**< Computed value. */
} lk_cell_diff;

/** Result of comparing two grids bit for bit. */
typedef struct lk_compare {
    size_t ndiff;                            /**< Cells whose bits differ. */
    int nfirst;                              /**< Entries used in @ref first. */
    lk_cell_diff first[LK_COMPARE_FIRST_MAX]; /**< First differences in row-major order. */
    double max_abs;                          /**< Largest |got - expected| (inf if a NaN). */
    /** Largest |got - expected| / |expected|; inf where expected is zero and got is not,
        0 for a change of the sign of zero only. */
    double max_rel;
    int max_row;                             /**< Row of the first max_abs (-1 if none). */
    int max_col;                             /**< Its column (-1 if none). */
    size_t nnan;                             /**< Cells where got is NaN but expected is not. */
    size_t npoison;                          /**< Differing cells where got is the poison. */
} lk_compare;

/** Fill @p n doubles with LK_POISON_BITS. */
void lk_poison(double *v, size_t n);

/** Does @p v hold exactly LK_POISON_BITS? */
int lk_is_poison(double v);

/**
 * Compare @p got with @p expected (rows x cols, row-major) bit for bit (-0.0 differs from
 * 0.0; NaNs with the same bits are equal); remember up to @p kfirst first differences in
 * row-major order (@p kfirst is clamped to 0..LK_COMPARE_FIRST_MAX). Returns the number of
 * differences; NULL grids or rows/cols < 1 compare as 0 cells. @p out may be NULL.
 */
size_t lk_compare_grids(const double *expected, const double *got, int rows, int cols,
                        int kfirst, lk_compare *out);

/**
 * Print a readable explanation to @p f: count, first differences (row, col, expected, got)
 * with `%.17g`, max abs/rel difference and where; a note when got is the NaN poison
 * (never written) and one when the computation produced other NaNs. @p what names the
 * compared quantity, e.g. "thickness h". @p f NULL means stderr.
 */
void lk_compare_print(FILE *f, const lk_compare *c, int rows, int cols, const char *what);

/**
 * As lk_compare_print() into a buffer: always NUL-terminated, never written past @p size;
 * a cut explanation ends in "...".
 */
void lk_compare_format(char *buf, size_t size, const lk_compare *c, int rows, int cols,
                       const char *what);

#ifdef __cplusplus
}
#endif
#endif
