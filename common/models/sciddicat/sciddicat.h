/**
 * @file sciddicat.h
 * @brief The SciddicaT debris-flow cellular automaton: one copy of the model for every lab.
 *
 * State per cell: altitude z, debris thickness h and four outflows Sf (towards North, West,
 * East, South), stored as four row-major layers: Sf[k * rows * cols + i * cols + j].
 * A step is: reset the outflows, compute them by minimisation of differences, update h.
 * Border rows and columns are never updated: flow that reaches them leaves the domain.
 *
 * The per-cell functions are `static inline` and `__host__ __device__` under nvcc, so the
 * serial reference and every kernel run exactly the same arithmetic in the same order:
 * that is what makes CPU and GPU results bit-identical (labs/README.md, "Numerical policy").
 */
#ifndef LABKIT_SCIDDICAT_H
#define LABKIT_SCIDDICAT_H

#include <stddef.h>

#include "labkit/error.h"
#include "labkit/manifest.h"
#include "labkit/grid_io.h"

#ifdef __CUDACC__
#define LK_HD __host__ __device__
#else
/** Marks a function usable from host and device code (empty in C). */
#define LK_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Outflow damping (relaxation) factor p_r. */
#define SCIDDICAT_P_R 0.5
/** Adherence: thickness below which debris cannot leave a cell (metres). */
#define SCIDDICAT_P_EPSILON 0.001
/** Number of outflow layers in Sf (von Neumann neighbourhood without the centre). */
#define SCIDDICAT_NFLOWS 4
/**
 * Bytes a step must move per cell at least, for bandwidth figures: reset writes Sf (32),
 * flows read z, h (16) and write Sf (32), width update reads h, Sf (40) and writes h (8).
 */
#define SCIDDICAT_BYTES_PER_CELL_STEP 128.0

/**
 * Bytes a step must move per cell in any implementation: read z and h, write h (the bound
 * `make bench` quotes beside the formula above; a kernel that skips still cells moves less).
 */
#define SCIDDICAT_MIN_BYTES_PER_CELL_STEP 24.0
/** Largest |altitude| the loaders accept (metres): see sciddicat_is_still(). */
#define SCIDDICAT_MAX_ALTITUDE 1e10
/** Largest total initial thickness the loaders accept (metres): see sciddicat_is_still(). */
#define SCIDDICAT_MAX_TOTAL_THICKNESS 1e10

/**
 * 1 when a cell of thickness @p h has no outflow this step, whatever its neighbours: a
 * kernel may then skip its flows computation (and the loads of its neighbours) and get the
 * serial reference's bits. The test is h <= p_epsilon / 2, not m = h - p_epsilon <= 0: with
 * m = 0 and three near-equal neighbour levels, the rounded average can exceed them all and
 * the reference does send tiny outflows. With m <= -p_epsilon / 2 the average's rounding
 * error (below 6.7e-16 times the sum of the magnitudes involved) cannot close the gap while
 * every |z| + h stays below 1.2e11 m, which the loaders' limits guarantee (thickness only
 * moves between cells, so no cell exceeds the total).
 */
LK_HD static inline int sciddicat_is_still(double h)
{
    return h <= 0.5 * SCIDDICAT_P_EPSILON;
}

/** Index of cell (i, j) in a row-major layer with @p cols columns. */
LK_HD static inline size_t sciddicat_at(int i, int j, int cols)
{
    return (size_t)i * (size_t)cols + (size_t)j;
}

/** Index of outflow @p k (0 N, 1 W, 2 E, 3 S) of cell (i, j) in Sf. */
LK_HD static inline size_t sciddicat_flow_at(int k, int i, int j, int rows, int cols)
{
    return (size_t)k * (size_t)rows * (size_t)cols + sciddicat_at(i, j, cols);
}

/** Reset process: zero the four outflows of interior cell (i, j). */
LK_HD static inline void sciddicat_reset_cell(int i, int j, int rows, int cols, double *Sf)
{
    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
}

/**
 * Flows process of interior cell (i, j): minimisation of differences (Di Gregorio & Serra).
 * Writes only the outflows of directions that stay in the average; the others keep the
 * zero written by the reset. The order of every addition and the division by the integer
 * count are those of the course's reference and must not change.
 */
LK_HD static inline void sciddicat_flows_cell(int i, int j, int rows, int cols,
                                              const double *Sz, const double *Sh,
                                              double *Sf, double p_r, double p_epsilon)
{
    double u[5];
    const double m = Sh[sciddicat_at(i, j, cols)] - p_epsilon;
    u[0] = Sz[sciddicat_at(i, j, cols)] + p_epsilon;
    u[1] = Sz[sciddicat_at(i - 1, j, cols)] + Sh[sciddicat_at(i - 1, j, cols)];
    u[2] = Sz[sciddicat_at(i, j - 1, cols)] + Sh[sciddicat_at(i, j - 1, cols)];
    u[3] = Sz[sciddicat_at(i, j + 1, cols)] + Sh[sciddicat_at(i, j + 1, cols)];
    u[4] = Sz[sciddicat_at(i + 1, j, cols)] + Sh[sciddicat_at(i + 1, j, cols)];

    unsigned eliminated = 0; /* bit n set: neighbour n left the average (a bitmask keeps it
                                in a register on the GPU, where bool[5] may spill) */
    double average;
    int again;
    do {
        again = 0;
        average = m;
        int cells_count = 0;
        for (int n = 0; n < 5; n++)
            if (!(eliminated & (1u << n))) {
                average += u[n];
                cells_count++;
            }
        if (cells_count != 0)
            average /= cells_count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !(eliminated & (1u << n))) {
                eliminated |= 1u << n;
                again = 1;
            }
    } while (again);

    for (int k = 0; k < SCIDDICAT_NFLOWS; k++)
        if (!(eliminated & (1u << (k + 1))))
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = (average - u[k + 1]) * p_r;
}

