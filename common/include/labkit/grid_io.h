/**
 * @file grid_io.h
 * @brief Reading and writing 2-D grids of doubles.
 *
 * Formats:
 * - the course's ESRI-ASCII convention: a header file of six `key value` pairs (`ncols`,
 *   `nrows`, `xllcorner`, `yllcorner`, `cellsize`, `NODATA_value`, any whitespace,
 *   keys case-insensitive) and body files holding only nrows*ncols values in row-major order,
 *   one grid row of ncols values per line (blank lines are ignored);
 * - a standard single-file `.asc` (the same header followed by the body);
 * - the course text dump: every value printed with `%f` followed by two spaces, one grid row
 *   per line ending in `\n`, no header (its md5 is the course's correctness hash);
 * - raw little-endian binary doubles.
 *
 * Parsing is strict: every malformed input fails with `file:line:column: what was found:
 * what was expected`. Values are plain decimals (`-12.5`, `3e-4`, `.5`, `7.`), converted to
 * exactly the double that the course's atof() gives; NaN, infinity, hexadecimal floats and
 * values that overflow a double are rejected. Nothing is half-returned: lk_read_asc() frees
 * what it allocated, and lk_read_body()/lk_read_binary() may leave the caller's array
 * partially written but then return -1.
 */
#ifndef LABKIT_GRID_IO_H
#define LABKIT_GRID_IO_H

#include <stddef.h>
#include "labkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of rows or columns accepted (guards against absurd headers). */
#define LK_GRID_MAX_DIM 1000000
/** Largest number of cells accepted (2^31 - 1, so int indexing stays valid). */
#define LK_GRID_MAX_CELLS 2147483647LL

/** The six values of an ESRI-ASCII header. */
typedef struct lk_grid_header {
    int ncols;        /**< Columns (x). */
    int nrows;        /**< Rows (y). */
    double xllcorner; /**< x of the lower-left corner. */
    double yllcorner; /**< y of the lower-left corner. */
    double cellsize;  /**< Cell side length, > 0. */
    double nodata;    /**< NODATA_value. */
} lk_grid_header;

/** A row-major grid of doubles owned by the struct. */
typedef struct lk_grid {
    int rows;     /**< Number of rows. */
    int cols;     /**< Number of columns. */
    double *data; /**< rows*cols values, row-major; NULL when empty. */
} lk_grid;

/** Allocate a zero-filled rows x cols grid. */
int lk_grid_alloc(lk_grid *g, int rows, int cols, lk_error *err);

/**
 * Parse a grid size written ROWSxCOLS (e.g. `610x496`, rows first, as generator specs give
 * it), each between 1 and LK_GRID_MAX_DIM; -1 with a message that shows the form otherwise.
 */
int lk_parse_grid_size(const char *s, int *rows, int *cols, lk_error *err);
/** Free the grid's data and reset it to empty (safe on an empty grid). */
void lk_grid_free(lk_grid *g);

/**
 * Parse a header-only file (course convention): `key value` pairs separated by any
 * whitespace, keys in any order and any case. ncols, nrows, xllcorner (or xllcenter),
 * yllcorner (or yllcenter) and cellsize are required; NODATA_value is optional (default
 * -9999). A center is converted to the corner (minus cellsize/2). Tokens after the header
 * are an error. On failure @p hdr is left untouched.
 */
int lk_read_header(const char *path, lk_grid_header *hdr, lk_error *err);
/**
 * Parse a body-only file of exactly rows*cols finite values into @p out, row-major. Each
 * line holds one grid row of exactly @p cols values separated by spaces or tabs (blank lines
 * are ignored), so a header with nrows and ncols swapped is caught. On failure returns -1
 * and @p out may be partially written.
 */
int lk_read_body(const char *path, int rows, int cols, double *out, lk_error *err);
/**
 * Parse a single-file `.asc`: header lines (as lk_read_header(), NODATA_value optional), then
 * the body; the header ends at the first line whose first token is numeric. On success @p g
 * receives a newly allocated grid (its previous contents are not freed; release it with
 * lk_grid_free()). On failure @p hdr and @p g are left untouched and nothing stays allocated.
 */
int lk_read_asc(const char *path, lk_grid_header *hdr, lk_grid *g, lk_error *err);

/**
 * Write a header-only file: the six keys in course order, one per line, each value with the
 * fewest digits (15 to 17) that read back to the same double.
 */
int lk_write_header(const char *path, const lk_grid_header *hdr, lk_error *err);
/**
 * Write values as a body file with full precision (`%.17g`, separated by one space, one grid
 * row per line), so they read back bit for bit. Non-finite values are refused (-1, no file).
 */
int lk_write_body(const char *path, const double *v, int rows, int cols, lk_error *err);
/** Write a single-file `.asc`: header then body, as lk_write_header() and lk_write_body(). */
int lk_write_asc(const char *path, const lk_grid_header *hdr, const double *v, lk_error *err);

/** Write the course text dump (`%f` + two spaces per value, `\n` per row). */
int lk_write_course_text(const char *path, const double *v, int rows, int cols, lk_error *err);
/** md5 (32 hex digits + NUL) of the course text dump of @p v, without writing a file. */
int lk_course_text_md5(const double *v, int rows, int cols, char hex[33], lk_error *err);

/** Write @p n doubles as raw little-endian binary. */
int lk_write_binary(const char *path, const double *v, size_t n, lk_error *err);
/**
 * Read exactly @p n little-endian doubles (file size must be n*8 bytes). On failure @p v
 * may be partially written.
 */
int lk_read_binary(const char *path, double *v, size_t n, lk_error *err);
/** md5 of @p n doubles as they would be written by lk_write_binary(). */
int lk_binary_md5(const double *v, size_t n, char hex[33], lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
