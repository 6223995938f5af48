/**
 * @file swe.h
 * @brief The 2-D shallow-water equations (Lax-Friedrichs): one copy of the model for every
 * lab that uses it (02 coalescing, 03 shared memory, 06 reductions).
 *
 * State per cell: water height Z (m) and the discharges Qx, Qy (m^2/s). Following the
 * thesis (Stramare 2012), x is the row index i and y the column index j: Qx flows along i
 * (down the picture), Qy along j (across it, the direction that is contiguous in memory).
 * Each field is stored row-major with one ghost layer: (rows + 2) x (cols + 2) values,
 * interior cells i = 1..rows, j = 1..cols, cell (i, j) at `i * (cols + 2) + j`.
 *
 * A step (swe_step()) first sets the ghost layer of the current state by the closed-wall
 * rule (even copy of Z and of the tangential discharge, odd copy of the normal discharge;
 * the four corners are never read), then computes every interior cell of the next state
 * from its four neighbours (no centre term) with swe_update().
 *
 * Physics: the textbook equations on a flat bottom with g = 9.8, fluxes
 * F = (Qx, Qx^2/Z + g Z^2/2, Qx Qy/Z) along x and G = (Qy, Qx Qy/Z, Qy^2/Z + g Z^2/2) along
 * y. The thesis's code used g Z/2 as the pressure term and differenced the cross flux
 * Qx Qy/Z along the same axis as the normal flux; both are corrected here (Stramare 2012,
 * section 2.6, algorithms 2.1 and 2.2; full reference in labs/02-coalescing/README.md).
 *
 * The per-cell functions are `static inline` and `__host__ __device__` under nvcc, so the
 * serial reference and every kernel run exactly the same arithmetic in the same order, which
 * makes CPU and GPU results bit-identical (labs/README.md, "Numerical policy"). Every sum of two
 * neighbour terms pairs the two cells of one axis, so the update is exactly symmetric under
 * transposition (i <-> j together with Qx <-> Qy).
 */
#ifndef LABKIT_SWE_H
#define LABKIT_SWE_H

#include <stddef.h>
#include <stdio.h>

#include "labkit/error.h"
#include "labkit/manifest.h"

#ifndef LK_HD
#ifdef __CUDACC__
#define LK_HD __host__ __device__
#else
/** Marks a function usable from host and device code (empty in C). */
#define LK_HD
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Gravity (m/s^2), as in the seed. */
#define SWE_G 9.8
/** g / 2, the factor of the pressure flux g Z^2 / 2 (exact: halving 9.8 is exact). */
#define SWE_HALF_G (0.5 * SWE_G)
/** Side of the square domain along the dam-break axis (m). */
#define SWE_DOMAIN 500.0
/** Distance of the dam from the first wall (m). */
#define SWE_DAM_AT 100.0
/** Water height behind the dam (m). */
#define SWE_DEEP 20.0
/** Water height in front of the dam, and of the lake under the bumps (m). */
#define SWE_SHALLOW 10.0
/**
 * Courant number of the fixed time step: dt = SWE_COURANT * dx / s, with s the largest
 * max(|u|, |v|) + sqrt(g Z) of the initial state. Von Neumann analysis of this four-point
 * Lax-Friedrichs scheme (frozen coefficients, speeds a, b along x, y) gives stability if
 * and only if (a dt/dx)^2 + (b dt/dx)^2 <= 1/2 (Strikwerda, Finite Difference Schemes and
 * Partial Differential Equations, 2nd ed., SIAM 2004, chapter 7, exercise on the 2-D
 * Lax-Friedrichs scheme), so s dt/dx <= 1/2 suffices. 0.4 leaves room for the speeds to
 * grow as the water moves (the dam break's fastest wave goes from 14.0 to 16.1 m/s: 0.46).
 */
#define SWE_COURANT 0.4
/** Bytes a step must move per cell at least: read Z, Qx, Qy (24) and write them (24). */
#define SWE_BYTES_PER_CELL_STEP 48.0

/** The state of one cell. */
typedef struct swe_q {
    double z;  /**< Water height Z (m). */
    double qx; /**< Discharge along x = i (m^2/s). */
    double qy; /**< Discharge along y = j (m^2/s). */
} swe_q;

