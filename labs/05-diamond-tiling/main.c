/* Lab 05 driver (read-only): the whole run in order. Check --variant and --tile, load the
   string, run the serial program (serial.c), run your tiles through the given loop over rows
   (given.cu), or a given baseline, as the harness plans it; compare and hash, report.
   `make bench` times your variants against the one-step-per-launch baseline on three sizes
   (bench.runs adds the baselines' own rows). The harness (labkit/harness.h) owns the
   options, the poisoning, the timing and the reports.
   A Brusselator input (--gen bruss:MxM:SEED or a bruss dataset: the stretch model) takes the
   same steps with the Brusselator's serial program and variants, `bruss` by default. */
#include <stdio.h>

#include "given.h"
#include "bruss/bruss_driver.h"
#include "vstring/vstring_driver.h"

/* The variants, C with named fields (the harness's lk_variant). `linear` stays the last
   given variant: the baseline of the string's --bench. */
const lk_variant lab05_variants[7] = {
    {.name = "diamond", .help = ": your diamonds, D/2 steps per launch (default)",
     .tile_x = 128, .tile_y = 64},
    {.name = "honeycomb", .help = ": your hexagons (stretch), WIDTHxHEIGHT free", .tile_x = 512,
     .tile_y = 64},
    {.name = "bruss",
     .help = ": your Brusselator row bands (stretch model; default on bruss inputs), "
             "ROWSxSTEPS (default: chosen for the GPU)",
     .tile_x = 0, .tile_y = 4, .named_only = 1, .compare_with = "bruss-linear"},
    {.name = "persistent", .help = ": given, one cooperative launch, grid barrier per step",
     .tile_x = 256, .tile_y = 1, .given = 1},
    {.name = "bruss-linear", .help = ": given Brusselator, one step per launch (bruss inputs)",
     .tile_x = 256, .tile_y = 1, .given = 1, .named_only = 1},
    {.name = "linear", .help = ": given, one step per launch (the baseline of --bench)",
     .tile_x = 256, .tile_y = 1, .given = 1},
    {0}};

static const lk_lab lab05 = {
    .name = LK_LAB,
    .title = "Vibrating string (explicit Euler); stretch: 2-D Brusselator",
    .options = LK_OPT_TILE,
    .gen_help = VSTRING_GEN_HELP "; or " BRUSS_GEN_HELP,
    .variants = lab05_variants,
    .standard_dataset = "string-pluck-1m",
    .bench_dataset = "string-random-50m",
    .bench_steps = 512,
    .bench_serial_steps = 2,
};

static int run_string(lk_run *run)
{
    vstring sim = {0};
    vstring_open(run, &sim);
    if (lk_run_serial_begin(run))
        lk_run_serial_end(run, vstring_serial(&sim, run->serial_steps, run->expected,
                                              &run->err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(run)) != NULL;) {
        lab05_method method;
        int width = c->tile_x, height = c->tile_y;
        lab05_tile_for_call(c->variant, c->given, run->opt.variant, &width, &height);
        c->rc = lab05_method_parse(c->variant, &method, &c->err) ||
                lab05_gpu_run(method, sim.n, sim.y0, c->out, c->steps, width, height, &c->err);
    }
    vstring_report(run, &sim);
    vstring_free(&sim);
    return lk_run_finish(run);
}

static int run_bruss(lk_run *run)
{
    bruss sim = {0};
    bruss_open(run, &sim);
    if (lk_run_serial_begin(run))
        lk_run_serial_end(run, bruss_serial(&sim, run->serial_steps, run->expected,
                                            &run->err));
    for (lk_gpu_call *c; (c = lk_run_next_gpu_call(run)) != NULL;) {
        lab05_method method;
        int width = c->tile_x, height = c->tile_y;
        lab05_tile_for_call(c->variant, c->given, run->opt.variant, &width, &height);
        c->rc = lab05_method_parse(c->variant, &method, &c->err) ||
                lab05_bruss_gpu_run(method, sim.m, sim.y0, c->out, c->steps, width, height,
                                    &c->err);
    }
    bruss_report(run, &sim);
    bruss_free(&sim);
    return lk_run_finish(run);
}

int main(int argc, char **argv)
{
    lk_run run;
    if (lk_run_start(&run, &lab05, argc, argv) != 0)
        return run.status;
    const int bruss = bruss_input(&run.opt);
    if (bruss && !run.opt.variant[0])
        snprintf(run.opt.variant, sizeof run.opt.variant, "bruss");
    if (lab05_check_model(run.opt.variant, bruss, &run.err) != 0 ||
        lab05_check_options(run.opt.variant, run.opt.tile_x, run.opt.tile_y, &run.err) != 0)
        return lk_run_usage_error(&run);
    return bruss ? run_bruss(&run) : run_string(&run);
}
