/**
 * @file rng.h
 * @brief A small deterministic random number generator (xoshiro256**, seeded by splitmix64).
 *
 * The same seed gives the same sequence on every platform, so generated datasets and their
 * hashes are reproducible.
 */
#ifndef LABKIT_RNG_H
#define LABKIT_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Generator state. */
typedef struct lk_rng {
    uint64_t s[4]; /**< xoshiro256** state. */
} lk_rng;

/** Seed the generator (any value, 0 included). */
void lk_rng_seed(lk_rng *r, uint64_t seed);
/** Next 64 random bits. */
uint64_t lk_rng_u64(lk_rng *r);
/** Uniform double in [0, 1) with 53 random bits. */
double lk_rng_uniform(lk_rng *r);
/** Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t lk_rng_below(lk_rng *r, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