/**
 * Width-update process of interior cell (i, j): the new thickness, from inflows minus
 * outflows in the order North, West, East, South.
 */
LK_HD static inline double sciddicat_width_cell(int i, int j, int rows, int cols,
                                                const double *Sh, const double *Sf)
{
    double h = Sh[sciddicat_at(i, j, cols)];
    h += Sf[sciddicat_flow_at(3, i - 1, j, rows, cols)] - Sf[sciddicat_flow_at(0, i, j, rows, cols)];
    h += Sf[sciddicat_flow_at(2, i, j - 1, rows, cols)] - Sf[sciddicat_flow_at(1, i, j, rows, cols)];
    h += Sf[sciddicat_flow_at(1, i, j + 1, rows, cols)] - Sf[sciddicat_flow_at(2, i, j, rows, cols)];
    h += Sf[sciddicat_flow_at(0, i + 1, j, rows, cols)] - Sf[sciddicat_flow_at(3, i, j, rows, cols)];
    return h;
}

/** A loaded, initialised SciddicaT problem (host memory, owned by the struct). */
typedef struct sciddicat {
    int rows;           /**< Grid rows (nrows). */
    int cols;           /**< Grid columns (ncols). */
    lk_grid_header hdr; /**< Header of the input grids. */
    double *z;          /**< Altitude after initialisation (z -= h on wet interior cells). */
    double *h0;         /**< Initial thickness. */
} sciddicat;

/** Terrain kinds the generator makes. */
typedef enum sciddicat_terrain {
    LK_TERRAIN_VALLEY, /**< A noisy valley descending southwards, debris blob near the top. */
    LK_TERRAIN_PLANE,  /**< A steep noisy plane; the flow reaches the southern border. */
    LK_TERRAIN_DOME,   /**< A noisy square pyramid, debris on its top: it leaves through all
                            four borders. */
    LK_TERRAIN_FLOOD   /**< A gentle noisy slope with debris on every interior cell: no dry
                            cell to skip. */
} sciddicat_terrain;

/** What the generator makes: deterministic from these fields alone, on every platform. */
typedef struct sciddicat_spec {
    sciddicat_terrain terrain; /**< Terrain kind. */
    int rows;                     /**< Rows (>= 1). */
    int cols;                     /**< Columns (>= 1). */
    unsigned long long seed;      /**< Seed of the noise. */
} sciddicat_spec;

/** Parse a terrain name ("valley", "plane", "dome", "flood"). */
int sciddicat_terrain_parse(const char *name, sciddicat_terrain *out, lk_error *err);
/** Name of a terrain kind. */
const char *sciddicat_terrain_name(sciddicat_terrain t);

/**
 * Parse a generator spec `KIND:ROWSxCOLS:SEED`, e.g. `valley:610x496:1`.
 */
int sciddicat_spec_parse(const char *s, sciddicat_spec *out, lk_error *err);

/**
 * Generate the raw inputs of @p spec: header, DEM (altitudes, metres) and source thickness,
 * each rows*cols (caller-allocated). Uses only correctly rounded IEEE operations, so the
 * same spec gives the same bits everywhere.
 */
int sciddicat_generate(const sciddicat_spec *spec, lk_grid_header *hdr, double *dem,
                       double *source, lk_error *err);

/** Load the course layout: header file, DEM body and source body; then initialise. */
int sciddicat_load(const char *header, const char *dem, const char *source,
                   sciddicat *sim, lk_error *err);
/** Load two single-file `.asc` grids (DEM and source, same header); then initialise. */
int sciddicat_load_asc(const char *dem, const char *source, sciddicat *sim,
                       lk_error *err);
/** Build a problem from @p spec with the generator; then initialise. */
int sciddicat_load_generated(const sciddicat_spec *spec, sciddicat *sim,
                             lk_error *err);
/** How the manifest's datasets of this model and `--gen` specs become an sciddicat
    (lk_dataset_load(), lk_run_open_dataset()). */
extern const lk_dataset_kind sciddicat_datasets;
/**
 * Load dataset @p name of the manifest at @p manifest_path: its committed files when it is
 * stored (`<dir of manifest>/sciddicat/<name>_{header,dem,source}.txt`), else generated.
 * If @p steps is not NULL it receives the manifest's step count; @p md5 (33 bytes) its hash.
 */
int sciddicat_load_dataset(const char *manifest_path, const char *name, sciddicat *sim,
                           int *steps, char *md5, lk_error *err);
/** Free a problem (safe on a zeroed struct). */
void sciddicat_free(sciddicat *sim);

/**
 * The serial reference, defined in common/models/sciddicat/serial.c (one definition that
 * every SciddicaT lab's serial.c compiles): copy h0 into @p h (rows*cols) and run @p steps
 * steps on it.
 * If @p lost is not NULL it receives the thickness that left through the border.
 */
int sciddicat_serial(const sciddicat *sim, int steps, double *h, double *lost,
                     lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
