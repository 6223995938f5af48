/**
 * @file harness.h
 * @brief The steps of a lab driver, called in order by each lab's `main.c`.
 *
 * A lab's `main.c` reads top to bottom: lk_run_start() parses the command line, the model's
 * open function loads the input (e.g. sciddicat_open()), the serial reference runs
 * between lk_run_serial_begin() and lk_run_serial_end(), the student's function is called
 * in a loop over lk_run_next_gpu_call(), the model's report function compares and hashes,
 * and lk_run_finish() prints the summary and the JSON line. Every step does nothing once an
 * earlier one failed, so `main.c` needs no error branches.
 *
 * The harness decides what each GPU call is: the checked call (output and every device
 * allocation poisoned), the timed calls (each on a poisoned output compared with the
 * checked one), or under `--bench` the calls of a performance report. It checks after
 * each call of the student's code that the inputs it was given are unchanged.
 */
#ifndef LABKIT_HARNESS_H
#define LABKIT_HARNESS_H

#include <stddef.h>

#include "labkit/copy_kernel.h"
#include "labkit/cuda_check.h"
#include "labkit/error.h"
#include "labkit/manifest.h"
#include "labkit/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options a lab accepts beyond the common ones (lk_lab::options). */
enum {
    LK_OPT_BLOCK = 1,   /**< `--block WxH`: the lab's code takes a thread block. */
    LK_OPT_TILE = 2,    /**< `--tile WxH`: the lab's code takes a tile. */
    LK_OPT_TIME = 4,    /**< `--time SECONDS`: the model has a simulated time. */
    LK_OPT_FILES = 8    /**< positional input files (lk_lab::files_usage). */
};

/** A kernel variant `--variant NAME` selects. */
typedef struct lk_variant {
    const char *name;   /**< Its name on the command line. */
    const char *help;   /**< One line for `-h`. */
    int tile_x;         /**< Its default tile's width (labs with LK_OPT_TILE). */
    int tile_y;         /**< Its default tile's height. */
    int given;          /**< 1: a given version `--bench` compares the lab's code with. */
    /** 1: its floating-point order may change from run to run (atomics): its timed outputs
        are judged by lk_output_shape::judge, not compared bit for bit with the first. */
    int reorders;
    /** 1: runs only when `--variant` names it (code for other datasets than the rest). */
    int named_only;
    int cpu;            /**< 1: runs on the CPU (lab 07's CPU back end): the run needs no GPU,
                             and `--bench` leaves it out. */
    /** The given variant `--bench` compares this one with (NULL: the last given one; lab
        05's Brusselator variant names its own baseline). */
    const char *compare_with;
} lk_variant;

/** Everything the harness needs to know about a lab: data only. */
typedef struct lk_lab {
    const char *name;             /**< Lab folder name, e.g. "01-straightforward". */
    const char *title;            /**< The model, for people, e.g. "SciddicaT". */
    unsigned options;             /**< LK_OPT_* flags. */
    const char *gen_help;         /**< What `--gen` takes, e.g. "KIND:ROWSxCOLS:SEED, ...". */
    const char *files_usage;      /**< Positional input forms (LK_OPT_FILES), one per line. */
    int block_x;                  /**< Default `--block` width. */
    int block_y;                  /**< Default `--block` height. */
    /** Variants, NULL-terminated by a zero entry (NULL: none). Without `--variant` the
        lab's own code runs: the first variant that is not given, or the only code. */
    const lk_variant *variants;
    const char *standard_dataset; /**< Manifest dataset of `make run` (`--standard`). */
    const char *bench_dataset;    /**< Manifest dataset of `--bench`. */
    int bench_steps;              /**< GPU steps `--bench` times. */
    int bench_serial_steps;       /**< Serial steps `--bench` times (per-step rate). */
    int baseline_steps;           /**< GPU steps `--bench` times a given variant for (0: as
                                       many as the lab's code). */
} lk_lab;

/** What the command line asked for. */
typedef struct lk_options {
    const char *dataset;         /**< `--dataset` (or the lab's standard/bench one). */
    const char *gen;             /**< `--gen`. */
    const char *out;             /**< `--out`. */
    const char *bin;             /**< `--bin`. */
    const char *png;             /**< `--png`. */
    const char *diff_png;        /**< `--diff-png`: where GPU and serial differ. */
    const char *csv;             /**< `--csv`. */
    const char *files[3];        /**< Positional input files. */
    int nfiles;                  /**< How many. */
    int steps;                   /**< `--steps`, -1 when not given. */
    double time;                 /**< `--time`, < 0 when not given. */
    int serial;                  /**< The serial reference runs (not `--gpu`). */
    int gpu;                     /**< The GPU code runs (not `--serial`). */
    int repeat;                  /**< `--repeat`. */
    int json;                    /**< `--json`. */
    int result_fd;               /**< `--result-fd`, -1 when not given. */
    int bench;                   /**< `--bench`. */
    int once;                    /**< `--once`. */
    int no_md5;                  /**< `--no-md5`. */
    const char *judge;           /**< `--judge FILE`: take the GPU output from FILE (raw
                                      doubles a graded driver wrote) instead of running it,
                                      so that this trusted build judges it. */
    int serial_steps;            /**< `--serial-steps`. */
    int block_x;                 /**< `--block` width. */
    int block_y;                 /**< `--block` height. */
    int tile_x;                  /**< `--tile` width (0: the variant's default). */
    int tile_y;                  /**< `--tile` height. */
    char variant[32];            /**< `--variant` ("" when not given). */
} lk_options;

