/* The harness's private state and the functions its files share (common/src/harness*.c
   only; labs see labkit/harness.h): one run's plan of GPU calls, their samples and buffers. */
#ifndef LABKIT_HARNESS_STATE_H
#define LABKIT_HARNESS_STATE_H

#include <stdio.h>

#include "labkit/harness.h"

enum { EXIT_USAGE = 2, EXIT_MISMATCH = 3 };

/* What a planned GPU call is for. */
typedef enum call_kind {
    CALL_CHECKED, /* poisoned, untimed: the result that counts (bench: checked vs serial) */
    CALL_ONCE,    /* --once: checked and timed at once */
    CALL_TIMED,   /* timed, compared with the checked result */
    CALL_STEPS,   /* bench: N steps, timed; all must agree */
    CALL_ZERO,    /* bench: 0 steps, timed (allocation and transfers) */
    CALL_GIVEN_STEPS, CALL_GIVEN_ZERO /* bench: the given version, N and 0 steps */
} call_kind;

enum { SERIES_STEPS, SERIES_ZERO, SERIES_GIVEN_STEPS, SERIES_GIVEN_ZERO, NSERIES };

typedef struct planned {
    call_kind kind;
    int launch; /* index into state->launches */
    int steps;
} planned;

typedef struct launch {
    int variant; /* index into lab->variants, -1: the lab's only code */
    int given;   /* index of the given variant --bench compares with, -1: none */
    int tile_x, tile_y;
    char label[96];
    int failed;
} launch;

struct lk_run_state {
    planned *plan;
    int nplan, next; /* next: index of the call handed out last + 1 */
    launch launches[8];
    int nlaunches;
    double *scratch, *steps_ref; /* timed outputs; the first bench N-step output */
    int have_steps_ref;
    double *samples[NSERIES];
    int nsamples[NSERIES];
    const void *inputs[4];
    void *input_copies[4];
    size_t input_bytes[4];
    int ninputs;
    double serial_t0, call_t0;
    double serial_ms_step;
    lk_gpu_call call;
    int gpu_needed;
    int cpu_only; /* the chosen variant runs on the CPU: no GPU probe, no device syncs */
    int bench_failed;
    void *pinned[8]; /* host buffers page-locked for the GPU calls (pin_buffers) */
    int npinned;
    char unpinned_reason[160]; /* why a buffer stayed pageable, "" if none did */
};

/* ---- options (harness_options.c) ------------------------------------------------------ */

/** Variant @p i of the lab, or NULL (-1: the lab's only code). */
const lk_variant *lk_lab_variant_at(const lk_lab *lab, int i);
/** How many variants the lab has. */
int lk_lab_nvariants(const lk_lab *lab);
/** The variant a run without --variant uses (the first not given), or -1. */
int lk_lab_default_variant(const lk_lab *lab);
/** The variant called @p name, or -1. */
int lk_lab_find_variant(const lk_lab *lab, const char *name);
/** Parse the command line into @p o: 0, 1 after -h, -1 with @p err for a usage error. */
int lk_options_parse(int argc, char **argv, const lk_lab *lab, lk_options *o, lk_error *err);

/* ---- the bench report (harness_bench.c) ----------------------------------------------- */

/** The bench report's header: dataset, copy bandwidth, serial time. */
void lk_bench_header(lk_run *run);
/** The report of one bench launch, from its samples; resets them for the next launch. */
int lk_bench_report(lk_run *run, const launch *l, lk_error *err);
/** Under --bench a launch that fails is reported and the others still run. */
void lk_bench_launch_failed(lk_run *run, launch *l);

/* ---- outputs (harness_outputs.c) ------------------------------------------------------ */

/** The --json line of the run. */
void lk_run_write_json(FILE *f, const lk_run *run);
/** The human summary: dataset, times, md5s, speedup, the check. */
void lk_run_print_summary(const lk_run *run);

#endif
