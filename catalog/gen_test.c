/*
 * gen_test.c -- seed 004's generated table `test` as CSV plus its config.
 *
 * Every value is a pure function of (seed, row, column), so the output does
 * not depend on the thread count. Rows are formatted in rounds of
 * GEN_ROUND_ROWS, each round split across all cores, then written in order.
 *
 *   column    | type    | value
 *   ----------+---------+------------------------------------------------
 *   id        | INT32   | row number 0..n-1
 *   uniformi  | INT32   | uniform integer in [-99, 99]
 *   normali5  | INT32   | round(5 z)
 *   normali20 | INT32   | round(20 z)
 *   uniformf  | FLOAT32 | uniform in [-99, 99], rounded to k/1024
 *   normalf5  | FLOAT32 | 5 z rounded to k/1024
 *   normalf20 | FLOAT32 | 20 z rounded to k/1024
 *
 * z is standard normal (Box-Muller from two hashed uniforms). A multiple of
 * 1/1024 below 2^13 in magnitude is exact in float32, and its decimal text
 * (at most 10 fractional digits) is printed exactly.
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: rows formatted per round (bounds memory to ~128 bytes a row). */
#define GEN_ROUND_ROWS (1 << 20)
/* Upper bound on the text of one row. */
#define GEN_MAX_ROW_BYTES 128

/* 64 random bits for (seed, row, stream). */
static uint64_t rnd(uint64_t seed, int64_t row, unsigned stream) {
    return cat_splitmix64(cat_splitmix64(seed ^ ((uint64_t)stream << 56)) ^ (uint64_t)row);
}