/** The three fields of a state, each (rows + 2) x (cols + 2) with the ghost layer. */
typedef struct swe_fields {
    double *Z;  /**< Water height. */
    double *Qx; /**< Discharge along i. */
    double *Qy; /**< Discharge along j. */
} swe_fields;

/** Index of cell (i, j) in a field whose rows hold @p width values (width = cols + 2). */
LK_HD static inline size_t swe_at(int i, int j, int width)
{
    return (size_t)i * (size_t)width + (size_t)j;
}

/**
 * @p num / @p z, the same bits as the division, without dividing when @p num is zero and
 * @p z positive: the quotient is then @p num itself, a zero of the same sign. CUDA's IEEE
 * double division leaves its fast path for a zero quotient, and water at rest (most of a
 * dam break, all of its Qy) has zero discharges, so the skip roughly halves a step's time.
 */
LK_HD static inline double swe_div(double num, double z)
{
    if (num == 0.0 && z > 0.0)
        return num;
    return num / z;
}

/** Flux of x-momentum along x: Qx^2 / Z + g Z^2 / 2. */
LK_HD static inline double swe_flux_xx(swe_q q)
{
    return swe_div(q.qx * q.qx, q.z) + SWE_HALF_G * q.z * q.z;
}

/** Cross flux Qx Qy / Z (x-momentum along y, y-momentum along x). */
LK_HD static inline double swe_flux_xy(swe_q q)
{
    return swe_div(q.qx * q.qy, q.z);
}

/** Flux of y-momentum along y: Qy^2 / Z + g Z^2 / 2. */
LK_HD static inline double swe_flux_yy(swe_q q)
{
    return swe_div(q.qy * q.qy, q.z) + SWE_HALF_G * q.z * q.z;
}

/**
 * The fluxes of a state, each a division: what the update reads of a neighbour (xx and xy of
 * n and s, xy and yy of w and e). A kernel that shares cells between threads can compute
 * them once per cell instead of once per reader.
 */
typedef struct swe_flux {
    double xx; /**< swe_flux_xx() */
    double xy; /**< swe_flux_xy() */
    double yy; /**< swe_flux_yy() */
} swe_flux;

/** All three fluxes of @p q. */
LK_HD static inline swe_flux swe_fluxes(swe_q q)
{
    swe_flux f;
    f.xx = swe_flux_xx(q);
    f.xy = swe_flux_xy(q);
    f.yy = swe_flux_yy(q);
    return f;
}

/**
 * swe_update() with the neighbours' fluxes given (swe_fluxes(); of n and s only xx and
 * xy are read, of w and e only xy and yy): the same operations in the same order.
 */
LK_HD static inline swe_q swe_update_fluxed(swe_q n, swe_q s, swe_q w, swe_q e,
                                                 swe_flux fn, swe_flux fs, swe_flux fw,
                                                 swe_flux fe, double r)
{
    swe_q out;
    out.z = 0.25 * ((s.z + n.z) + (e.z + w.z)) - r * ((s.qx - n.qx) + (e.qy - w.qy));
    out.qx = 0.25 * ((s.qx + n.qx) + (e.qx + w.qx)) - r * ((fs.xx - fn.xx) + (fe.xy - fw.xy));
    out.qy = 0.25 * ((e.qy + w.qy) + (s.qy + n.qy)) - r * ((fe.yy - fw.yy) + (fs.xy - fn.xy));
    return out;
}

/**
 * Lax-Friedrichs update of one cell from its neighbours n = (i-1, j), s = (i+1, j),
 * w = (i, j-1), e = (i, j+1); @p r = dt / (2 dx). The cell itself is not read.
 * Keep this operation order: results are compared bit for bit.
 */
