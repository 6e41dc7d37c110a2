/*
 * test_memory.c -- the device memory budget and the out-of-memory paths:
 * memory_limit parsing (config and SET), the budget's bookkeeping and the
 * cache's eviction choice with fake addresses and sizes, the allocation
 * fault injection spec, host allocation failures through the executor
 * (every query answers as before or fails with an out-of-memory error),
 * and, on a GPU (skipped without one), the accounted allocator, the CUDA
 * error state after a failed allocation, the recovery of a GPU node on its
 * CPU twin (EXPLAIN ANALYZE) and --device gpu's needed/available message.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor/exec_internal.h"
#include "libgqp/internal.h"

/* ------------------------------------------------------------ parsing */

Test(memory, parse_memory_limit) {
    static const struct {
        const char *txt;
        int64_t bytes;
        double pct;
    } ok[] = {{"2GB", 2000000000, 0},
              {"2gb", 2000000000, 0},
              {"1.5 GiB", 1610612736, 0},
              {"512MiB", 536870912, 0},
              {"1MB", 1000000, 0},
              {"1KiB", 1024, 0},
              {"10KB", 10000, 0},
              {"4096", 4096, 0},
              {"100B", 100, 0},
              {"1TiB", 1099511627776LL, 0},
              {"25%", 0, 25},
              {"100%", 0, 100},
              {"0.5%", 0, 0.5},
              {"none", 0, 0},
              {"0", 0, 0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t b = -1;
        double p = -1;
        cr_assert_eq(cat_parse_memory_limit(ok[i].txt, &b, &p), 0, "%s", ok[i].txt);
        cr_expect_eq(b, ok[i].bytes, "%s: %lld", ok[i].txt, (long long)b);
        cr_expect_eq(p, ok[i].pct, "%s: %g", ok[i].txt, p);
    }
    const char *bad[] = {"", "GB", "2XB", "-1GB", "0%", "101%", "25 %%", "1e30", "abc", "2GBs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t b;
        double p;
        cr_expect_eq(cat_parse_memory_limit(bad[i], &b, &p), -1, "'%s' accepted", bad[i]);
    }
}

Test(memory, parse_fail_spec) {
    int dev, sticky;
    int64_t n;
    cr_assert_eq(exec_parse_fail_spec("host:3", &dev, &n, &sticky), 0);
    cr_expect(dev == 0 && n == 3 && sticky == 0);
    cr_assert_eq(exec_parse_fail_spec("device:12+", &dev, &n, &sticky), 0);
    cr_expect(dev == 1 && n == 12 && sticky == 1);
    const char *bad[] = {"host:0", "host:", "gpu:1", "device:x", "device:1-", "host:-2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(exec_parse_fail_spec(bad[i], &dev, &n, &sticky), -1, "'%s' accepted", bad[i]);
}

/* ------------------------------------------------------- bookkeeping */

/* A fake device address for allocation i (aligned like the real ones). */
static const void *fake(int i) {
    return (const void *)(uintptr_t)(0x7f0000000000ull + (uint64_t)i * 512);
}

Test(memory, budget_accounting) {
    ExecBudget b;
    memset(&b, 0, sizeof b);
    size_t total = 0;
    for (int i = 1; i <= 1000; i++) {
        cr_assert_eq(exec_budget_add(&b, fake(i), (size_t)i * 10), 0);
        total += (size_t)i * 10;
    }
    cr_assert_eq(b.used, total);
    cr_assert_eq(b.n, 1000);
    cr_assert_eq(exec_budget_fits(&b, (size_t)1 << 40), 1, "no limit: everything fits");
    cr_assert_eq(exec_budget_left(&b), SIZE_MAX);
    /* remove every other one, then an unknown address */
    for (int i = 1; i <= 1000; i += 2) {
        cr_assert_eq(exec_budget_remove(&b, fake(i)), (size_t)i * 10, "entry %d", i);
        total -= (size_t)i * 10;
    }
    cr_assert_eq(exec_budget_remove(&b, fake(5000)), 0);
    cr_assert_eq(exec_budget_remove(&b, fake(1)), 0, "removed twice");
    cr_assert_eq(b.used, total);
    for (int i = 2; i <= 1000; i += 2)
        cr_assert_eq(exec_budget_remove(&b, fake(i)), (size_t)i * 10, "entry %d", i);
    cr_assert_eq(b.used, 0);
    cr_assert_eq(b.n, 0);
    cr_assert_eq(b.peak, 5005000);
    /* the same address twice is one allocation */
    cr_assert_eq(exec_budget_add(&b, fake(7), 100), 0);
    cr_assert_eq(exec_budget_add(&b, fake(7), 300), 0);
    cr_expect(b.used == 300 && b.n == 1);
    cr_assert_eq(exec_budget_remove(&b, fake(7)), 300);
    cr_expect(b.used == 0 && b.n == 0);
    /* a limit */
    b.limit = 1000;
    cr_assert_eq(exec_budget_add(&b, fake(1), 600), 0);
    cr_expect_eq(exec_budget_fits(&b, 400), 1);
    cr_expect_eq(exec_budget_fits(&b, 401), 0);
    cr_expect_eq(exec_budget_left(&b), 400);
    /* a limit lowered below what is live: nothing fits, nothing is left */
    b.limit = 500;
    cr_expect_eq(exec_budget_fits(&b, 1), 0);
    cr_expect_eq(exec_budget_left(&b), 0);
    exec_budget_free(&b);
}

Test(memory, fault_injection_counts) {
    ExecBudget b;
    memset(&b, 0, sizeof b);
    exec_budget_fail_at(&b, 3, 0);
    int fails[6];
    for (int i = 0; i < 6; i++)
        fails[i] = exec_budget_inject(&b);
    cr_expect(!fails[0] && !fails[1] && fails[2] && !fails[3] && !fails[4] && !fails[5]);
    exec_budget_fail_at(&b, 2, 1);
    for (int i = 0; i < 6; i++)
        fails[i] = exec_budget_inject(&b);
    cr_expect(!fails[0] && fails[1] && fails[2] && fails[3] && fails[4] && fails[5]);
    cr_expect_eq(b.count, 6);
    exec_budget_fail_at(&b, 0, 1);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(exec_budget_inject(&b), 0);
}

/* The cache evicts the least recently used entry that no live value
 * reads; an entry being read is never chosen. */
Test(memory, eviction_skips_pinned_entries) {
    ExecCacheEntry e[5];
    memset(e, 0, sizeof e);
    int64_t last[5] = {7, 3, 9, 1, 5};
    for (int i = 0; i < 5; i++)
        e[i].last_use = last[i], e[i].bytes = 100;
    cr_expect_eq(exec_cache_victim(e, 5), 3);
    e[3].readers = 1;
    cr_expect_eq(exec_cache_victim(e, 5), 1);
    e[1].readers = 2;
    cr_expect_eq(exec_cache_victim(e, 5), 4);
    for (int i = 0; i < 5; i++)
        e[i].readers = 1;
    cr_expect_eq(exec_cache_victim(e, 5), -1, "every entry is being read");
    cr_expect_eq(exec_cache_victim(e, 0), -1);
}

/* The recovery's steps: one retry on the GPU, then the CPU twin (auto) or
 * the error (gpu). */
Test(memory, recovery_steps) {
    cr_expect_eq(exec_oom_step(1, 1), EXEC_OOM_RETRY);
    cr_expect_eq(exec_oom_step(1, 0), EXEC_OOM_RETRY);
    cr_expect_eq(exec_oom_step(2, 1), EXEC_OOM_CPU);
    cr_expect_eq(exec_oom_step(2, 0), EXEC_OOM_FAIL);
    cr_expect_eq(exec_oom_step(3, 1), EXEC_OOM_CPU);
}

/* ---------------------------------------------------- config and SET */

static char tmpdir[256];

/* Write text to tmpdir/name. */
static void put(const char *name, const char *text) {
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/gqp_memtest_XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
    }
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Open tmpdir/gqp.yaml; returns gqp_open's code, *db the handle. */
static int open_cfg(gqp **db) {
    char p[512];
    snprintf(p, sizeof p, "%s/gqp.yaml", tmpdir);
    return gqp_open(p, db);
}

Test(memory, config_memory_limit) {
    put("t.csv", "1\n2\n");
    put("gqp.yaml",
        "tables:\n  - name: t\n    source: t.csv\n    columns: [{name: a, type: INT32}]\n"
        "device:\n  memory_limit: 25%\n");
    gqp *db;
    cr_assert_eq(open_cfg(&db), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_eq(db->mem_limit_pct, 25);
    cr_expect_eq(db->mem_limit_bytes, 0);
    gqp_close(db);
    put("gqp.yaml", "device:\n  memory_limit: 512MiB\n");
    cr_assert_eq(open_cfg(&db), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_eq(db->mem_limit_bytes, 536870912);
    gqp_close(db);
    /* a bad value names the file, line and column and the accepted forms */
    put("gqp.yaml", "device:\n  gpu_cache_bytes: 100\n  memory_limit: lots\n");
    cr_assert_eq(open_cfg(&db), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "gqp.yaml:3:17:") && strstr(gqp_errmsg(db), "memory_limit") &&
                  strstr(gqp_errmsg(db), "'lots'") && strstr(gqp_errmsg(db), "GiB"),
              "%s", gqp_errmsg(db));
    gqp_close(db);
    /* given twice: the strict keys refuse it */
    put("gqp.yaml", "device:\n  memory_limit: 1GB\n  memory_limit: 2GB\n");
    cr_assert_eq(open_cfg(&db), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "duplicate key"), "%s", gqp_errmsg(db));
    gqp_close(db);
}

/* Run sql to completion; returns the final code (GQP_DONE or an error). */
static int run(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    if (!st) return GQP_DONE;
    while ((rc = gqp_step(st)) == GQP_ROW)
        ;
    gqp_finalize(st);
    return rc;
}

Test(memory, set_memory_limit) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(run(db, "SET memory_limit = '2GB'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect_eq(db->mem_limit_bytes, 2000000000);
    cr_assert_eq(run(db, "SET memory_limit = '25%'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect(db->mem_limit_bytes == 0 && db->mem_limit_pct == 25);
    cr_assert_eq(run(db, "SET memory_limit = 1048576"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect(db->mem_limit_bytes == 1048576 && db->mem_limit_pct == 0);
    cr_assert_eq(run(db, "SET memory_limit = 'none'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect(db->mem_limit_bytes == 0 && db->mem_limit_pct == 0);
    cr_assert_eq(run(db, "SET memory_limit = '12 parsecs'"), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "Binder Error: memory_limit must be") &&
                  strstr(gqp_errmsg(db), "'12 parsecs'"),
              "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "SET memory_limit = -5"), GQP_ERROR);
    gqp_close(db);
}

/* ------------------------------------------- host allocation failures */

/* The rows of sql as one string ("a|b\n" per row), or NULL with *rc the
 * failing code. */
static char *rows_of(gqp *db, const char *sql, int *rc) {
    gqp_stmt *st = NULL;
    *rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (*rc != GQP_OK) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    out[0] = 0;
    while ((*rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < gqp_column_count(st); c++) {
            const char *t = (const char *)gqp_column_text(st, c);
            size_t l = strlen(t ? t : "NULL") + 2;
            if (len + l + 1 > cap) {
                cap = 2 * (len + l + 1);
                out = realloc(out, cap);
                cr_assert_not_null(out);
            }
            len += (size_t)snprintf(out + len, cap - len, "%s%c", t ? t : "NULL",
                                    c + 1 < gqp_column_count(st) ? '|' : '\n');
        }
    }
    gqp_finalize(st);
    if (*rc != GQP_DONE) {
        free(out);
        return NULL;
    }
    return out;
}

/* Tables t (k, v, s, 10,000 rows) and u (k, 100 rows) in db. */
static void make_tables(gqp *db) {
    const char *setup[] = {
        "CREATE TABLE d(x INTEGER)",
        "INSERT INTO d VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        "CREATE TABLE t(k INTEGER, v DOUBLE, s VARCHAR)",
        "INSERT INTO t SELECT a.x*1000+b.x*100+c.x*10+e.x, a.x*0.5+e.x, CASE WHEN b.x < 3 THEN "
        "'lo' ELSE 'hi' END FROM d a, d b, d c, d e",
        "CREATE TABLE u(k INTEGER, w INTEGER)",
        "INSERT INTO u SELECT a.x*10+b.x, a.x FROM d a, d b"};
    for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
        cr_assert_eq(run(db, setup[i]), GQP_DONE, "%s: %s", setup[i], gqp_errmsg(db));
}

/* Queries that cover the executor's node kinds (filters, joins, sorts,
 * grouped and dense aggregates, strings, limits, set operations). */
static const char *queries[] = {
    "SELECT COUNT(*), SUM(k), SUM(v) FROM t WHERE v > 2",
    "SELECT s, COUNT(*), MIN(k), MAX(v) FROM t GROUP BY s ORDER BY s",
    "SELECT t.k, u.w FROM t JOIN u ON t.k = u.k ORDER BY t.k",
    "SELECT u.w, SUM(t.v) FROM t JOIN u ON t.k % 100 = u.k GROUP BY u.w ORDER BY u.w",
    "SELECT k, v FROM t ORDER BY v DESC, k LIMIT 7 OFFSET 3",
    "SELECT u.k, COUNT(t.k) FROM u LEFT JOIN t ON t.k = u.k * 200 GROUP BY u.k ORDER BY u.k",
    "SELECT k FROM u WHERE k < 5 UNION SELECT k FROM t WHERE k > 9995 ORDER BY 1",
    "SELECT DISTINCT w FROM u ORDER BY w",
    "SELECT k, CAST(v AS TEXT) FROM t WHERE k < 4 ORDER BY k"};

/* Run every query normally, then with each of its host allocations
 * failing in turn (n = 1 .. the allocations its normal run made): each
 * run answers as the normal one or fails with an out-of-memory error.
 * strict: the run with n one past the count must not fail (the plan, and
 * so the count, is the same every run: not so under auto with a GPU,
 * whose placement follows the columns' read counts). */
static void check_host_failures(gqp *db, int strict) {
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        int rc;
        gqp_test_fail_alloc(db, 0, 0, 0);
        char *want = rows_of(db, queries[q], &rc);
        cr_assert_not_null(want, "%s: %s", queries[q], gqp_errmsg(db));
        int64_t count = gqp_test_alloc_count(db, 0);
        cr_assert_gt(count, 0, "%s made no host allocation", queries[q]);
        for (int64_t n = 1; n <= count + 1; n++) {
            gqp_test_fail_alloc(db, 0, n, 0);
            char *got = rows_of(db, queries[q], &rc);
            gqp_test_fail_alloc(db, 0, 0, 0);
            if (got)
                cr_expect_str_eq(got, want, "%s with host allocation %lld failing", queries[q],
                                 (long long)n);
            else
                cr_expect(strstr(gqp_errmsg(db), "out of memory"),
                          "%s with host allocation %lld failing: %s", queries[q], (long long)n,
                          gqp_errmsg(db));
            if (strict && n == count + 1) cr_expect_not_null(got, "%s: nothing failed", queries[q]);
            free(got);
        }
        free(want);
    }
}

Test(memory, host_allocation_failures_cpu) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    make_tables(db);
    check_host_failures(db, 1);
    gqp_close(db);
}

Test(memory, host_allocation_failures_auto) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    make_tables(db);
    check_host_failures(db, !prim_gpu_available());
    gqp_close(db);
}

/* EXPLAIN ANALYZE's text and JSON for nodes that recovered from a device
 * out-of-memory (the fields the executor sets, set here by hand). */
Test(memory, explain_names_the_recovery) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    make_tables(db);
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT k FROM u WHERE w > 3", -1, &st, NULL), GQP_OK);
    while (gqp_step(st) == GQP_ROW)
        ;
    Dag *d = st->dag;
    cr_assert_gt(d->nnodes, 1);
    d->nodes[0].oom_action = 2;
    d->nodes[0].oom_need = 80000;
    d->nodes[0].oom_avail = 16000;
    d->nodes[0].oom_limit = 1;
    d->nodes[1].oom_action = 1;
    d->nodes[1].oom_need = 4096;
    d->nodes[1].oom_avail = 1024;
    char *t = plan_explain_text(d, 1);
    cr_assert_not_null(t);
    cr_expect(strstr(t, "(ran on the CPU after a device out-of-memory: 80000 bytes needed, 16000 "
                        "available under memory_limit)") &&
                  strstr(t, "(ran again on the GPU after a device out-of-memory: 4096 bytes "
                            "needed, 1024 available)"),
              "%s", t);
    free(t);
    char *j = plan_explain_json(d, 1);
    cr_assert_not_null(j);
    cr_expect(strstr(j, "\"device_oom\": {\"action\": \"cpu\", \"bytes_needed\": 80000, "
                        "\"bytes_available\": 16000, \"memory_limit\": true}") &&
                  strstr(j, "\"action\": \"retry\""),
              "%s", j);
    free(j);
    /* not analyzed: no such text */
    t = plan_explain_text(d, 0);
    cr_expect_null(strstr(t, "out-of-memory"), "%s", t);
    free(t);
    gqp_finalize(st);
    gqp_close(db);
}

/* ------------------------------------------------------ on the GPU */

/* The accounted allocator against memory_limit and the device itself; a
 * failed cudaMallocAsync leaves no error behind for later calls. */
/* The host pool: a large buffer that crosses PCIe is pageable the first
 * time and locked in place when its block crosses again; small ones are
 * locked at once; buffers that never cross are never locked. */
static void pool_pins(int gpu) {
    ExecHostPool *p = exec_pool_new((size_t)1 << 30);
    cr_assert_not_null(p);
    exec_pool_set_pinned(p, gpu);
    size_t big = EXEC_PIN_MAX_BYTES + ((size_t)8 << 20), small = (size_t)4 << 20;
    char *a = exec_pool_alloc_pinned(p, big);
    cr_assert_not_null(a);
    cr_assert_eq(exec_pool_block_pinned(p, a), 0, "a new large block is not locked");
    memset(a, 7, big);
    exec_pool_release(p, a);
    char *b = exec_pool_alloc(p, big);
    cr_assert_eq(b, a, "the idle block is handed out again");
    cr_assert_eq(exec_pool_block_pinned(p, b), 0, "a buffer that does not cross stays pageable");
    exec_pool_release(p, b);
    char *c = exec_pool_alloc_pinned(p, big);
    cr_assert_eq(c, a);
    cr_assert_eq(exec_pool_block_pinned(p, c), gpu ? 2 : 0,
                 "locked in place on its second crossing");
    cr_assert_eq(c[big - 1], 7, "locking keeps the contents");
    exec_pool_release(p, c);
    char *d = exec_pool_alloc_pinned(p, big - 4096);
    cr_assert_eq(d, a, "the locked block serves the next crossing");
    cr_assert_eq(exec_pool_block_pinned(p, d), gpu ? 2 : 0);
    char *e = exec_pool_alloc_pinned(p, small);
    cr_assert_not_null(e);
    cr_assert_eq(exec_pool_block_pinned(p, e), gpu ? 1 : 0,
                 "a small crossing block is locked at once");
    exec_pool_release(p, d);
    exec_pool_release(p, e);
    exec_pool_free(p);
}

Test(memory, host_pool_pins_on_second_crossing_cpu) {
    pool_pins(0);
}

Test(memory_gpu, host_pool_pins_on_second_crossing) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    pool_pins(1);
}

Test(memory_gpu, allocator_limit_and_error_state) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    char err[256];
    ExecDevice *d = exec_device_open(0, err, sizeof err);
    cr_assert_not_null(d, "%s", err);
    /* without a limit the capacity is what the device has free (and what
     * this process holds): another process may hold the rest */
    size_t fr = 0, total = 0;
    cr_assert_eq(prim_gpu_mem_info(&fr, &total), 0);
    cr_expect(exec_device_capacity(d) > 0 && exec_device_capacity(d) <= total, "%zu of %zu",
              exec_device_capacity(d), total);
    exec_device_set_limit(d, 1 << 20, 0);
    cr_assert_eq(exec_device_limit(d), 1 << 20);
    cr_expect_eq(exec_device_capacity(d), 1 << 20);
    void *a = exec_dev_alloc(d, 600 << 10, d->stream);
    cr_assert_not_null(a);
    cr_expect_eq(exec_device_used(d), 600 << 10);
    void *b = exec_dev_alloc(d, 600 << 10, d->stream);
    cr_expect_null(b, "over the limit");
    int64_t cnt;
    size_t need, avail;
    cr_expect_eq(exec_device_oom(d, &cnt, &need, &avail), 2);
    cr_expect(cnt == 1 && need == 600 << 10 && avail == 424 << 10, "%lld %zu %zu", (long long)cnt,
              need, avail);
    exec_dev_free(d, a, d->stream);
    cr_expect_eq(exec_device_used(d), 0);
    b = exec_dev_alloc(d, 600 << 10, d->stream);
    cr_expect_not_null(b);
    exec_dev_free(d, b, d->stream);
    /* a share of the device */
    exec_device_set_limit(d, 0, 50);
    cr_assert_eq(prim_gpu_mem_info(&fr, &total), 0);
    cr_expect_eq(exec_device_limit(d), (size_t)((double)total * 0.5));
    /* more than the device has: a real cudaErrorMemoryAllocation */
    exec_device_set_limit(d, 0, 0);
    void *huge = exec_dev_alloc(d, total * 4, d->stream);
    cr_expect_null(huge);
    cr_expect_eq(exec_device_oom(d, NULL, &need, &avail), 1);
    cr_expect(need == total * 4 && avail <= total, "%zu %zu", need, avail);
    /* the runtime's error state is clear: the next calls work */
    void *ok = exec_dev_alloc(d, 4096, d->stream);
    cr_expect_not_null(ok);
    cr_expect_eq(prim_gpu_memset(ok, 0, 4096, d->stream, err, sizeof err), 0, "%s", err);
    cr_expect_eq(prim_gpu_sync(d->stream, err, sizeof err), 0, "%s", err);
    exec_dev_free(d, ok, d->stream);
    /* fault injection: the 2nd allocation fails, the 3rd works */
    exec_device_fail_at(d, 2, 0);
    void *p1 = exec_dev_alloc(d, 64, d->stream), *p2 = exec_dev_alloc(d, 64, d->stream),
         *p3 = exec_dev_alloc(d, 64, d->stream);
    cr_expect(p1 && !p2 && p3);
    cr_expect_eq(exec_device_alloc_count(d), 3);
    exec_dev_free(d, p1, d->stream);
    exec_dev_free(d, p3, d->stream);
    exec_device_close(d);
}

/* sql's rows on db (rows_of) equal want; what names the run in messages. */
static void expect_rows(gqp *db, const char *sql, const char *want, const char *what) {
    int rc;
    char *got = rows_of(db, sql, &rc);
    cr_expect_not_null(got, "%s (%s): %s", sql, what, gqp_errmsg(db));
    if (got) cr_expect_str_eq(got, want, "%s (%s)", sql, what);
    free(got);
}

/* sql's rows on the CPU (rows_of; the caller frees them), the device set
 * to the GPU after. */
static char *cpu_rows_then_gpu(gqp *db, const char *sql) {
    int rc;
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    char *want = rows_of(db, sql, &rc);
    cr_assert_not_null(want, "%s: %s", sql, gqp_errmsg(db));
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
    return want;
}

/* A column cache budget far below what one query reads: the cache evicts
 * only columns no running query reads (it used to evict the least
 * recently used one even while a later node still read it). */
Test(memory_gpu, cache_budget_keeps_columns_being_read) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    db->gpu_cache_bytes = 1; /* before the GPU session opens */
    make_tables(db);
    size_t nq = sizeof queries / sizeof queries[0];
    for (int rep = 0; rep < 2; rep++)
        for (size_t q = 0; q < nq; q++) {
            char *want = cpu_rows_then_gpu(db, queries[q]);
            expect_rows(db, queries[q], want, "gpu");
            free(want);
        }
    gqp_close(db);
}

/* Every query, with every node on the GPU: every device allocation from
 * the n-th on failing, with the CPU fallback (as under auto), answers as
 * the CPU does, and EXPLAIN ANALYZE names the nodes that moved; a tiny
 * memory_limit likewise; without the fallback (--device gpu) the error
 * gives the bytes needed and available. */
Test(memory_gpu, recovery_on_the_cpu_twin) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    make_tables(db);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    size_t nq = sizeof queries / sizeof queries[0];
    char *want[16];
    for (size_t q = 0; q < nq; q++) {
        int rc;
        want[q] = rows_of(db, queries[q], &rc);
        cr_assert_not_null(want[q], "%s: %s", queries[q], gqp_errmsg(db));
    }
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
    db->oom_fallback_gpu = 1;
    for (size_t q = 0; q < nq; q++) {
        int rc;
        gqp_test_fail_alloc(db, 1, 0, 0);
        char *got = rows_of(db, queries[q], &rc);
        cr_assert_not_null(got, "%s: %s", queries[q], gqp_errmsg(db));
        free(got);
        int64_t count = gqp_test_alloc_count(db, 1);
        for (int64_t n = 1; n <= count; n += count / 5 + 1)
            for (int sticky = 0; sticky < 2; sticky++) {
                gqp_test_fail_alloc(db, 1, n, sticky);
                got = rows_of(db, queries[q], &rc);
                gqp_test_fail_alloc(db, 1, 0, 0);
                cr_expect_not_null(got, "%s, device allocation %lld%s failing: %s", queries[q],
                                   (long long)n, sticky ? "+" : "", gqp_errmsg(db));
                if (got)
                    cr_expect_str_eq(got, want[q], "%s, device allocation %lld%s failing",
                                     queries[q], (long long)n, sticky ? "+" : "");
                free(got);
            }
    }
    /* EXPLAIN ANALYZE says which node moved and why */
    gqp_test_fail_alloc(db, 1, 1, 1);
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, queries[0], -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s",
                 gqp_errmsg(db));
    gqp_test_fail_alloc(db, 1, 0, 0);
    cr_expect(strstr(plan, "[cpu]") &&
                  strstr(plan, "ran on the CPU after a device out-of-memory") &&
                  strstr(plan, "bytes needed"),
              "%s", plan);
    gqp_free(plan);
    /* a memory_limit far below what the queries read */
    cr_assert_eq(run(db, "SET memory_limit = '16KB'"), GQP_DONE, "%s", gqp_errmsg(db));
    for (size_t q = 0; q < nq; q++) {
        int rc;
        char *got = rows_of(db, queries[q], &rc);
        cr_expect_not_null(got, "%s under 16KB: %s", queries[q], gqp_errmsg(db));
        if (got) cr_expect_str_eq(got, want[q], "%s under 16KB", queries[q]);
        free(got);
    }
    /* --device gpu proper: the query fails, saying what was needed */
    db->oom_fallback_gpu = 0;
    int rc;
    char *got = rows_of(db, queries[0], &rc);
    cr_expect_null(got);
    cr_expect(strstr(gqp_errmsg(db), "out of device memory") &&
                  strstr(gqp_errmsg(db), "bytes needed") &&
                  strstr(gqp_errmsg(db), "available under memory_limit"),
              "%s", gqp_errmsg(db));
    free(got);
    /* with the limit gone the same handle runs on the GPU again */
    cr_assert_eq(run(db, "SET memory_limit = 'none'"), GQP_DONE);
    got = rows_of(db, queries[0], &rc);
    cr_expect_not_null(got, "%s", gqp_errmsg(db));
    if (got) cr_expect_str_eq(got, want[0]);
    free(got);
    for (size_t q = 0; q < nq; q++)
        free(want[q]);
    gqp_close(db);
}

