/* The serial reductions and Lagrange evaluations (read-only), the reference of lab 06: what
   the tests, the driver, the grader and the dataset generator judge the kernels against, and
   the loops lab 06 turns into reductions in kernels.cu.

   Part A reduces a field to its sum, max, count of values above a threshold and the
   bounding box of those cells. The sum is compensated (Neumaier): its error is about one
   rounding of the result, far below what any order of plain additions guarantees, so it
   serves as the reference a GPU sum in any order is judged against (reduce/reduce.h).
   Part B evaluates the Lagrange polynomial twice: the naive product of ratios, O(S n^2),
   the baseline you port; and the barycentric form, O(S n), the accurate "gold" values. */
#include <math.h>

#include "reduce/reduce.h"

void reduce_serial(const double *x, int rows, int cols, double threshold, double *out,
                   double *sum_abs)
{
    double sum = 0.0, carry = 0.0, abs_sum = 0.0, max = -INFINITY;
    unsigned long long count = 0;
    int row_min = rows, row_max = -1, col_min = cols, col_max = -1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            const double v = x[(size_t)i * cols + j];
            /* Neumaier: t - sum - v recovers what rounding t lost, whichever is larger. */
            const double t = sum + v;
            carry += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
            sum = t;
            abs_sum += fabs(v);
            /* NaN wins: the max of a field with a NaN is NaN, in any order. */
            if (v > max || isnan(v))
                max = isnan(max) ? max : v;
            if (v > threshold) {
                count++;
                row_min = i < row_min ? i : row_min;
                row_max = i > row_max ? i : row_max;
                col_min = j < col_min ? j : col_min;
                col_max = j > col_max ? j : col_max;
            }
        }
    out[LK_OUT_SUM] = sum + carry;
    out[LK_OUT_MAX] = max;
    out[LK_OUT_COUNT] = (double)count;
    out[LK_OUT_ROW_MIN] = row_min;
    out[LK_OUT_ROW_MAX] = row_max;
    out[LK_OUT_COL_MIN] = col_min;
    out[LK_OUT_COL_MAX] = col_max;
    if (sum_abs)
        *sum_abs = abs_sum;
}

/* The thesis's equation 2.1 with its errata fixed (nodes 0..n, y_j in the sum). */
void reduce_lagrange_naive(const double *x, const double *y, int n1, const double *xs,
                           double *ys, int S)
{
    for (int s = 0; s < S; s++) {
        double sum = 0.0;
        for (int j = 0; j < n1; j++) {
            double product = 1.0;
            for (int i = 0; i < n1; i++)
                if (i != j)
                    product *= (xs[s] - x[i]) / (x[j] - x[i]);
            sum += y[j] * product;
        }
        ys[s] = sum;
    }
}

/* Second barycentric form: p(x) = sum_j (w_j y_j / (x - x_j)) / sum_j (w_j / (x - x_j)),
   w_j = 1 / prod_{i != j} (x_j - x_i). The factors are scaled by 4 / (max - min), the
   interval's capacity, so that the weights stay within the range of double for thousands
   of nodes; the common scale cancels. */
void reduce_lagrange_barycentric(const double *x, const double *y, int n1, const double *xs,
                                 double *ys, double *kappa, int S)
{
    double lo = x[0], hi = x[0];
    for (int j = 1; j < n1; j++) {
        lo = x[j] < lo ? x[j] : lo;
        hi = x[j] > hi ? x[j] : hi;
    }
    const double scale = hi > lo ? 4.0 / (hi - lo) : 1.0;
    double w[4096];
    for (int j = 0; j < n1; j++) {
        /* A partial product can still leave the range of double on the way: keep its
           exponent apart (frexp and ldexp are exact). */
        double p = 1.0;
        int exponent = 0, e;
        for (int i = 0; i < n1; i++)
            if (i != j) {
                p = frexp(p * (scale * (x[j] - x[i])), &e);
                exponent += e;
            }
        w[j] = ldexp(1.0 / p, -exponent);
    }
    for (int s = 0; s < S; s++) {
        double num = 0.0, den = 0.0, num_abs = 0.0;
        int at_node = -1;
        for (int j = 0; j < n1 && at_node < 0; j++) {
            if (xs[s] == x[j]) {
                at_node = j;
                break;
            }
            const double c = w[j] / (xs[s] - x[j]);
            num += c * y[j];
            den += c;
            num_abs += fabs(c * y[j]);
        }
        /* At a node the polynomial is the datum, and L_j(x_j) = 1, the others 0. */
        ys[s] = at_node >= 0 ? y[at_node] : num / den;
        if (kappa)
            kappa[s] = at_node >= 0 ? fabs(y[at_node]) : num_abs / fabs(den);
    }
}