LK_HD static inline swe_q swe_update(swe_q n, swe_q s, swe_q w, swe_q e,
                                          double r)
{
    /* Only the eight fluxes the update reads: a division each. */
    swe_flux fn, fs, fw, fe;
    fn.xx = swe_flux_xx(n);
    fn.xy = swe_flux_xy(n);
    fs.xx = swe_flux_xx(s);
    fs.xy = swe_flux_xy(s);
    fw.xy = swe_flux_xy(w);
    fw.yy = swe_flux_yy(w);
    fe.xy = swe_flux_xy(e);
    fe.yy = swe_flux_yy(e);
    fn.yy = fs.yy = fw.xx = fe.xx = 0.0; /* never read */
    return swe_update_fluxed(n, s, w, e, fn, fs, fw, fe, r);
}

/** The state of cell @p at of three separate (structure-of-arrays) fields. */
LK_HD static inline swe_q swe_load(const double *Z, const double *Qx, const double *Qy,
                                         size_t at)
{
    swe_q q;
    q.z = Z[at];
    q.qx = Qx[at];
    q.qy = Qy[at];
    return q;
}

/**
 * One interior cell (i, j) of a step on structure-of-arrays fields: reads the four
 * neighbours of (Z, Qx, Qy), writes (Zn, Qxn, Qyn) at (i, j). @p width = cols + 2.
 */
LK_HD static inline void swe_step_cell(int i, int j, int width, double r, const double *Z,
                                       const double *Qx, const double *Qy, double *Zn,
                                       double *Qxn, double *Qyn)
{
    const size_t c = swe_at(i, j, width);
    swe_q q = swe_update(swe_load(Z, Qx, Qy, c - (size_t)width),
                               swe_load(Z, Qx, Qy, c + (size_t)width),
                               swe_load(Z, Qx, Qy, c - 1), swe_load(Z, Qx, Qy, c + 1), r);
    Zn[c] = q.z;
    Qxn[c] = q.qx;
    Qyn[c] = q.qy;
}

/** Ghost value behind a wall across x (rows 0 and rows + 1): Qx is reflected. */
LK_HD static inline swe_q swe_wall_x(swe_q inside)
{
    swe_q g;
    g.z = inside.z;
    g.qx = -inside.qx;
    g.qy = inside.qy;
    return g;
}

/** Ghost value behind a wall across y (columns 0 and cols + 1): Qy is reflected. */
LK_HD static inline swe_q swe_wall_y(swe_q inside)
{
    swe_q g;
    g.z = inside.z;
    g.qx = inside.qx;
    g.qy = -inside.qy;
    return g;
}

/** Store @p q at index @p at of three structure-of-arrays fields. */
LK_HD static inline void swe_store(double *Z, double *Qx, double *Qy, size_t at, swe_q q)
{
    Z[at] = q.z;
    Qx[at] = q.qx;
    Qy[at] = q.qy;
}

/** Ghost cells of column @p j (1..cols) in rows 0 and rows + 1, from rows 1 and rows. */
LK_HD static inline void swe_ghost_column_ends(int j, int rows, int width, double *Z,
                                               double *Qx, double *Qy)
{
    swe_store(Z, Qx, Qy, swe_at(0, j, width),
              swe_wall_x(swe_load(Z, Qx, Qy, swe_at(1, j, width))));
    swe_store(Z, Qx, Qy, swe_at(rows + 1, j, width),
              swe_wall_x(swe_load(Z, Qx, Qy, swe_at(rows, j, width))));
}

/** Ghost cells of row @p i (1..rows) in columns 0 and cols + 1, from columns 1 and cols. */
LK_HD static inline void swe_ghost_row_ends(int i, int cols, int width, double *Z,
                                            double *Qx, double *Qy)
{
    swe_store(Z, Qx, Qy, swe_at(i, 0, width),
              swe_wall_y(swe_load(Z, Qx, Qy, swe_at(i, 1, width))));
    swe_store(Z, Qx, Qy, swe_at(i, cols + 1, width),
              swe_wall_y(swe_load(Z, Qx, Qy, swe_at(i, cols, width))));
}

/**
 * Cell (i, j) of a state, 0 <= i <= rows + 1 and 0 <= j <= cols + 1 (not a corner), with the
 * ghost cells computed from the interior by the wall rule instead of read: what the ghost
 * layer holds once swe_ghost_*_ends() have run, for code that never updates it.
 */