/* The streamed range of column p, or NULL. */
static const ExecStreamed *streamed_of(const gqp *db, const void *p) {
    for (int i = 0; db->dev && i < db->dev->nstreamed; i++)
        if (db->dev->streamed[i].p == (const char *)p) return &db->dev->streamed[i];
    return NULL;
}

/* Tables d (the digits 0-9) and f(k, v): 100,000 rows of k 0..99999 and
 * v = a product of digits minus one, times `copies` (1 or 10: each k
 * repeated); then the statements of more[0..nmore). */
static void make_digit_tables(gqp *db, int copies, const char *const *more, size_t nmore) {
    const char *setup[] = {
        "CREATE TABLE d(x INTEGER)", "INSERT INTO d VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        copies == 10 ? "CREATE TABLE f AS SELECT a.x + 10 * b.x + 100 * c.x + 1000 * e.x + "
                       "10000 * g.x AS k, a.x * b.x - c.x AS v FROM d a, d b, d c, d e, d g, d h"
                     : "CREATE TABLE f AS SELECT a.x + 10 * b.x + 100 * c.x + 1000 * e.x + "
                       "10000 * g.x AS k, a.x * b.x - c.x AS v FROM d a, d b, d c, d e, d g"};
    for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
        cr_assert_eq(run(db, setup[i]), GQP_DONE, "%s: %s", setup[i], gqp_errmsg(db));
    for (size_t i = 0; i < nmore; i++)
        cr_assert_eq(run(db, more[i]), GQP_DONE, "%s: %s", more[i], gqp_errmsg(db));
}

