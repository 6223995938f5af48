/* The --bench report (labkit/harness.h): per launch, time per step from N-step and 0-step
   pairs, cell updates, bandwidth against the copy yardstick, speedups; the CSV row. */
#include "harness_state.h"

#include <stdio.h>
#include <string.h>

/* The points a step works on: the unit of the bench's cell updates and bytes per cell. */
static size_t step_points(const lk_output_shape *sh)
{
    return sh->points ? sh->points : (size_t)sh->rows * sh->cols;
}

void lk_bench_header(lk_run *run)
{
    const lk_output_shape *sh = &run->shape;
    printf("bench %s on %s\n", run->lab->name, run->r.device);
    if (sh->points)
        printf("  dataset            %s (%zu points a step, %d x %d outputs), %d steps\n",
               run->label, sh->points, sh->rows, sh->cols, run->steps);
    else
        printf("  dataset            %s (%d x %d = %zu cells), %d steps\n", run->label, sh->rows,
               sh->cols, (size_t)sh->rows * sh->cols, run->steps);
    printf("  copy bandwidth     %.1f GB/s (read + write; the faster of cudaMemcpy %.1f and a "
           "copy kernel %.1f)\n", run->r.copy.best_bps * 1e-9, run->r.copy.memcpy_bps * 1e-9,
           run->r.copy.kernel_bps * 1e-9);
    printf("  serial             %.3f ms per step (%d steps timed)\n",
           run->state->serial_ms_step, run->serial_steps);
    if (run->state->unpinned_reason[0])
        printf("  host buffers       pageable (%s): the transfers' time varies more\n",
               run->state->unpinned_reason);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

int lk_bench_report(lk_run *run, const launch *l, lk_error *err)
{
    struct lk_run_state *st = run->state;
    const lk_output_shape *sh = &run->shape;
    const size_t n = step_points(sh);
    const int bsteps = run->lab->baseline_steps > 0 ? run->lab->baseline_steps : run->steps;
    /* Before lk_stats_of sorts the samples: the pairs are in the order they were taken. */
    const double ms = lk_per_step_of_pairs(st->samples[SERIES_STEPS], st->samples[SERIES_ZERO],
                                           min_int(st->nsamples[SERIES_STEPS],
                                                   st->nsamples[SERIES_ZERO]),
                                           run->steps);
    const double zero_spread = lk_zero_step_spread(st->samples[SERIES_ZERO],
                                                   min_int(st->nsamples[SERIES_STEPS],
                                                           st->nsamples[SERIES_ZERO]));
    const int resolved = lk_steps_resolved(st->samples[SERIES_STEPS], st->samples[SERIES_ZERO],
                                           min_int(st->nsamples[SERIES_STEPS],
                                                   st->nsamples[SERIES_ZERO]));
    const double bms = lk_per_step_of_pairs(st->samples[SERIES_GIVEN_STEPS],
                                            st->samples[SERIES_GIVEN_ZERO],
                                            min_int(st->nsamples[SERIES_GIVEN_STEPS],
                                                    st->nsamples[SERIES_GIVEN_ZERO]),
                                            bsteps);
    lk_stats s[NSERIES];
    for (int k = 0; k < NSERIES; k++) {
        if (st->nsamples[k])
            lk_stats_of(st->samples[k], st->nsamples[k], &s[k]);
        else
            memset(&s[k], 0, sizeof s[k]);
    }
    double updates = ms > 0 ? n / (ms * 1e-3) : 0.0;
    double bw = ms > 0 ? sh->bytes_per_cell_step * n / (ms * 1e-3) : 0.0;
    double speedup = ms > 0 ? st->serial_ms_step / ms : 0.0;
    printf("  launch             %s\n", l->label);
    printf("  whole run          %.3f ms median of %d (min %.3f, max %.3f); overhead (0 steps) %.3f ms\n",
           s[SERIES_STEPS].median, s[SERIES_STEPS].n, s[SERIES_STEPS].min, s[SERIES_STEPS].max,
           s[SERIES_ZERO].median);
    printf("  time per step      %.4f ms (median of the %d runs less the 0-step run after each)\n",
           ms, min_int(s[SERIES_STEPS].n, s[SERIES_ZERO].n));
    if (!resolved)
        printf("  NOISE              the %d steps add less than twice the spread of the 0-step "
               "runs (%.1f ms, twice their median deviation): the figure above is noise; time "
               "more steps (--steps) or read the kernel time of make bench-profile\n",
               run->steps, zero_spread);
    printf("  cell updates/s     %.3e\n", updates);
    printf("  effective bandwidth %.1f GB/s (%.0f B per cell per step)\n", bw * 1e-9,
           sh->bytes_per_cell_step);
    printf("  %% of copy          %.1f %%\n", 100.0 * bw / run->r.copy.best_bps);
    /* The formula counts every cell; a kernel that skips still cells moves less: the bytes
       it really moves come from the counters (make bench-profile). */
    const double bound_ms = sh->min_bytes_per_cell_step > 0.0
                                ? sh->min_bytes_per_cell_step * n / run->r.copy.best_bps * 1e3
                                : 0.0;
    if (bound_ms > 0.0)
        printf("  one-step bound     %.4f ms per step (%.0f B per cell at the copy bandwidth); "
               "measured bytes: make bench-profile\n", bound_ms, sh->min_bytes_per_cell_step);
    printf("  speedup vs serial  %.1fx\n", speedup);
    if (l->given >= 0) {
        const char *name = run->lab->variants[l->given].name;
        printf("  %-18s %.4f ms per step (%d steps timed, whole run %.3f ms)\n", name, bms,
               bsteps, s[SERIES_GIVEN_STEPS].median);
        printf("  speedup vs %-7s %.1fx\n", name, ms > 0 ? bms / ms : 0.0);
    }
    memset(st->nsamples, 0, sizeof st->nsamples);
    st->have_steps_ref = 0;
    if (!run->opt.csv)
        return 0;
    FILE *f = fopen(run->opt.csv, "a");
    if (!f)
        return lk_fail(err, "%s: cannot open for appending: check the folder exists",
                       run->opt.csv);
    if (ftell(f) == 0)
        fputs("lab,gpu,dataset,rows,cols,steps,launch,ms_per_step,cell_updates_per_s,"
              "effective_GBps,copy_GBps,memcpy_GBps,copy_kernel_GBps,pct_of_copy,"
              "serial_ms_per_step,speedup,formula_bytes_per_cell,bound_bytes_per_cell,"
              "bound_ms_per_step,resolved\n", f);
    const lk_copy_bandwidth *c = &run->r.copy;
    fprintf(f, "%s,\"%s\",%s,%d,%d,%d,\"%s\",%.6f,%.6e,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f,%.2f,"
               "%.0f,%.0f,%.6f,%d\n",
            run->lab->name, run->r.device, run->label, sh->rows, sh->cols, run->steps,
            l->label, ms, updates, bw * 1e-9, c->best_bps * 1e-9, c->memcpy_bps * 1e-9,
            c->kernel_bps * 1e-9, 100.0 * bw / c->best_bps, st->serial_ms_step, speedup,
            sh->bytes_per_cell_step, sh->min_bytes_per_cell_step, bound_ms, resolved);
    if (fclose(f) != 0)
        return lk_fail(err, "%s: write failed: check the disk", run->opt.csv);
    return 0;
}

void lk_bench_launch_failed(lk_run *run, launch *l)
{
    struct lk_run_state *st = run->state;
    printf("  launch             %s FAILED: %s\n", l->label, run->err.msg);
    l->failed = 1;
    st->bench_failed = 1;
    memset(st->nsamples, 0, sizeof st->nsamples);
    st->have_steps_ref = 0;
    /* Skip the rest of this launch's calls. */
    const int li = (int)(l - st->launches);
    while (st->next < st->nplan && st->plan[st->next].launch == li)
        st->next++;
}