LK_HD static inline swe_q swe_cell_walled(int i, int j, int rows, int cols,
                                               const double *Z, const double *Qx,
                                               const double *Qy)
{
    const int width = cols + 2;
    if (i == 0)
        return swe_wall_x(swe_load(Z, Qx, Qy, swe_at(1, j, width)));
    if (i == rows + 1)
        return swe_wall_x(swe_load(Z, Qx, Qy, swe_at(rows, j, width)));
    if (j == 0)
        return swe_wall_y(swe_load(Z, Qx, Qy, swe_at(i, 1, width)));
    if (j == cols + 1)
        return swe_wall_y(swe_load(Z, Qx, Qy, swe_at(i, cols, width)));
    return swe_load(Z, Qx, Qy, swe_at(i, j, width));
}

/** A shallow-water problem: grid, time step and initial state (host memory, owned). */
typedef struct swe {
    int rows;        /**< Interior cells along x = i. */
    int cols;        /**< Interior cells along y = j. */
    double dx;       /**< Cell side (m); cells are square. */
    double dt;       /**< Time step (s), fixed for the run (swe_time_step()). */
    swe_fields q; /**< Initial state, ghost layer set by the wall rule. */
} swe;

/** Values per field including the ghost layer: (rows + 2) * (cols + 2). */
static inline size_t swe_cells(const swe *sim)
{
    return (size_t)(sim->rows + 2) * (size_t)(sim->cols + 2);
}

/** The coefficient r = dt / (2 dx) of swe_update(). */
static inline double swe_r(const swe *sim)
{
    return sim->dt / (2.0 * sim->dx);
}

/** Initial conditions the generator makes. */
typedef enum swe_kind {
    SWE_DAM,     /**< Dam break along x: 20 m over the first 100 m of rows, 10 m after. */
    SWE_DAM_ROT, /**< The same dam rotated: along y, over the first 100 m of columns. */
    SWE_BUMPS    /**< A 10 m lake with random round humps (a seed), water at rest. */
} swe_kind;

/** What the generator makes: deterministic from these fields alone, on every platform. */
typedef struct swe_spec {
    swe_kind kind;        /**< Initial condition. */
    int rows;                /**< Interior cells along x (>= 1). */
    int cols;                /**< Interior cells along y (>= 1). */
    unsigned long long seed; /**< Seed of SWE_BUMPS (unused by the dams). */
} swe_spec;

/**
 * Parse a generator spec: `dam:ROWSxCOLS`, `damrot:ROWSxCOLS` or `bumps:ROWSxCOLS:SEED`.
 * The dams' cell size is 500 m over the cells along the dam-break axis (rows for `dam`,
 * columns for `damrot`), the bumps' 500 m over the longer side.
 */
int swe_spec_parse(const char *s, swe_spec *out, lk_error *err);

/** Allocate the three fields of a rows x cols state (with the ghost layer), zeroed. */
int swe_fields_alloc(swe_fields *f, int rows, int cols, lk_error *err);
/** Free fields allocated by swe_fields_alloc() (safe on zeroed fields). */
void swe_fields_free(swe_fields *f);
/** Copy all three fields, ghost layers included. */
void swe_fields_copy(const swe *sim, const swe_fields *src, const swe_fields *dst);

/**
 * Start a problem by hand: allocate a rows x cols state with cell size @p dx, zeroed.
 * Fill the interior of sim->q, then call swe_finish().
 */
int swe_alloc(swe *sim, int rows, int cols, double dx, lk_error *err);
/**
 * Check the interior state (finite, Z > 0), set the ghost layer and compute dt with
 * swe_time_step(). Returns -1 with a message naming the first bad cell.
 */
int swe_finish(swe *sim, lk_error *err);
/** Build a problem from @p spec with the generator. */
int swe_generate(const swe_spec *spec, swe *sim, lk_error *err);
/** How the manifest's datasets of this model and `--gen` specs become an swe
    (lk_dataset_load(), lk_run_open_dataset()). */
extern const lk_dataset_kind swe_datasets;
/**
 * Load dataset @p name (model `swe`) of the manifest at @p manifest_path from its generator
 * spec. If @p steps is not NULL it receives the manifest's step count; @p md5 (33 bytes)
 * its hash.
 */