/* A table run in chunks on the GPU again and again: from the second run
 * on its columns stay page-locked (exec_device_streamed), the answers
 * stay the CPU's, and an UPDATE of the table unlocks (forgets) them. */
Test(memory_gpu, chunked_runs_keep_columns_locked) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    const char *nulls = "INSERT INTO f SELECT k + 100000, NULL FROM f WHERE k % 7 = 0";
    make_digit_tables(db, 1, &nulls, 1);
    const char *q = "SELECT k % 5, COUNT(*), SUM(v), COUNT(v) FROM f WHERE k > 17 GROUP BY 1 "
                    "ORDER BY 1";
    int rc;
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    char *want = rows_of(db, q, &rc);
    cr_assert_not_null(want, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
    cr_assert_eq(run(db, "SET chunk_rows = 20000"), GQP_DONE, "%s", gqp_errmsg(db));
    const CatTable *t = cat_find_table(db->cat, "f");
    cr_assert_not_null(t);
    int kc = cat_find_column(t, "k"), vc = cat_find_column(t, "v");
    for (int r = 1; r <= 3; r++) {
        char *got = rows_of(db, q, &rc);
        cr_expect_not_null(got, "run %d: %s", r, gqp_errmsg(db));
        if (got) cr_expect_str_eq(got, want, "run %d", r);
        free(got);
        const ExecStreamed *s = streamed_of(db, t->cols[kc].data);
        cr_expect(s && s->runs == r && s->pinned == (r >= 2), "run %d: k streamed %d, pinned %d", r,
                  s ? s->runs : -1, s ? s->pinned : -1);
        s = streamed_of(db, t->cols[vc].valid);
        cr_expect(s && s->pinned == (r >= 2), "run %d: v's validity pinned %d", r,
                  s ? s->pinned : -1);
    }
    free(want);
    /* an UPDATE forgets (and unlocks) the columns; the answers follow it */
    const void *old = t->cols[kc].data;
    cr_assert_eq(run(db, "UPDATE f SET k = k + 1 WHERE k % 3 = 0"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect_null(streamed_of(db, old));
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    want = rows_of(db, q, &rc);
    cr_assert_not_null(want, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
    for (int r = 1; r <= 3; r++) {
        char *got = rows_of(db, q, &rc);
        cr_expect_not_null(got, "after the UPDATE, run %d: %s", r, gqp_errmsg(db));
        if (got) cr_expect_str_eq(got, want, "after the UPDATE, run %d", r);
        free(got);
    }
    free(want);
    gqp_close(db);
}

/* Overlapping slices of one host column cached side by side (a chunk of a
 * table and the same table cut again as a co-sliced relation of itself):
 * the first slice is page-locked, the later ones overlap it and cannot be;
 * their copies span locked and pageable memory, which CUDA refuses as a
 * whole ("invalid argument", TPC-H Q21 under a memory_limit), so the cache
 * copies them in runs. Every cached copy holds the column's values. */
Test(memory_gpu, overlapping_slices_copy_in_runs) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    char err[256] = "";
    ExecDevice *d = exec_device_open(0, err, sizeof err);
    cr_assert_not_null(d, "%s", err);
    exec_device_set_lock_min(d, 0);
    const int64_t n = (int64_t)1 << 20;
    int32_t *col = cat_host_alloc(sizeof *col * (size_t)n);
    cr_assert_not_null(col);
    for (int64_t i = 0; i < n; i++)
        col[i] = (int32_t)(i * 7 + 3);
    /* [0, 600k) first (locked), then ranges that start before, inside and
     * after it and end inside or beyond it */
    const int64_t lo[] = {0, 0, 100000, 300000, 599999, 700000, 50000};
    const int64_t len[] = {600000, 1000000, 700000, 100000, 2, 200000, 1};
    int32_t *back = malloc(sizeof *back * (size_t)n);
    cr_assert_not_null(back);
    for (size_t k = 0; k < sizeof lo / sizeof lo[0]; k++) {
        PrimVec h = {PRIM_I32, len[k], col + lo[k], NULL}, dv;
        int64_t h2d = 0;
        cr_assert_eq(exec_cache_get(d, &h, &dv, &h2d, d->stream, err, sizeof err), 0,
                     "slice %zu: %s", k, err);
        cr_expect_eq(h2d, len[k] * 4, "slice %zu", k);
        cr_assert_eq(
            prim_gpu_copy(back, dv.data, (size_t)len[k] * 4, PRIM_D2H, d->stream, err, sizeof err),
            0, "%s", err);
        cr_assert_eq(prim_gpu_sync(d->stream, err, sizeof err), 0, "%s", err);
        cr_expect_eq(memcmp(back, col + lo[k], (size_t)len[k] * 4), 0, "slice %zu", k);
        exec_cache_unpin(d, h.data, h.n, h.type);
    }
    cr_expect(d->ncache == 7 && d->cache[0].pinned, "%d entries", d->ncache);
    exec_device_close(d);
    free(back);
    cat_host_free(col);
}

/* --device auto under a memory_limit its GPU plan exceeds (libgqp/chunk.c,
 * gqp_budget_plan): a plan that cannot run in chunks (a MEDIAN), and one
 * whose chunks would each read another relation's columns whole (EXISTS
 * over the same table), go to the CPU and say why; under --device gpu they
 * stay as placed; a DISTINCT aggregate runs in chunks; every answer is the
 * CPU's. */
Test(memory_gpu, budget_sends_unfit_plans_to_the_cpu) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    make_digit_tables(db, 10, NULL, 0);
    /* chunks or the CPU: not the mapped reads that would fit these plans */
    cr_assert_eq(run(db, "SET mapped_columns = 'off'"), GQP_DONE, "%s", gqp_errmsg(db));
    const char *qs[] = {
        "SELECT k % 7, MEDIAN(v) FROM f GROUP BY 1 ORDER BY 1",
        ("SELECT COUNT(*), SUM(a.v) FROM f a WHERE a.k > 5 AND EXISTS (SELECT 1 FROM f b WHERE "
         "b.k = a.k - 3 AND b.v > a.v)"),
        "SELECT k % 5, SUM(v), COUNT(*) FROM f WHERE k > 17 GROUP BY 1 ORDER BY 1",
        "SELECT k % 7, COUNT(DISTINCT v) FROM f GROUP BY 1 ORDER BY 1"};
    const char *why[] = {"cannot run in chunks", "whole", NULL, NULL};
    for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
        int rc;
        cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
        cr_assert_eq(run(db, "SET memory_limit = 'none'"), GQP_DONE, "%s", gqp_errmsg(db));
        char *want = rows_of(db, qs[q], &rc);
        cr_assert_not_null(want, "%s: %s", qs[q], gqp_errmsg(db));
        /* the GPU plan, judged as auto would judge it under 1 MB */
        cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
        cr_assert_not_null(gqp_device_session(db));
        cr_assert_eq(run(db, "SET memory_limit = '1MB'"), GQP_DONE, "%s", gqp_errmsg(db));
        gqp_stmt *st = NULL;
        cr_assert_eq(gqp_prepare(db, qs[q], -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
        int f = -1;
        int64_t rows = 0;
        char text[320];
        GqpBudget gb = gqp_budget_plan(db, st, &f, &rows, text, sizeof text);
        cr_expect(gb != GQP_BUDGET_CPU, "%s: CPU under --device gpu", qs[q]);
        db->device = GQP_DEVICE_AUTO;
        gb = gqp_budget_plan(db, st, &f, &rows, text, sizeof text);
        if (why[q])
            cr_expect(gb == GQP_BUDGET_CPU && strstr(text, why[q]), "%s: %d '%s'", qs[q], (int)gb,
                      text);
        else
            cr_expect(gb != GQP_BUDGET_CPU, "%s: CPU under auto: '%s'", qs[q], text);
        gqp_finalize(st);
        /* end to end under auto: the CPU's answer */
        cr_assert_eq(gqp_set_device(db, GQP_DEVICE_AUTO), GQP_OK);
        expect_rows(db, qs[q], want, "auto");
        free(want);
    }
    gqp_close(db);
}

/* SET mapped_columns = 'on': GPU nodes read the table columns in place
 * from page-locked host memory; every query answers as the CPU does,
 * EXPLAIN ANALYZE counts the bytes read so, and after an UPDATE or DELETE
 * (whose columns the session forgets, unlocking them) the answers follow
 * the new rows; 'off' reads nothing mapped. */
Test(memory_gpu, mapped_columns_read_in_place) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    make_tables(db);
    size_t nq = sizeof queries / sizeof queries[0];
    const char *change[] = {NULL, "UPDATE t SET v = v + 1 WHERE k % 3 = 0",
                            "DELETE FROM t WHERE k % 7 = 2"};
    for (size_t c = 0; c < 3; c++) {
        if (change[c]) cr_assert_eq(run(db, change[c]), GQP_DONE, "%s", gqp_errmsg(db));
        for (size_t q = 0; q < nq; q++) {
            char *want = cpu_rows_then_gpu(db, queries[q]);
            cr_assert_eq(run(db, "SET gpu_cache = 'clear'"), GQP_DONE, "%s", gqp_errmsg(db));
            cr_assert_eq(run(db, "SET mapped_columns = 'on'"), GQP_DONE, "%s", gqp_errmsg(db));
            expect_rows(db, queries[q], want, change[c] ? change[c] : "mapped");
            expect_rows(db, queries[q], want, "mapped, again");
            cr_assert_eq(run(db, "SET mapped_columns = 'off'"), GQP_DONE, "%s", gqp_errmsg(db));
            expect_rows(db, queries[q], want, "copied");
            free(want);
        }
    }
    char *plan = NULL;
    cr_assert_eq(run(db, "SET gpu_cache = 'clear'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "SET mapped_columns = 'on'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_explain(db, queries[0], -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_expect(strstr(plan, "mapped=") && strstr(plan, "read mapped)"), "%s", plan);
    gqp_free(plan);
    cr_assert_eq(run(db, "SET gpu_cache = 'clear'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "SET mapped_columns = 'off'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_explain(db, queries[0], -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_expect(!strstr(plan, "mapped="), "%s", plan);
    gqp_free(plan);
    gqp_close(db);
}

/* Table b: 100000 rows of k (0..99999) and v, for the mapped-read tests
 * below; the query reads both columns once. */
static void make_big(gqp *db) {
    make_tables(db);
    const char *setup[] = {"CREATE TABLE b(k INTEGER, v DOUBLE)",
                           "INSERT INTO b SELECT p.x*10000+q.x*1000+r.x*100+s.x*10+w.x, "
                           "p.x*0.5+w.x FROM d p, d q, d r, d s, d w"};
    for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
        cr_assert_eq(run(db, setup[i]), GQP_DONE, "%s: %s", setup[i], gqp_errmsg(db));
}
#define BIG_QUERY "SELECT SUM(k), SUM(v), COUNT(*) FROM b WHERE k % 3 = 1"

/* A fresh handle holding b, made on the CPU (no device session opened),
 * then switched to the GPU; returns BIG_QUERY's answer on the CPU. */
static char *big_on_gpu(gqp **db) {
    cr_assert_eq(gqp_open(NULL, db), GQP_OK);
    cr_assert_eq(gqp_set_device(*db, GQP_DEVICE_CPU), GQP_OK);
    make_big(*db);
    int rc;
    char *want = rows_of(*db, BIG_QUERY, &rc);
    cr_assert_not_null(want, "%s", gqp_errmsg(*db));
    cr_assert_null((*db)->dev, "a CPU-only session opened the device");
    cr_assert_eq(gqp_set_device(*db, GQP_DEVICE_GPU), GQP_OK);
    return want;
}

/* Under a memory_limit that the plan's estimated outputs exceed (about
 * 3.3 MB, 1.6 MB of them its two columns) and the rest of it with its
 * reduction's scratch fits, auto reads those columns mapped and runs the
 * plan whole (EXPLAIN says so before the run, ANALYZE counts the bytes);
 * with mapped_columns off it copies them (in chunks); both answer as the
 * CPU does. */
Test(memory_gpu, mapped_columns_under_a_budget) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    char *want = big_on_gpu(&db);
    const char *q = BIG_QUERY;
    cr_assert_eq(run(db, "SET memory_limit = '2500KB'"), GQP_DONE, "%s", gqp_errmsg(db));
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, 0, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "-- runs whole: 2 columns") && strstr(plan, "read mapped"), "%s", plan);
    gqp_free(plan);
    expect_rows(db, q, want, "mapped under 2500KB");
    /* a mapped whole run that still runs out of device memory (its first
     * allocation failing) runs again as it would without mapped reads */
    gqp_test_fail_alloc(db, 1, 1, 0);
    expect_rows(db, q, want, "mapped, its first device allocation failing");
    gqp_test_fail_alloc(db, 1, 0, 0);
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "mapped=") && !strstr(plan, "chunked execution"), "%s", plan);
    gqp_free(plan);
    cr_assert_eq(run(db, "SET mapped_columns = 'off'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(!strstr(plan, "mapped="), "%s", plan);
    gqp_free(plan);
    expect_rows(db, q, want, "copied under 2500KB");
    free(want);
    gqp_close(db);
}

/* The first query of a process meets the budget as later ones do: no
 * GPU work has opened the device session yet (tables made on the CPU),
 * and EXPLAIN and the run still make the budget's decision (before, the
 * decision needed an open session: a one-shot `gqp run` ran whole, ran
 * out of memory and only then chunked or failed). */
Test(memory_gpu, first_query_meets_the_budget) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    char *want = big_on_gpu(&db);
    const char *q = BIG_QUERY;
    cr_assert_eq(run(db, "SET memory_limit = '2500KB'"), GQP_DONE, "%s", gqp_errmsg(db));
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, 0, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "-- runs whole: 2 columns") && strstr(plan, "read mapped"), "%s", plan);
    gqp_free(plan);
    gqp_close(db);
    /* the run itself, in a fresh handle: its first statement */
    free(want);
    want = big_on_gpu(&db);
    cr_assert_eq(run(db, "SET memory_limit = '2500KB'"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "mapped=") && !strstr(plan, "out-of-memory"), "%s", plan);
    gqp_free(plan);
    expect_rows(db, q, want, "first query under 2500KB");
    free(want);
    gqp_close(db);
}

/* A chunked GPU run copies the next chunk's columns while the current
 * chunk's kernels run (exec_cache_prefetch), from a table's third chunked
 * run on (its columns then kept page-locked): the last chunk's sources
 * then copy nothing themselves; answers as the CPU's, and as with the
 * prefetch off (GQP_CHUNK_PREFETCH=0). */
Test(memory_gpu, chunks_copied_ahead) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db;
    char *want = big_on_gpu(&db);
    const char *q = BIG_QUERY;
    cr_assert_eq(run(db, "SET chunk_rows = 20000"), GQP_DONE, "%s", gqp_errmsg(db));
    for (int r = 0; r < 3; r++)
        expect_rows(db, q, want, "in chunks of 20000 rows");
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    const char *src = strstr(plan, "source [gpu] b.k");
    const char *eol = src ? strchr(src, '\n') : NULL;
    cr_assert(src && eol && strstr(plan, "chunked execution"), "%s", plan);
    char line[1024];
    size_t len = (size_t)(eol - src) < sizeof line - 1 ? (size_t)(eol - src) : sizeof line - 1;
    memcpy(line, src, len);
    line[len] = 0;
    cr_expect(!strstr(line, "h2d="), "the last chunk's b.k was not copied ahead: %s", plan);
    gqp_free(plan);
    setenv("GQP_CHUNK_PREFETCH", "0", 1);
    expect_rows(db, q, want, "in chunks, nothing copied ahead");
    unsetenv("GQP_CHUNK_PREFETCH");
    free(want);
    gqp_close(db);
}