/* Uniform double in (0, 1] from 53 random bits. */
static double unit(uint64_t h) {
    return (double)((h >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* Standard normal for (seed, row, column) by Box-Muller. */
static double normal(uint64_t seed, int64_t row, unsigned col) {
    double u1 = unit(rnd(seed, row, 2 * col)), u2 = unit(rnd(seed, row, 2 * col + 1));
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

/* Write k/1024 exactly in decimal (no trailing zeros; integers without a
 * point) at p; returns the new end. */
static char *put_k1024(char *p, int64_t k) {
    if (k < 0) {
        *p++ = '-';
        k = -k;
    }
    p = cat_put_int(p, k >> 10);
    int64_t frac = k & 1023;
    if (frac) {
        uint64_t dec = (uint64_t)frac * 9765625u; /* frac / 1024 * 1e10 */
        char d[10];
        for (int i = 9; i >= 0; i--) {
            d[i] = (char)('0' + dec % 10);
            dec /= 10;
        }
        int n = 10;
        while (d[n - 1] == '0')
            n--;
        *p++ = '.';
        memcpy(p, d, (size_t)n);
        p += n;
    }
    return p;
}

/* One round's shared state. */
typedef struct GenJob {
    uint64_t seed;
    int64_t first, rows; /* the round's rows */
    int nthreads;
    char **buf;   /* per thread, rows/nthreads+1 rows of text */
    size_t *used; /* bytes written per thread */
} GenJob;

/* Format rows [first + i*rows/n, first + (i+1)*rows/n) into buf[i]. */
static void gen_worker(void *arg, int i) {
    GenJob *j = arg;
    int64_t lo = j->first + j->rows * i / j->nthreads;
    int64_t hi = j->first + j->rows * (i + 1) / j->nthreads;
    char *p = j->buf[i];
    for (int64_t r = lo; r < hi; r++) {
        p = cat_put_int(p, r);
        *p++ = ',';
        p = cat_put_int(p, (int64_t)(((rnd(j->seed, r, 100) >> 32) * 199) >> 32) - 99);
        *p++ = ',';
        p = cat_put_int(p, llround(5.0 * normal(j->seed, r, 2)));
        *p++ = ',';
        p = cat_put_int(p, llround(20.0 * normal(j->seed, r, 3)));
        *p++ = ',';
        int64_t k = llround((-99.0 + 198.0 * unit(rnd(j->seed, r, 101))) * 1024.0);
        if (k < -99 * 1024) k = -99 * 1024;
        if (k > 99 * 1024) k = 99 * 1024;
        p = put_k1024(p, k);
        *p++ = ',';
        p = put_k1024(p, llround(5.0 * normal(j->seed, r, 5) * 1024.0));
        *p++ = ',';
        p = put_k1024(p, llround(20.0 * normal(j->seed, r, 6) * 1024.0));
        *p++ = '\n';
    }
    j->used[i] = (size_t)(p - j->buf[i]);
}

/* Generate dir/test.csv and dir/gqp.yaml (dir created if missing); see
 * catalog.h. Returns 0, or -1 with err set. */
int cat_gen_test(const char *dir, int64_t nrows, uint64_t seed, CatError *err) {
    static const char yaml[] = "# seed 004's generated table (cat_gen_test)\n"
                               "tables:\n"
                               "  - name: test\n"
                               "    source: test.csv\n"
                               "    format: csv\n"
                               "    header: true\n"
                               "    columns:\n"
                               "      - {name: id, type: INT32}\n"
                               "      - {name: uniformi, type: INT32}\n"
                               "      - {name: normali5, type: INT32}\n"
                               "      - {name: normali20, type: INT32}\n"
                               "      - {name: uniformf, type: FLOAT32}\n"
                               "      - {name: normalf5, type: FLOAT32}\n"
                               "      - {name: normalf20, type: FLOAT32}\n";
    if (!dir) return cat_err(err, "cat_gen_test: no folder");
    if (nrows < 0 || nrows > (int64_t)INT32_MAX + 1)
        return cat_err(err, "cat_gen_test: row count %lld out of range (0..2^31)",
                       (long long)nrows);
    if (cat_mkdirs(dir) != 0)
        return cat_err(err, "%s: cannot create folder: %s", dir, strerror(errno));
    char *csv = cat_concat3(dir, "/", "test.csv");
    char *yml = cat_concat3(dir, "/", "gqp.yaml");
    GenJob j = {0};
    FILE *f = NULL;
    int rc = -1;
    j.seed = seed;
    j.nthreads = nrows >= 100000 ? cat_nthreads() : 1;
    j.buf = calloc((size_t)j.nthreads, sizeof *j.buf);
    j.used = calloc((size_t)j.nthreads, sizeof *j.used);
    if (!csv || !yml || !j.buf || !j.used) {
        cat_err(err, "cat_gen_test: out of memory");
        goto done;
    }
    int64_t round = nrows < GEN_ROUND_ROWS ? nrows : GEN_ROUND_ROWS;
    for (int i = 0; i < j.nthreads; i++) {
        j.buf[i] = malloc((size_t)(round / j.nthreads + 2) * GEN_MAX_ROW_BYTES);
        if (!j.buf[i]) {
            cat_err(err, "cat_gen_test: out of memory");
            goto done;
        }
    }
    f = fopen(csv, "wb");
    if (!f) {
        cat_err(err, "%s: cannot create: %s", csv, strerror(errno));
        goto done;
    }
    static const char header[] = "id,uniformi,normali5,normali20,uniformf,normalf5,normalf20\n";
    if (fwrite(header, 1, sizeof header - 1, f) != sizeof header - 1) goto write_fail;
    for (j.first = 0; j.first < nrows; j.first += round) {
        j.rows = nrows - j.first < round ? nrows - j.first : round;
        cat_parallel(j.nthreads, gen_worker, &j);
        for (int i = 0; i < j.nthreads; i++)
            if (j.used[i] && fwrite(j.buf[i], 1, j.used[i], f) != j.used[i]) goto write_fail;
    }
    int bad = fclose(f) != 0;
    f = NULL;
    if (bad) goto write_fail;
    rc = cat_write_text(yml, yaml, strlen(yaml), err);
    goto done;
write_fail:
    cat_err(err, "%s: write failed: %s", csv, strerror(errno));
done:
    if (f) fclose(f);
    if (j.buf)
        for (int i = 0; i < j.nthreads; i++)
            free(j.buf[i]);
    free(j.buf);
    free(j.used);
    free(csv);
    free(yml);
    return rc;
}