int swe_load_dataset(const char *manifest_path, const char *name, swe *sim, int *steps,
                     char *md5, lk_error *err);
/** Free a problem (safe on a zeroed struct). */
void swe_free(swe *sim);

/**
 * The fixed time step of @p q: SWE_COURANT * dx / s, s = max over interior cells of
 * max(|Qx|, |Qy|) / Z + sqrt(g Z). Fails if the state is not finite or Z <= 0 somewhere.
 */
int swe_time_step(const swe *sim, const swe_fields *q, double *dt, lk_error *err);
/** Steps needed to reach @p seconds of simulated time: ceil(seconds / dt). */
int swe_steps_for_time(const swe *sim, double seconds, int *steps, lk_error *err);

/** Set the ghost layer of @p q by the closed-wall rule (rows, then columns). */
void swe_ghosts(int rows, int cols, const swe_fields *q);
/** One step: swe_ghosts() on @p cur, then every interior cell of @p next (this and
    swe_serial() are the serial program, common/models/swe/serial.c). */
void swe_step(int rows, int cols, double r, const swe_fields *cur,
              const swe_fields *next);
/**
 * Serial reference: run @p steps steps from sim->q, leaving the state in @p out (three
 * fields of swe_cells() values; only the interior is the result).
 */
int swe_serial(const swe *sim, int steps, const swe_fields *out, lk_error *err);

/** Total water volume sum(Z) dx^2 over the interior (m^3), compensated summation. */
double swe_mass(const swe *sim, const swe_fields *q);

/**
 * md5 of the result: the interior of Z, then of Qx, then of Qy, each row-major, as raw
 * little-endian doubles (what swe_write_binary() writes). This is the correctness hash.
 */
int swe_md5(const swe *sim, const swe_fields *q, char hex[33], lk_error *err);
/** Write the interior of Z, Qx, Qy as raw little-endian doubles (3 * rows * cols values). */
int swe_write_binary(const char *path, const swe *sim, const swe_fields *q,
                     lk_error *err);
/**
 * Write the interior of the three fields as text for people: for each field a line
 * `# NAME rows cols`, then one grid row per line, values `%.17g` separated by a space.
 */
int swe_write_text(const char *path, const swe *sim, const swe_fields *q,
                   lk_error *err);
/** PNG of the water height Z (interior) with a colour scale (labkit/png.h lk_png_field). */
int swe_write_png(const char *path, const swe *sim, const swe_fields *q,
                  const char *title, lk_error *err);

/**
 * Compare the interior of two states bit for bit, field by field; returns the number of
 * differing values. When they differ, explain each differing field (first differences as
 * (row, col) of the arrays with the ghost layer, so interior rows and columns start at 1)
 * and say when every difference is next to a wall: to @p f if not NULL, into @p buf if not
 * NULL. @p what prefixes the field names (may be NULL).
 */
size_t swe_compare(const swe *sim, const swe_fields *expected,
                   const swe_fields *got, int kfirst, const char *what, FILE *f,
                   char *buf, size_t size);

/** The Stoker solution of a dam break on a wet bed (flat bottom, no friction). */
typedef struct lk_stoker {
    double hl;    /**< Depth behind the dam (m). */
    double hr;    /**< Depth in front of it (m), 0 < hr < hl. */
    double g;     /**< Gravity. */
    double hm;    /**< Depth between the rarefaction and the shock. */
    double um;    /**< Velocity there. */
    double shock; /**< Shock speed. */
} lk_stoker;

/**
 * Solve the Stoker equation for the middle state: the rarefaction's
 * u_m = 2 (sqrt(g hl) - sqrt(g hm)) equals the shock's
 * u_m = (hm - hr) sqrt(g (hm + hr) / (2 hm hr)); bisection on (hr, hl) to full precision.
 */
int lk_stoker_solve(double hl, double hr, double g, lk_stoker *s, lk_error *err);
/**
 * Depth and velocity at distance @p xi from the dam (positive towards the shallow side)
 * at time @p t > 0, before any wave reaches a wall.
 */
void lk_stoker_eval(const lk_stoker *s, double xi, double t, double *h, double *u);

#ifdef __cplusplus
}
#endif
#endif