/* Key-ordered copies (libgqp/cluster.c) hold at most GQP_CLUSTER_BYTES of
 * host memory together: with the default cap the runs below keep every
 * copy they made; with a cap below that the least recently used go, the
 * bytes stay under it, and every answer is the unchunked run's. */
static void copy_runs(size_t *bytes, int *ncopies) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    const char *setup[] = {
        "CREATE TABLE f(k INTEGER, v INTEGER)",
        "INSERT INTO f VALUES (7,1),(2,2),(12,3),(2,4),(-9,5),(3,6),(7,7),(40,8),(1,9),(3,10),"
        "(9,11),(12,12),(5,13),(3,14),(8,15),(0,16)",
        "CREATE TABLE g(k INTEGER, x INTEGER)",
        "INSERT INTO g VALUES (12,10),(2,3),(-9,0),(7,7),(1,2),(13,11),(2,4),(7,8),(3,5),(0,1),"
        "(4,6),(9,9)",
        "CREATE TABLE d(k INTEGER, x INTEGER)",
        "INSERT INTO d SELECT k * 3 + 1, k FROM f"};
    for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
        cr_assert_eq(run(db, setup[i]), GQP_DONE, "%s: %s", setup[i], gqp_errmsg(db));
    const char *qs[] = {"SELECT f.k, f.v, g.x FROM f, g WHERE f.k = g.k ORDER BY 2, 3",
                        "SELECT f.v, d.x FROM f, d WHERE f.v = d.x ORDER BY 1, 2",
                        "SELECT g.x, f.v FROM f, g WHERE f.v = g.x ORDER BY 1, 2",
                        "SELECT d.k, COUNT(*) FROM d, g WHERE d.x = g.k GROUP BY 1 ORDER BY 1"};
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    *bytes = 0;
    for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
        int rc;
        cr_assert_eq(run(db, "SET chunk_rows = 0"), GQP_DONE, "%s", gqp_errmsg(db));
        char *want = rows_of(db, qs[q], &rc);
        cr_assert_not_null(want, "%s: %s", qs[q], gqp_errmsg(db));
        cr_assert_eq(run(db, "SET chunk_rows = 3"), GQP_DONE, "%s", gqp_errmsg(db));
        cr_assert_eq(run(db, "SET chunk_cluster = 'on'"), GQP_DONE, "%s", gqp_errmsg(db));
        expect_rows(db, qs[q], want, "chunked through copies");
        free(want);
        size_t b = gqp_cluster_bytes(db, ncopies);
        if (b > *bytes) *bytes = b;
    }
    gqp_cluster_bytes(db, ncopies);
    gqp_close(db);
}

