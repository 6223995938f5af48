/**
 * @file reduce_driver.h
 * @brief The lab 06 steps of a lab driver (labkit/harness.h): open the input the command
 * line names, and report (judging, hashes, output files).
 *
 * The output of a field is its REDUCE_NOUT results, of a Lagrange problem its S values.
 * The GPU output is judged against the reference in reduce_input::gold with the bounds
 * in reduce_input::bound (reduce_judge()), which the driver fills between
 * reduce_open() and the first GPU call. `--out` writes the results as text, `--bin` in
 * the judged form of reduce_judged() (what the grader compares with `policy tolerance
 * 0.5`); the md5 of a run is of its raw results as little-endian doubles. A graded build
 * (no reference) writes the raw results with `--bin`; the grader has the kit's trusted
 * build judge them (`--gpu --judge FILE --bin JUDGED`: the rubric's `judge trusted`).
 */
#ifndef LABKIT_REDUCE_DRIVER_H
#define LABKIT_REDUCE_DRIVER_H

#include "labkit/harness.h"
#include "reduce/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Load the input @p run's options name into @p in and tell the harness its shape (with
    reduce_judge() as its judge). Default steps: the dataset's, else 0. Returns 0 or -1
    (the run failed). */
int reduce_open(lk_run *run, reduce_input *in);

/** Hash the serial and GPU results, judge the GPU one, write `--out` and `--bin`. */
void reduce_report(lk_run *run, const reduce_input *in);

#ifdef __cplusplus
}
#endif
#endif
