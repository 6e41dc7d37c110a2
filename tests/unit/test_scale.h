/*
 * test_scale.h -- test data sizes under sanitizers.
 *
 * GQP_TEST_SCALE (a real in (0, 1], default 1) shrinks the large generated
 * inputs of a test: scripts/test-sanitize.sh sets 0.1 so the ASan + UBSan
 * suite fits CI. Small sizes (edge cases around block boundaries) are never
 * scaled; nothing is skipped.
 */
#ifndef GQP_TEST_SCALE_H
#define GQP_TEST_SCALE_H

#include <stdint.h>
#include <stdlib.h>

/* n scaled by $GQP_TEST_SCALE when n > 100000, never below 100000. */
static inline int64_t test_scaled(int64_t n) {
    const char *e = getenv("GQP_TEST_SCALE");
    double f = e ? atof(e) : 1.0;
    if (n <= 100000 || !(f > 0.0) || f >= 1.0) return n;
    int64_t m = (int64_t)((double)n * f);
    return m < 100000 ? 100000 : m;
}

#endif