Test(chunk_budget, copies_under_a_byte_cap) {
    size_t most = 0, capped = 0;
    int n = 0, nc = 0;
    unsetenv("GQP_CLUSTER_BYTES");
    copy_runs(&most, &n);
    cr_assert(n >= 2 && most > 0, "%d copies, %zu bytes", n, most);
    char cap[32];
    snprintf(cap, sizeof cap, "%zu", most / 2);
    setenv("GQP_CLUSTER_BYTES", cap, 1);
    copy_runs(&capped, &nc);
    unsetenv("GQP_CLUSTER_BYTES");
    cr_expect(capped <= most / 2 && nc < n, "cap %s: %zu bytes, %d copies (%zu, %d without)", cap,
              capped, nc, most, n);
}

/* Copies made for one chunked run while the cap makes room: the run's
 * copy that a later copy's making evicted would be freed while the run
 * reads it (a use-after-free found in review: the new entry moved in the
 * array and its pin went to the old slot). Caps of about one and two
 * copies; answers as the unchunked run's (ASan in CI checks the rest). */
Test(chunk_budget, copies_of_one_run_under_a_tight_cap) {
    const char *caps[] = {"100000", "84000", "20000"};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        setenv("GQP_CLUSTER_BYTES", caps[c], 1);
        gqp *db;
        cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
        const struct {
            const char *name;
            int n, mod;
        } ts[] = {{"f", 4000, 1000}, {"g", 2000, 1000}, {"d", 1000, 500}, {"e", 1000, 500}};
        cr_assert_eq(run(db, "CREATE TABLE dg(x INTEGER)"), GQP_DONE, "%s", gqp_errmsg(db));
        cr_assert_eq(run(db, "INSERT INTO dg VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)"),
                     GQP_DONE, "%s", gqp_errmsg(db));
        for (size_t t = 0; t < 4; t++) {
            char sql[400];
            snprintf(sql, sizeof sql, "CREATE TABLE %s(k INTEGER, v INTEGER)", ts[t].name);
            cr_assert_eq(run(db, sql), GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
            snprintf(sql, sizeof sql,
                     "INSERT INTO %s SELECT ((a.x*1000+b.x*100+c.x*10+e.x) * 7919) %% %d, "
                     "a.x*1000+b.x*100+c.x*10+e.x FROM dg a, dg b, dg c, dg e "
                     "WHERE a.x*1000+b.x*100+c.x*10+e.x < %d",
                     ts[t].name, ts[t].mod, ts[t].n);
            cr_assert_eq(run(db, sql), GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
        }
        cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
        const char *qs[] = {"SELECT COUNT(*), SUM(d.v), SUM(e.v) FROM d, e WHERE d.k = e.k",
                            "SELECT COUNT(*), SUM(f.v), SUM(g.v) FROM f, g WHERE f.k = g.k"};
        for (int r = 0; r < 2; r++)
            for (size_t q = 0; q < 2; q++) {
                int rc;
                cr_assert_eq(run(db, "SET chunk_rows = 0"), GQP_DONE, "%s", gqp_errmsg(db));
                char *want = rows_of(db, qs[q], &rc);
                cr_assert_not_null(want, "%s: %s", qs[q], gqp_errmsg(db));
                cr_assert_eq(run(db, "SET chunk_rows = 500"), GQP_DONE, "%s", gqp_errmsg(db));
                cr_assert_eq(run(db, "SET chunk_cluster = 'on'"), GQP_DONE, "%s", gqp_errmsg(db));
                expect_rows(db, qs[q], want, caps[c]);
                free(want);
            }
        gqp_close(db);
    }
    unsetenv("GQP_CLUSTER_BYTES");
}

/* --device auto spreads a key-ordered copy's build over the chunked
 * plans that ask for it (gqp_cluster_wanted), made or not: the asks for
 * a copy never made count up (a query run again and again ends up making
 * it, as a column read again and again ends up copied), carry over into
 * the copy once a run makes it, and start again when the table changes. */
Test(chunk_budget, asks_for_a_copy_count_before_it_is_made) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(run(db, "CREATE TABLE f(k INTEGER, v INTEGER)"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "INSERT INTO f VALUES (3,1),(1,2),(2,3),(3,4),(0,5),(1,6),(2,7),(5,8)"),
                 GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "CREATE TABLE g(k INTEGER, x INTEGER)"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "INSERT INTO g VALUES (2,10),(0,20),(3,30),(1,40),(5,50)"), GQP_DONE, "%s",
                 gqp_errmsg(db));
    const CatTable *f = cat_find_table(db->cat, "f");
    cr_assert_not_null(f);
    int made = -1;
    for (int64_t i = 1; i <= 3; i++) {
        cr_expect_eq(gqp_cluster_wanted(db, f, 0, &made), i);
        cr_expect_eq(made, 0);
    }
    cr_expect_eq(gqp_cluster_wanted(db, f, 1, &made), 1, "another key: its own count");
    /* a chunked run through copies makes f's copy in k's order */
    const char *q = "SELECT f.v, g.x FROM f, g WHERE f.k = g.k ORDER BY 1";
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    int rc;
    char *want = rows_of(db, q, &rc);
    cr_assert_not_null(want, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "SET chunk_rows = 3"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(run(db, "SET chunk_cluster = 'on'"), GQP_DONE, "%s", gqp_errmsg(db));
    expect_rows(db, q, want, "chunked through copies");
    free(want);
    int n = 0;
    gqp_cluster_bytes(db, &n);
    cr_assert(n >= 1, "no copy made");
    int64_t w = gqp_cluster_wanted(db, f, 0, &made);
    cr_expect(made == 1 && w >= 4, "made %d, asked %lld times", made, (long long)w);
    /* the table changes: copies and asks start again */
    cr_assert_eq(run(db, "INSERT INTO f VALUES (4,9)"), GQP_DONE, "%s", gqp_errmsg(db));
    f = cat_find_table(db->cat, "f");
    cr_expect_eq(gqp_cluster_wanted(db, f, 0, &made), 1);
    cr_expect_eq(made, 0);
    gqp_close(db);
}

