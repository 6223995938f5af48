/* Lab 06 driver (read-only): the whole run in order. Load the input (a field, or a Lagrange
   problem), compute the reference the GPU output is judged against, run the serial program
   (serial.c), run the given code (given.cu) with your functions (kernels.cu) as the harness
   plans it; judge, hash, report. `make bench` times every variant, CUB's sum included, on
   2^20, 2^24 and 2^28 values, and part B (bench.runs). The harness (labkit/harness.h) owns the
   options, the poisoning, the timing and the reports; the judging rule is reduce/reduce.h. */
#include <stdio.h>

#include "given.h"
#include "reduce/reduce_driver.h"

/* The variants, C with named fields (the harness's lk_variant). The fastest rung comes
   first: it is what runs (and what the grader times) by default. */
const lk_variant lab06_variants[] = {
    {.name = "singlepass",
     .help = ": one kernel, the last block to finish adds the partial sums (default)"},
    {.name = "tree", .help = ": shared-memory tree, one value per thread, a pass per level"},
    {.name = "shuffle", .help = ": warp shuffles, one value per thread, a pass per level"},
    {.name = "gridstride",
     .help = ": several values per thread, then one block adds the partial sums"},
    {.name = "atomic", .help = ": one atomicAdd per block (not reproducible bit for bit)",
     .reorders = 1},
    /* CUB does not promise the same bits run after run: judged, like atomic. */
    {.name = "cub", .help = ": given baseline, cub::DeviceReduce::Sum (max, count, box: yours)",
     .reorders = 1},
    {.name = "lagrange", .help = ": part B, the Lagrange datasets (their default)",
     .named_only = 1},
    {0}};

static const lk_lab lab06 = {
    .name = LK_LAB,
    .title = "Reductions",
    .gen_help = REDUCE_GEN_HELP,
    .variants = lab06_variants,
    .standard_dataset = "reduce-debris-odd",
    .bench_dataset = "reduce-2p28",
    .bench_steps = 1000,
    .bench_serial_steps = 1,
};

int main(int argc, char **argv)
{
    lk_run run;
    reduce_input in = {0};
    if (lk_run_start(&run, &lab06, argc, argv) != 0)
        return run.status;
    if (reduce_open(&run, &in) == 0 &&
        lab06_check_variant(run.opt.variant, &in, run.opt.bench, &run.err) != 0) {
        reduce_input_free(&in);
        return lk_run_usage_error(&run);
    }
    /* A graded build holds no reference: its --bin then has the raw values, and a trusted
       build of the kit judges them (--judge). */
    const int have_reference = lk_reference_linked((void (*)(void))reduce_serial);
    const double reference_s = run.status == 0 && have_reference ? lab06_reference(&in) : 0.0;
    if (in.lagrange && run.status == 0)
        printf("reference barycentric (gold) %.6f s, serial O(S n)\n", reference_s);
    if (lk_run_serial_begin(&run))
        lk_run_serial_end(&run, lab06_serial(&in, run.serial_steps, run.expected, &run.err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(&run)) != NULL;)
        c->rc = lab06_gpu_run(&in, in.lagrange ? "lagrange" : c->variant, c->steps, c->out,
                              &c->err);
    reduce_report(&run, &in);
    reduce_input_free(&in);
    return lk_run_finish(&run);
}
