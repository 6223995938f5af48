/* The stand-in lab's contract: the student's fake_run() computes @p steps SciddicaT steps. */
#ifndef FAKE_LAB_H
#define FAKE_LAB_H

#include "labkit/error.h"

int fake_run(int rows, int cols, const double *z, const double *h_in, double *h_out, int steps,
             lk_error *err);

#endif