/* A LIKE over a dictionary computed at run time (DN_DICTLIKE: forced for
 * every dictionary by GQP_DICTLIKE_MIN=1) in a chunked run: every chunk
 * after the first takes the run's table (ExecLikeMemo) instead of
 * computing it again. Two patterns, each also negated, in one query and
 * across runs: counts as the C loop below counts them. */
Test(chunk_budget, like_tables_kept_for_the_chunks_of_a_run) {
    setenv("GQP_DICTLIKE_MIN", "1", 1);
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(run(db, "CREATE TABLE t(k INTEGER, s VARCHAR)"), GQP_DONE, "%s", gqp_errmsg(db));
    const char *words[] = {"ab", "ba", "cab", "xyz", "bbb", "a", "zzz", "cba", "ac", "q"};
    int64_t want[4] = {0}; /* LIKE '%a%', NOT LIKE '%a%', LIKE 'b%', NOT LIKE 'b%' */
    char sql[160];
    for (int i = 0; i < 200; i++) {
        char w[32];
        snprintf(w, sizeof w, "%s%d", words[(i * 7) % 10], i % 13);
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%d, '%s')", i, w);
        cr_assert_eq(run(db, sql), GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
        int a = strchr(w, 'a') != NULL, b = w[0] == 'b';
        want[0] += a, want[1] += !a, want[2] += b, want[3] += !b;
    }
    char expect[160];
    snprintf(expect, sizeof expect, "%lld|%lld|%lld|%lld\n", (long long)want[0], (long long)want[1],
             (long long)want[2], (long long)want[3]);
    const char *q = "SELECT SUM(CASE WHEN s LIKE '%a%' THEN 1 ELSE 0 END), "
                    "SUM(CASE WHEN s NOT LIKE '%a%' THEN 1 ELSE 0 END), "
                    "SUM(CASE WHEN s LIKE 'b%' THEN 1 ELSE 0 END), "
                    "SUM(CASE WHEN s NOT LIKE 'b%' THEN 1 ELSE 0 END) FROM t";
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    expect_rows(db, q, expect, "whole");
    cr_assert_eq(run(db, "SET chunk_rows = 16"), GQP_DONE, "%s", gqp_errmsg(db));
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "like-dictionary") && strstr(plan, "chunk"), "%s", plan);
    gqp_free(plan);
    for (int r = 0; r < 2; r++)
        expect_rows(db, q, expect, "in chunks of 16 rows");
    gqp_close(db);
    unsetenv("GQP_DICTLIKE_MIN");
}

