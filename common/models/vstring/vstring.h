/**
 * @file vstring.h
 * @brief The vibrating string integrated by explicit Euler (lab 05): one copy of the model
 * for the serial reference, the given kernels and yours.
 *
 * N mass points, fixed ends. The state is one vector of 2N doubles, interleaved as in the
 * thesis (Kulbe 2012, section 3.3 and figure 5.6; full reference in
 * labs/05-diamond-tiling/README.md): `y[2p] = u_p` (displacement),
 * `y[2p + 1] = v_p` (velocity), p = 0..N-1. The right-hand side is
 *
 *   u_p' = v_p,   v_p' = K^2 (u_{p-1} - 2 u_p + u_{p+1}),   u_{-1} = u_N = 0,
 *
 * and a step is `y_new[j] = y[j] + h * f_j(y)` for every component j: the new state is
 * computed from the old one only. Access distance 3 in components (v_p reads u_{p-1}), one
 * point in mass points.
 *
 * Explicit Euler is unstable on this problem for every h: the eigenvalues of the right-hand
 * side are +-i w_q with w_q = 2 K sin(pi q / (2 (N + 1))), and a step multiplies mode q by
 * sqrt(1 + h^2 w_q^2) <= sqrt(1 + 4 K^2 h^2). With K = 1 and h = 1e-3 the growth after S
 * steps is at most exp(2 K^2 h^2 S): 1.02 after 1e4 steps, so every run of the kit stays
 * close to the exact (energy-conserving) motion.
 *
 * vstring_point_step() is `static inline` and `__host__ __device__` under nvcc: the serial
 * reference and every kernel do exactly the same arithmetic in the same order, so their
 * results are identical to the bit (labs/README.md, "Numerical policy").
 */
#ifndef LABKIT_VSTRING_H
#define LABKIT_VSTRING_H

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

/** The string constant K^2 (K = 1). */
#define VSTRING_K2 1.0
/** The Euler step h. */
#define VSTRING_H 1e-3
/** Bytes a one-step-per-launch step moves per component: read 8, write 8. */
#define VSTRING_BYTES_PER_COMPONENT_STEP 16.0
/** Most mass points of a generated string (2N doubles must be indexable by an int). */
#define VSTRING_MAX_POINTS 500000000

/** The initial states `--gen KIND:1xN:SEED` makes. */
typedef enum vstring_kind {
    VSTRING_SINE = 0,  /**< u = sin(q pi (p + 1) / (N + 1)), v = 0, q = 1 + SEED mod N. */
    VSTRING_PLUCK = 1, /**< Triangle of height 1 peaking at a point the seed picks, v = 0. */
    VSTRING_RANDOM = 2 /**< u and v uniform in [-1, 1) from the seed. */
} vstring_kind;

/** A parsed generator spec. */
typedef struct vstring_spec {
    vstring_kind kind;    /**< The initial state. */
    int n;                   /**< Mass points N. */
    unsigned long long seed; /**< Its seed. */
} vstring_spec;

/** A string: N mass points and the initial state y0 (2N doubles, interleaved). */
typedef struct vstring {
    int n;      /**< Mass points N >= 1. */
    double *y0; /**< Initial state, 2N doubles. */
} vstring;

/** Components of the state of @p sim: 2N. */
static inline size_t vstring_components(const vstring *sim)
{
    return 2 * (size_t)sim->n;
}

/**
 * The Euler step of one mass point: from u_{p-1}, u_p, u_{p+1} and v_p at level t, the new
 * u_p and v_p at level t + 1. Pass 0 for a neighbour beyond a fixed end. The arithmetic is
 * the serial reference's `y[j] + h * f_j(y)` with f_j the thesis's ode_eval_comp.
 */
LK_HD static inline void vstring_point_step(double u_left, double u, double u_right,
                                            double v, double *u_new, double *v_new)
{
    *u_new = u + VSTRING_H * v;
    *v_new = v + VSTRING_H * (VSTRING_K2 * (u_left - 2.0 * u + u_right));
}

/** Parse `sine:1xN:SEED`, `pluck:1xN:SEED` or `random:1xN:SEED` (the string is 1-D: one row). */
int vstring_spec_parse(const char *s, vstring_spec *out, lk_error *err);

/** Make the initial state of @p spec (allocates sim->y0; free with vstring_free()). */
int vstring_generate(const vstring_spec *spec, vstring *sim, lk_error *err);

/** How the manifest's datasets of this model and `--gen` specs become an vstring
    (lk_dataset_load(), lk_run_open_dataset()). */
extern const lk_dataset_kind vstring_datasets;
/** Load manifest dataset @p name (model `vstring`): its state, steps and md5 (either may be
    NULL). */
int vstring_load_dataset(const char *manifest_path, const char *name, vstring *sim,
                         int *steps, char *md5, lk_error *err);

/** Free the string's state (safe on a zeroed struct). */
void vstring_free(vstring *sim);

/** md5 of a state of @p n points as raw little-endian doubles (what `--bin` writes). */
int vstring_md5(const double *y, int n, char hex[33], lk_error *err);

/** Write a state as text: one line per point, `p u v` with 17 significant digits. */
int vstring_write_text(const char *path, const double *y, int n, lk_error *err);

/**
 * The serial reference (common/models/vstring/serial.c): @p steps explicit Euler steps of
 * the string from sim->y0 into @p y_out (2N doubles).
 */
int vstring_serial(const vstring *sim, int steps, double *y_out, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
