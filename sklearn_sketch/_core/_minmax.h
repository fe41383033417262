/* Branch-free min and max of two doubles that are never NaN.
 *
 * libm's fmin/fmax are function calls (they handle NaN); comparisons compile to
 * branches that mispredict on random data. SSE2's minsd/maxsd are one
 * instruction each and equal fmin/fmax for non-NaN input.
 */
#ifndef SKLEARN_SKETCH_MINMAX_H
#define SKLEARN_SKETCH_MINMAX_H
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
static inline double sk_min(double a, double b) {
    return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(a), _mm_set_sd(b)));
}
static inline double sk_max(double a, double b) {
    return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(a), _mm_set_sd(b)));
}
#else
static inline double sk_min(double a, double b) { return fmin(a, b); }
static inline double sk_max(double a, double b) { return fmax(a, b); }
#endif
#endif
