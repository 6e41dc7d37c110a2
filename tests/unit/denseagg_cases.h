/*
 * denseagg_cases.h -- the random dense-aggregate (prim_*_denseagg) cases
 * that test_prim_cpu (against its brute-force reference) and test_prim_gpu
 * (GPU twin against CPU twin) both run. The generator draws from the random
 * source its caller lends it (DaRand), so each test keeps its own generator
 * and seeds; the cases' inputs are host vectors.
 */
#ifndef GQP_TESTS_DENSEAGG_CASES_H
#define GQP_TESTS_DENSEAGG_CASES_H

#include <stdint.h>

#include "primitives/primitives.h"

/* Maximum inputs of a generated denseagg case. */
#define DA_MAXIN 32

/* A random denseagg case: inputs (malloc'd host vectors), spec, row count. */
typedef struct DaCase {
    PrimVec in[DA_MAXIN];
    int nin;
    PrimDenseAgg s;
    int64_t n;
} DaCase;

/* The caller's random source. */
typedef struct DaRand {
    /* Returns the next 64 random bits. */
    uint64_t (*next)(void);
    /* Returns a malloc'd host vector (data and valid freed with free) of n
     * integer values of type t (U8, I32, I64) uniform in lo..hi (U8: the
     * low byte), about null_pct percent NULLs (no validity when
     * null_pct < 0). */
    PrimVec (*vec)(PrimType t, int64_t n, int64_t lo, int64_t hi, int null_pct);
} DaRand;

/* Builds a random case over nf fact rows from r. gclass: 0 one group, 1 a
 * few (<= ~200), 2 a few thousand, 3 about 500,000 groups. with_rows: the
 * fact rows come through an I64 row-id input (n = 3/4 nf, repeats
 * allowed). Free with da_case_free. */
void da_case(DaCase *c, const DaRand *r, int64_t nf, int gclass, int with_rows);

/* Frees a case's host inputs. */
void da_case_free(DaCase *c);

#endif