/* A GPU LIKE over a dictionary larger than half the memory_limit
 * (10000 strings, about 480 KB with their offsets, under 600 KB) reads
 * the strings in pieces, and a chunked run's later chunks take the
 * table the first one made; the counts are those of the numbers 0..9999
 * with a 7 in them (10000 - 9^4) and without. */
Test(memory_gpu, like_dictionary_in_pieces) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    setenv("GQP_DICTLIKE_MIN", "1", 1);
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(run(db, "CREATE TABLE w(s VARCHAR)"), GQP_DONE, "%s", gqp_errmsg(db));
    char *sql = malloc(500 * 48 + 64);
    cr_assert_not_null(sql);
    for (int i = 0; i < 10000; i += 500) {
        size_t len = (size_t)sprintf(sql, "INSERT INTO w VALUES ");
        for (int j = i; j < i + 500; j++)
            len += (size_t)sprintf(sql + len, "%s('row-%d-padding-text-to-make-it-longer')",
                                   j > i ? "," : "", j);
        cr_assert_eq(run(db, sql), GQP_DONE, "%s", gqp_errmsg(db));
    }
    free(sql);
    const char *q = "SELECT SUM(CASE WHEN s LIKE '%7%-pad%' THEN 1 ELSE 0 END), "
                    "SUM(CASE WHEN s NOT LIKE '%7%-pad%' THEN 1 ELSE 0 END) FROM w";
    const char *want = "3439|6561\n";
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK);
    expect_rows(db, q, want, "unlimited");
    cr_assert_eq(run(db, "SET memory_limit = '600KB'"), GQP_DONE, "%s", gqp_errmsg(db));
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "like-dictionary") && strstr(plan, "pieces under the device budget") &&
                  !strstr(plan, "out-of-memory"),
              "%s", plan);
    gqp_free(plan);
    expect_rows(db, q, want, "in pieces under 600KB");
    cr_assert_eq(run(db, "SET chunk_rows = 2000"), GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_explain(db, q, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(plan, "chunked execution") && strstr(plan, "kept from an earlier chunk"), "%s",
              plan);
    gqp_free(plan);
    expect_rows(db, q, want, "in pieces, in chunks of 2000 rows");
    gqp_close(db);
    unsetenv("GQP_DICTLIKE_MIN");
}