/** The shape of a run's output: @ref fields grids of (rows + 2 ghost) x (cols + 2 ghost)
    doubles one after the other; only the interior rows x cols is a result. */
typedef struct lk_output_shape {
    int rows;                    /**< Interior rows. */
    int cols;                    /**< Interior columns. */
    int fields;                  /**< Grids in the output (1 or more). */
    int ghost;                   /**< Width of the ghost layer around each grid. */
    double bytes_per_cell_step;  /**< Bytes a step moves per cell by the formula (--bench). */
    double min_bytes_per_cell_step; /**< Bytes any step must move per cell (the bound --bench
                                         quotes; 0: none). */
    size_t copy_bytes;           /**< Bytes of the copy that measures the copy bandwidth. */
    /** Labs with a tolerance policy (lab 06): judges a GPU output against the model's own
        reference with bounds derived from the algorithm; returns the number of values out
        of bounds and says where the first is in @p buf. Used instead of the bit-for-bit
        comparison with the serial output under `--bench`, and with the first run for a
        variant that lk_variant::reorders. NULL: bit for bit. */
    size_t (*judge)(const void *ctx, const double *got, char *buf, size_t size);
    const void *judge_ctx;       /**< What @ref judge gets as its first argument. */
    size_t points;               /**< Points a step works on, when not the output's cells
                                      (lab 06: the values a sum reads, for 7 outputs): the
                                      unit of cell updates and bytes per cell, and the
                                      result line's "points"; 0: rows x cols. */
} lk_output_shape;

/** One call of the lab's GPU code, as lk_run_next_gpu_call() describes it. */
typedef struct lk_gpu_call {
    double *out;          /**< Host output of lk_run::len doubles, poisoned: fill it. From
                               1 MiB up, it and the inputs lk_run_loaded() was given are
                               page-locked (cudaHostRegister) until the last call returns:
                               do not register them again. */
    int steps;            /**< Steps to run. */
    int block_x;          /**< Thread block width. */
    int block_y;          /**< Thread block height. */
    int tile_x;           /**< Tile width (the variant's default already filled in). */
    int tile_y;           /**< Tile height. */
    const char *variant;  /**< The variant's name ("" for a lab without variants). */
    int given;            /**< 1: call the given version, not the lab's code. */
    int rc;               /**< Set by the caller: what the GPU code returned. */
    lk_error err;         /**< Filled by the GPU code on failure. */
} lk_gpu_call;

/** What was measured, for the reports. */
typedef struct lk_run_result {
    int ran_serial;                           /**< The serial reference ran. */
    int ran_gpu;                              /**< The GPU code ran (checked, timed). */
    int compared;                             /**< Both ran and were compared. */
    int match;                                /**< They gave the same bits. */
    double serial_s;                          /**< Serial wall time. */
    lk_stats gpu_ms;                          /**< Timed GPU calls. */
    char serial_md5[33];                      /**< The serial output's hash. */
    char gpu_md5[33];                         /**< The GPU output's hash. */
    char gpu_md5_bin[33];                     /**< md5 of the GPU output as `--bin` writes it. */
    char mismatch[8192];                      /**< The explanation of a mismatch. */
    char device[256];                         /**< The GPU. */
    lk_copy_bandwidth copy;                   /**< Copy bandwidth (`--once`, `--bench`). */
} lk_run_result;

struct lk_run_state;

/** A lab driver's run, from lk_run_start() to lk_run_finish(). */
typedef struct lk_run {
    const lk_lab *lab;     /**< The lab. */
    const char *prog;      /**< argv[0]. */
    lk_options opt;        /**< The command line. */
    lk_error err;          /**< The first failure's message. */
    int status;            /**< Exit status so far (0 while all is well). */
    char label[256];       /**< Names the input in reports. */
    char details[256];     /**< Appended to "R x C cells, N steps" (the model's). */
    int steps;             /**< Steps of the run. */
    int serial_steps;      /**< Steps the serial reference runs (-1: it does not run). */
    lk_output_shape shape; /**< Set by lk_run_loaded(). */
    size_t len;            /**< Doubles in one output. */
    double *expected;      /**< The serial reference's output. */
    double *gpu;           /**< The checked GPU call's output. */
    lk_run_result r;       /**< For the reports. */
    struct lk_run_state *state; /**< The harness's own (timers, calls, input copies). */
} lk_run;

