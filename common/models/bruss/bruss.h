/**
 * @file bruss.h
 * @brief The 2-D Brusselator BRUSS2D-MIX integrated by explicit Euler (lab 05's stretch
 * model): one copy of the arithmetic for the serial reference, the given kernel and yours.
 *
 * Two species U and V on an m x m grid (Kulbe 2012, section 3.3; full reference in
 * labs/05-diamond-tiling/README.md), with the right-hand side of M. Korch's test equation
 * BRUSS2D-MIX, from the solvers the thesis's CPU code starts from. The state is one vector
 * of 2m^2 doubles, row by row, U and V alternating per grid point:
 *
 *   y[i], i = 2m k + 2j + v   (row k, column j; v = 0: U, v = 1: V)
 *
 * and with c = alpha N1^2, N1 = m - 1, alpha = 2e-3 (the Brusselator A = 1, B = 3.4):
 *
 *   U' = 1 + U^2 V - 4.4 U + c (U_n + U_s + U_w + U_e - 4U)
 *   V' = 3.4 U - U^2 V     + c (V_n + V_s + V_w + V_e - 4V)
 *
 * where n, s, w, e are the grid neighbours (rows k -+ 1, columns j -+ 1). A neighbour beyond
 * the border is replaced by a second copy of the opposite one (a reflecting boundary:
 * row -1 reads row 1, row m reads row m - 2, the same for columns), so m >= 2. The access
 * distance is 2m components, one grid row of both species: it grows with the grid.
 *
 * Explicit Euler is stable for h <= 1/(4 c) (the diffusion's spectral radius is about
 * 8c): the kit uses h = min(1e-3, 1/(8 c)), half the bound, and never more than 1e-3 so
 * that the reaction terms stay resolved on small grids (bruss_h()).
 *
 * The Laplacian is summed as ((n + s) + (w + e)) - 4 y: a mirrored grid gives the same sum
 * bit for bit (each pair is commutative), so mirror symmetry holds exactly. The functions
 * below are `static inline` and `__host__ __device__` under nvcc: the serial reference and
 * every kernel do the same arithmetic in the same order (labs/README.md, "Numerical
 * policy").
 */
#ifndef LABKIT_BRUSS_H
#define LABKIT_BRUSS_H

#include <stddef.h>

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

/** The diffusion constant alpha of BRUSS2D-MIX. */
#define BRUSS_ALPHA 2e-3
/** The largest Euler step the kit uses (small grids, where diffusion allows more). */
#define BRUSS_H_MAX 1e-3
/** Smallest grid side: every point needs a neighbour to reflect. */
#define BRUSS_MIN_M 2
/** Largest grid side: 2m^2 components must be indexable by an int (m = 16384: 4 GiB). */
#define BRUSS_MAX_M 16384
/** Bytes a one-step-per-launch step moves per component: read 8, write 8. */
#define BRUSS_BYTES_PER_COMPONENT_STEP 16.0

/** A parsed generator spec `bruss:MxM:SEED`. */
typedef struct bruss_spec {
    int m;                   /**< Grid side. */
    unsigned long long seed; /**< 0: Korch's initial state; else a perturbation of it. */
} bruss_spec;

/** A Brusselator: the grid side and the initial state (2m^2 doubles, interleaved). */
typedef struct bruss {
    int m;      /**< Grid side m >= 2. */
    double *y0; /**< Initial state. */
} bruss;

/** Components of an m x m grid: 2m^2. */
LK_HD static inline size_t bruss_components(int m)
{
    return 2 * (size_t)m * (size_t)m;
}

/** The diffusion coefficient c = alpha N1^2, N1 = m - 1. */
LK_HD static inline double bruss_c(int m)
{
    return BRUSS_ALPHA * ((double)(m - 1) * (double)(m - 1));
}

/** The Euler step: half the stability bound 1/(4c), at most BRUSS_H_MAX. */
LK_HD static inline double bruss_h(int m)
{
    const double half_bound = 1.0 / (8.0 * bruss_c(m));
    return half_bound < BRUSS_H_MAX ? half_bound : BRUSS_H_MAX;
}

/** The row (or column) a neighbour at @p q reads on a side of @p m: q itself inside, the
    mirror image 1 or m - 2 beyond the border (the reflecting boundary). */
LK_HD static inline int bruss_reflect(int q, int m)
{
    return q < 0 ? 1 : q >= m ? m - 2 : q;
}

/** f_U at a point: its U and V, and the U of its four neighbours (reflected). */
LK_HD static inline double bruss_f_u(double c, double u, double v, double un, double us,
                                     double uw, double ue)
{
    return 1.0 + u * u * v - 4.4 * u + c * (((un + us) + (uw + ue)) - 4.0 * u);
}

/** f_V at a point: its U and V, and the V of its four neighbours (reflected). */
LK_HD static inline double bruss_f_v(double c, double u, double v, double vn, double vs,
                                     double vw, double ve)
{
    return 3.4 * u - u * u * v + c * (((vn + vs) + (vw + ve)) - 4.0 * v);
}

/**
 * The Euler step of one grid point: from its (U, V) and its neighbours' at level t, its
 * (U, V) at level t + 1, with h = bruss_h(m) and c = bruss_c(m). Neighbours are given
 * as (U, V) pairs north, south, west, east, already reflected at the border.
 */
LK_HD static inline void bruss_point_step(double h, double c, double u, double v,
                                          const double *n, const double *s,
                                          const double *w, const double *e, double *u_new,
                                          double *v_new)
{
    *u_new = u + h * bruss_f_u(c, u, v, n[0], s[0], w[0], e[0]);
    *v_new = v + h * bruss_f_v(c, u, v, n[1], s[1], w[1], e[1]);
}

/** Parse `bruss:MxM:SEED` (the grid is square, 2 <= M <= BRUSS_MAX_M). */
int bruss_spec_parse(const char *s, bruss_spec *out, lk_error *err);

/** Make the initial state of @p spec (allocates sim->y0; free with bruss_free()):
    U = 0.5 + j/(m-1), V = 1 + 5k/(m-1) (Korch), plus, for a seed other than 0, a uniform
    perturbation in [-0.1, 0.1) of every value. */
int bruss_generate(const bruss_spec *spec, bruss *sim, lk_error *err);

/** 1 when @p spec is a generator spec of this model (`bruss:...`). */
int bruss_is_spec(const char *spec);

/** How the manifest's datasets of this model and `--gen` specs become an bruss
    (lk_dataset_load(), lk_run_open_dataset()). */
extern const lk_dataset_kind bruss_datasets;
/** Load manifest dataset @p name (model `bruss`): its state, steps and md5 (either may be
    NULL). */
int bruss_load_dataset(const char *manifest_path, const char *name, bruss *sim,
                       int *steps, char *md5, lk_error *err);

/** Free the state (safe on a zeroed struct). */
void bruss_free(bruss *sim);

/** md5 of a state of side @p m as raw little-endian doubles (what `--bin` writes). */
int bruss_md5(const double *y, int m, char hex[33], lk_error *err);

/** Write a state as text: one line per grid point, `k j U V` with 17 significant digits. */
int bruss_write_text(const char *path, const double *y, int m, lk_error *err);

/**
 * The serial reference (common/models/bruss/serial.c, the string's listing): @p steps
 * explicit Euler steps of the Brusselator from sim->y0 into @p y_out (2m^2 doubles).
 */
int bruss_serial(const bruss *sim, int steps, double *y_out, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
