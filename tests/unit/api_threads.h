/*
 * api_threads.h -- the multi-threaded workload of the API tests, shared by
 * the Criterion tests (test_api.c) and the ThreadSanitizer driver
 * (tests/tsan/thread_stress.c, run by tests/tsan.sh; Criterion itself
 * cannot run under TSan).
 */
#ifndef GQP_TESTS_API_THREADS_H
#define GQP_TESTS_API_THREADS_H

#include <stddef.h>

#include "gqp.h"

/* Runs every statement of sql to completion; GQP_OK or the first error. */
int api_run_sql(gqp *db, const char *sql);

/* Creates t(a INTEGER, b INTEGER, s TEXT) with rows i = 0..999: a = i % 10,
 * b = i, s = 's' || (i % 7), and an empty u(x INTEGER). GQP_OK or an error. */
int api_make_tables(gqp *db);

/* nthreads threads each run rounds of checked queries (a parameterized
 * aggregate, a statement stepped row by row, an error read under
 * gqp_lock, and from thread 0 INSERTs that make every plan stale): on
 * shared (made by api_make_tables) when it is not NULL, else each on a
 * handle of its own. Each thread runs `iters` rounds, or with seconds > 0
 * rounds until that many seconds have passed. Returns the number of failed
 * checks (the last one described in msg) and the rounds run in *rounds. */
int api_thread_stress(gqp *shared, int nthreads, int iters, double seconds, int *rounds, char *msg,
                      size_t cap);

/* A 2000 x 2000 cross join stepped on db while another thread calls
 * gqp_interrupt(db) every 200 us until the step returns; then an interrupt
 * while nothing runs, and a small query that must succeed. Returns 0 when
 * the step returned GQP_INTERRUPT with "Interrupted" and the query after it
 * ran, else -1 with msg. */
int api_interrupt_check(gqp *db, char *msg, size_t cap);

#endif