/**
 * `--diff-png FILE`, once serial and GPU outputs were compared: the first output field that
 * differs as lk_png_diff() draws it (red where it differs), and a `diff` line saying so, or
 * why nothing was written (identical results; a lab judged within a tolerance). Called by
 * lk_run_finish(). Returns -1 when the picture could not be written (said on stdout), else 0.
 */
int lk_run_write_diff_png(const lk_run *run);

/**
 * Parse the command line of lab @p lab. Returns 0 to go on, -1 when the program must end
 * with exit status run->status (0 after `-h`, 2 for bad usage, already reported).
 */
int lk_run_start(lk_run *run, const lk_lab *lab, int argc, char **argv);

/** Report a usage error found by the lab (e.g. a tile its kernels cannot take), in
    run->err; returns run->status (2) for `main` to return. */
int lk_run_usage_error(lk_run *run);

/** Steps of the run when @p dataset_steps (-1: none) and the options say nothing more. */
int lk_run_choose_steps(const lk_run *run, int dataset_steps, int default_steps);

/**
 * Make the problem the options name, `--dataset` (the kit's manifest) or `--gen`, with
 * @p kind into @p problem, and name it in run->label; the manifest's steps go to
 * @p dataset_steps (left alone for a spec). Returns 0, or -1 with the run failed.
 */
int lk_run_open_dataset(lk_run *run, const lk_dataset_kind *kind, void *problem,
                        int *dataset_steps);

/**
 * Called by a model's open function once the input is loaded: allocate the outputs of
 * @p shape, remember the @p ninputs buffers the GPU code must leave unchanged, probe the
 * GPU when the run needs one. Returns 0, or -1 with the run failed.
 */
int lk_run_loaded(lk_run *run, const lk_output_shape *shape, int ninputs,
                  const void *const *inputs, const size_t *input_bytes);

/** Mark the run failed (the message is in run->err); returns -1. */
int lk_run_fail(lk_run *run);

/** 1 when the serial reference must run now (run->serial_steps steps into
    run->expected); starts its clock. */
int lk_run_serial_begin(lk_run *run);

/** Stop the serial clock; @p rc is what the serial reference returned. */
void lk_run_serial_end(lk_run *run, int rc);

/**
 * What every serial reference function is in a graded build (labs/lab.mk `GRADED=1`), the
 * driver that runs a student's code for the grader: the linker binds each name the lab's
 * serial object defines to this function, which says on stderr, in one line, that the
 * reference is not part of the build, and exits with status 1. It stands in for functions
 * of any signature: it takes no argument and never returns.
 */
void lk_no_reference(void) __attribute__((noreturn));

/**
 * Is @p reference (a serial reference function, cast) the real one, not lk_no_reference()?
 * A driver that judges the GPU output against a reference it computes (lab 06) asks first:
 * in a graded build it writes the raw output for a trusted build to judge (--judge).
 */
int lk_reference_linked(void (*reference)(void));

/**
 * The next call of the GPU code, or NULL when there is none left (or one failed). The
 * caller calls the code it describes and sets call->rc; the harness times the call, and
 * checks its output and the inputs at the next lk_run_next_gpu_call().
 */
lk_gpu_call *lk_run_next_gpu_call(lk_run *run);

/** The output to hash and write: the checked GPU output, else the serial one (NULL when
    the run failed). */
const double *lk_run_output(const lk_run *run);

/** Print the summary (or the bench report), the JSON line if asked, free the harness's
    buffers; returns the exit status: 0 ok, 1 error, 2 usage, 3 GPU result differs. */
int lk_run_finish(lk_run *run);

/** Compare the interiors of two outputs of @p shape bit for bit; returns the number of
    differing values and, if @p buf is not NULL, says where the first one is. */
size_t lk_output_diff(const lk_output_shape *shape, const double *a, const double *b,
                      char *buf, size_t size);

/**
 * The verdict of a model judged bit for bit on its raw output (the `--bin` doubles, no
 * ghost layer): the md5s of the serial and GPU outputs that ran, and their comparison, in
 * lk_run::r. @p where_hint says how to read a position in the mismatch text (e.g. "col 2p
 * is u_p, 2p+1 is v_p"). Returns 0, or -1 with lk_run::err set.
 */
int lk_run_binary_verdict(lk_run *run, const char *where_hint);

/**
 * Whether the outputs' md5s are computed: not under `--no-md5`, which the grader passes to
 * its timed calls and timing runs (it hashes a `--bin` file itself, or needs only the time:
 * the course-text md5 of a 4096 x 4096 grid took 2-3 s of every such run). The md5s are
 * then empty, `null` in the JSON line.
 */
int lk_run_hashes(const lk_run *run);

#ifdef __cplusplus
}
#endif
#endif
