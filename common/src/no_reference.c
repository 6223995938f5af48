/* The stand-in for the serial reference in a graded build (labs/lab.mk GRADED=1): the
   driver that runs a student's code links no reference, and each reference function's name
   is bound here by the linker, so that a call, named or found at run time, ends the run. */
#define _GNU_SOURCE /* program_invocation_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "labkit/harness.h"

void lk_no_reference(void)
{
    /* What the driver printed so far comes first, as with any other error. */
    fflush(stdout);
    fprintf(stderr,
            "%s: the serial reference is not part of a graded build: this driver was built "
            "with GRADED=1 (labs/lab.mk) and runs only your code, e.g. --gpu; build it without "
            "GRADED=1 to run --serial, --bench or both\n",
            program_invocation_name);
    exit(1);
}

int lk_reference_linked(void (*reference)(void))
{
    return reference != lk_no_reference;
}
