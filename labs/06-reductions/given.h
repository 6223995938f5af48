/* Lab 06, given (read-only): the variants of the command line, the reference the GPU output
   is judged against, and the code (given.cu) that owns the device buffers, calls your
   functions and holds the CUB baseline. */
#ifndef LAB06_GIVEN_H
#define LAB06_GIVEN_H

#include "lab.h"
#include "labkit/harness.h"
#include "reduce/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The variants `--variant` names: the five rungs of lab06_variant, then `cub` (given:
    cub::DeviceReduce::Sum for the sum, your lab06_stats for the rest) and `lagrange` (part
    B, the code of the Lagrange datasets). */
extern const lk_variant lab06_variants[];

/** Check `--variant` against the input: the rungs and cub reduce fields, lagrange
    interpolates; a Lagrange dataset under --bench needs --variant lagrange. */
int lab06_check_variant(const char *variant, const reduce_input *in, int bench,
                        lk_error *err);

/**
 * One GPU run of @p in: allocate, copy in, run @p variant (part A: lab06_stats once, the sum
 * 1 + @p steps times; part B: lab06_lagrange 1 + @p steps times), copy the result into
 * @p out (in->nout values), free.
 */
int lab06_gpu_run(const reduce_input *in, const char *variant, int steps, double *out,
                  lk_error *err);

/** Fill in->gold and in->bound (and set in->have_reference), the reference the GPU output
    is judged against: part A reduce_serial() and reduce_sum_bound(), part B
    reduce_lagrange_barycentric() and lk_lagrange_bound(). Returns the seconds it took (part
    B: the serial barycentric time, the honest baseline of the README). */
double lab06_reference(reduce_input *in);

/** The serial reference the driver times: part A reduce_serial(), part B
    reduce_lagrange_naive(), max(@p steps, 1) times (a serial step is the whole reduction
    or evaluation); the result does not depend on @p steps. Returns 0. */
int lab06_serial(const reduce_input *in, int steps, double *out, lk_error *err);

#ifdef __cplusplus
}
#endif
#endif
