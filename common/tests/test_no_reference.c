#include <criterion/criterion.h>
#include <string.h>

#include "labkit/harness.h"
#include "labkit/testing.h"

/* A reference call in a graded driver: labs/lab.mk binds the reference's name to
   lk_no_reference, so the caller, by name or through a pointer, calls it with the
   reference's own arguments. */
typedef int reference_fn(const void *sim, int steps, double *out, lk_error *err);

static int call_the_reference(int argc, char **argv)
{
    printf("loaded\n"); /* still buffered (a pipe): it must come out before the error */
    reference_fn *serial = (reference_fn *)lk_no_reference;
    double out[4];
    lk_error err;
    serial(NULL, 3, out, &err);
    printf("the reference returned\n");
    return 0;
}

Test(no_reference, a_call_ends_the_run_with_one_error_line)
{
    char out[1024];
    char *argv[] = {"lab01", NULL};
    const int status = lk_run_captured(call_the_reference, 1, argv, out, sizeof out);
    cr_assert_eq(status, 1, "exit status %d, expected 1: %s", status, out);
    const char *first = "loaded\n";
    cr_assert(strncmp(out, first, strlen(first)) == 0,
              "what the driver printed before should come first: %s", out);
    const char *line = out + strlen(first);
    cr_assert(strstr(line, ": the serial reference is not part of a graded build: ") != NULL,
              "no error line: %s", out);
    cr_assert(strstr(line, "GRADED=1") != NULL, "the line should name GRADED=1: %s", line);
    cr_assert(strchr(line, '\n') == line + strlen(line) - 1, "one line expected: %s", line);
}

static void real_reference(void)
{
}

/* A driver asks whether its reference is real before it judges against it (lab 06). */
Test(no_reference, a_driver_tells_its_reference_from_the_stand_in)
{
    cr_assert(lk_reference_linked(real_reference), "a real function is a reference");
    cr_assert(!lk_reference_linked(lk_no_reference), "the stand-in is no reference");
}