/* The bytes a plan's values hold at once (gqp_plan_peak_bytes, the
 * GQP_BUDGET_PEAK budget): at least its largest value, at most the sum of
 * every node's output, and below it when values die as the plan runs
 * (the filter's flags before the sums); none on the device for a CPU
 * plan. */
Test(chunk_budget, peak_bytes_of_a_plan) {
    gqp *db;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    make_tables(db);
    gqp_stmt *st = NULL;
    cr_assert_eq(
        gqp_prepare(db, "SELECT SUM(k), SUM(v), COUNT(*) FROM t WHERE k % 3 = 1", -1, &st, NULL),
        GQP_OK, "%s", gqp_errmsg(db));
    const Dag *dag = st->dag;
    cr_assert_not_null(dag);
    double sum = 0, most = 0;
    for (int i = 0; i < dag->nnodes; i++)
        sum += (double)plan_node_est_bytes(dag, &dag->nodes[i]);
    for (int v = 0; v < dag->nvalues; v++)
        if (cost_value_bytes(dag, v) > most) most = cost_value_bytes(dag, v);
    double peak = gqp_plan_peak_bytes(dag, 0);
    cr_expect(peak >= most && peak < sum, "peak %.0f, largest value %.0f, sum %.0f", peak, most,
              sum);
    cr_expect_eq(gqp_plan_peak_bytes(dag, 1), 0, "a CPU plan holds nothing on the device");
    gqp_finalize(st);
    gqp_close(db);
}

/* The chunk size chosen from the device budget (libgqp/chunk.c): none
 * while the GPU nodes' estimated outputs fit the budget; else rows sized
 * for half the budget, at least the floor given (65,536 rows of the
 * largest table cut), and none when that is the whole table. */
Test(chunk_budget, rows_from_need_and_budget) {
    cr_expect_eq(gqp_chunk_rows_for_budget(1e9, 2e9, 100000000, 65536), 0);
    cr_expect_eq(gqp_chunk_rows_for_budget(1e9, 0, 100000000, 65536), 0); /* no budget known */
    cr_expect_eq(gqp_chunk_rows_for_budget(8e9, 2e9, 100000000, 65536), 12500000);
    cr_expect_eq(gqp_chunk_rows_for_budget(1e15, 1e6, 100000000, 65536), 65536);
    cr_expect_eq(gqp_chunk_rows_for_budget(3e9, 2e9, 50000, 65536), 0); /* a chunk is the table */
    cr_expect_eq(gqp_chunk_rows_for_budget(3e9, 2e9, 100000, 65536), 65536);
    /* a small F whose chunks carry a large co-sliced table's rows: its own
     * floor (TPC-H Q15's 100000 suppliers over 60M lineitem rows) */
    cr_expect_eq(gqp_chunk_rows_for_budget(2.2e9, 3.6e8, 100000, 109), 8181);
    cr_expect_eq(gqp_chunk_rows_for_budget(1e15, 1e6, 100000, 109), 109);
    cr_expect_eq(gqp_chunk_rows_for_budget(1e15, 1e6, 100000, 0), 1);
}
