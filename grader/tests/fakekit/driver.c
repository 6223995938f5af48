/* A stand-in lab driver for testing the grader's GPU stages on a machine without a GPU. It
 * takes the options of the kit's SciddicaT drivers that the grader uses (--serial, --gpu,
 * --dataset, --gen, --steps, --bin, --repeat, --once, --no-md5, --variant, --json,
 * --result-fd) and writes the same result line; its "GPU" runs call the student's fake_run() on the CPU, or with
 * `--variant given` a deliberately slow given version. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake.h"
#include "labkit/cli.h"
#include "labkit/grid_io.h"
#include "labkit/json.h"
#include "sciddicat/sciddicat.h"
#include "labkit/timing.h"

/* Milliseconds per step the given version sleeps: a lab's slow starting point. */
#define GIVEN_MS_PER_STEP 150

/* The lab's given version: the serial algorithm, GIVEN_MS_PER_STEP slower per step. */
static int given_run(const sciddicat *sim, double *h, int steps, lk_error *err)
{
    if (sciddicat_serial(sim, steps, h, NULL, err) != 0)
        return -1;
    long long ns = (long long)steps * GIVEN_MS_PER_STEP * 1000000LL;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

/* What a GPU would take for the steps of a timed call on the performance grid: a wait the
   grader's clock, which times the whole process, sees well above a process start's noise. */
#define DEVICE_MS_PER_STEP 3
static void device_steps(int steps)
{
    struct timespec ts = {0, (long)DEVICE_MS_PER_STEP * 1000000L};
    for (int s = 0; s < steps; s++)
        while (nanosleep(&ts, &ts) != 0) {
        }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"serial", no_argument, 0, 'S'},        {"gpu", no_argument, 0, 'G'},
        {"dataset", required_argument, 0, 'd'}, {"gen", required_argument, 0, 'g'},
        {"steps", required_argument, 0, 's'},   {"bin", required_argument, 0, 'b'},
        {"repeat", required_argument, 0, 'r'},  {"json", no_argument, 0, 'j'},
        {"result-fd", required_argument, 0, 'f'}, {"variant", required_argument, 0, 'v'},
        {"once", no_argument, 0, 'o'},          {"no-md5", no_argument, 0, 'n'},
        {"judge", required_argument, 0, 'J'},
        {0, 0, 0, 0}};
    const char *dataset = NULL, *gen = NULL, *bin = NULL, *variant = NULL, *judge = NULL;
    int serial = 0, steps = -1, repeat = 1, json = 0, fd = -1, once = 0, no_md5 = 0, c;
    lk_error err;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'S': serial = 1; break;
        case 'G': serial = 0; break;
        case 'd': dataset = optarg; break;
        case 'g': gen = optarg; break;
        case 's': steps = atoi(optarg); break;
        case 'b': bin = optarg; break;
        case 'r': repeat = atoi(optarg); break;
        case 'j': json = 1; break;
        case 'f': fd = atoi(optarg); break;
        case 'v': variant = optarg; break;
        case 'o': once = 1; break;
        case 'n': no_md5 = 1; break;
        case 'J': judge = optarg; break;
        default: return 2;
        }
    }
    if (once && (serial || repeat > 1)) {
        fprintf(stderr, "fake driver: --once goes with --gpu, not with --serial or --repeat\n");
        return 2;
    }
    sciddicat sim;
    int ds_steps = -1, rc;
    if (dataset) {
        rc = sciddicat_load_dataset(FAKE_KIT "/datasets/MANIFEST", dataset, &sim, &ds_steps,
                                    NULL, &err);
    } else {
        sciddicat_spec spec;
        rc = gen ? sciddicat_spec_parse(gen, &spec, &err) : lk_fail(&err, "no input");
        if (rc == 0)
            rc = sciddicat_load_generated(&spec, &sim, &err);
    }
    if (rc != 0) {
        fprintf(stderr, "fake driver: %s\n", err.msg);
        return 1;
    }
    if (steps < 0)
        steps = ds_steps >= 0 ? ds_steps : 4000;
    size_t n = (size_t)sim.rows * sim.cols;
    double *h = malloc(n * sizeof *h);
    char md5[33] = "";
    double serial_s = 0;
    lk_stats ms = {0, 0, 0, 0};
    const char *status = "ok";
    char error[1024] = "";
    if (serial) {
        double t0 = lk_wall_seconds();
        rc = sciddicat_serial(&sim, steps, h, NULL, &err);
        serial_s = lk_wall_seconds() - t0;
        if (rc == 0 && !no_md5)
            rc = lk_course_text_md5(h, sim.rows, sim.cols, md5, &err);
    } else if (judge) {
        /* The kit's drivers judge a graded run's raw values; this model's need no judging:
           they are taken as they are (a file of the wrong size is refused). */
        rc = lk_read_binary(judge, h, n, &err);
    } else if (variant && strcmp(variant, "given") != 0) {
        /* As the kit's drivers do: an error result line, exit status 1. */
        rc = lk_fail(&err, "--variant %s: unknown variant: leave --variant out to run your "
                           "code, or give --variant given for the given version", variant);
    } else {
        double *samples = malloc((size_t)repeat * sizeof *samples);
        if (repeat > 1)
            rc = variant ? given_run(&sim, h, steps, &err)
                         : fake_run(sim.rows, sim.cols, sim.z, sim.h0, h, steps, &err);
        for (int i = 0; rc == 0 && i < repeat; i++) {
            double t0 = lk_wall_seconds();
            rc = variant ? given_run(&sim, h, steps, &err)
                         : fake_run(sim.rows, sim.cols, sim.z, sim.h0, h, steps, &err);
            if (once && n > 10000)
                device_steps(steps);
            samples[i] = (lk_wall_seconds() - t0) * 1e3;
        }
        if (rc == 0)
            lk_stats_of(samples, repeat, &ms);
        free(samples);
    }
    if (rc == 0 && bin)
        rc = lk_write_binary(bin, h, n, &err);
    if (rc != 0) {
        status = "error";
        snprintf(error, sizeof error, "%s", err.msg);
        fprintf(stderr, "fake driver: %s\n", err.msg);
    }
    FILE *outs[2] = {json ? stdout : NULL, fd >= 0 ? fdopen(dup(fd), "w") : NULL};
    for (int k = 0; k < 2; k++) {
        FILE *f = outs[k];
        if (!f)
            continue;
        fprintf(f, "{\"lab\":\"01-fake\",\"dataset\":");
        lk_json_string(f, dataset ? dataset : gen);
        /* An even grid is reported as the shallow-water drivers report theirs: 2 fields of
           rows / 2 rows each (the same doubles; a point then has 2 values). */
        const int fields = sim.rows % 2 == 0 ? 2 : 1;
        fprintf(f, ",\"rows\":%d,\"fields\":%d,\"cols\":%d,\"steps\":%d,\"status\":\"%s\","
                   "\"error\":", sim.rows / fields, fields, sim.cols, steps, status);
        lk_json_string(f, error[0] ? error : NULL);
        if (serial && rc == 0) {
            fputs(",\"serial\":{\"seconds\":", f);
            lk_json_number(f, serial_s);
            fputs(",\"md5\":", f);
            lk_json_string(f, md5[0] ? md5 : NULL);
            fputc('}', f);
        } else if (rc == 0) {
            fputs(",\"gpu\":{\"device\":\"stand-in CPU\",\"ms_median\":", f);
            lk_json_number(f, ms.median);
            fputs(",\"ms_min\":", f);
            lk_json_number(f, ms.min);
            fputs(",\"ms_max\":", f);
            lk_json_number(f, ms.max);
            /* A stand-in device copying 1 MB/s: the plausibility test's physical bound. */
            fprintf(f, ",\"runs\":%d,\"copy_GBps\":0.001}", ms.n);
        }
        fputs("}\n", f);
        if (k == 1)
            fclose(f);
    }
    free(h);
    sciddicat_free(&sim);
    return rc == 0 ? 0 : 1;
}
