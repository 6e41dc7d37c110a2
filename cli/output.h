/*
 * output.h -- how the `gqp` command prints results: the output modes of
 * `gqp run --mode` and the shell's `.mode`, the statement loop both use, and
 * error printing. Uses only the public API in include/gqp.h.
 */
#ifndef GQP_CLI_OUTPUT_H
#define GQP_CLI_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "gqp.h"

/* The output modes (names as --mode and .mode spell them: out_mode_name). */
typedef enum OutMode { MODE_TABLE, MODE_CSV, MODE_JSON, MODE_MARKDOWN, MODE_LINE } OutMode;

/* How out_exec runs and prints statements. */
typedef struct OutOpts {
    OutMode mode; /* result format */
    int timer;    /* print "Run Time: X ms" on stderr after each statement */
    int explain;  /* (unused yet) */
    int bail;     /* (always 1 yet) stop at the first failing statement */
} OutOpts;

/* Parse a mode name ("table", "csv", "json", "markdown", "line") into *m.
 * Returns 0, or -1 (and *m unchanged) for any other name. */
int out_parse_mode(const char *name, OutMode *m);

/* The name of mode m, as out_parse_mode accepts it. */
const char *out_mode_name(OutMode m);

/* Print msg to stderr, adding a newline if it lacks one. */
void out_error(const char *msg);

/* Step st to its end, printing its rows (st has ncols > 0 columns) to
 * stdout in mode. Returns the gqp_step code that ended the loop: GQP_DONE
 * on success, GQP_NOMEM when the printer ran out of memory, else the error
 * code (message in gqp_errmsg). */
int out_print_result(gqp_stmt *st, int ncols, OutMode mode);

/* Run every statement of sql[0..len) on db in turn, printing each query's
 * result as soon as it has run (stdout is flushed after each statement) and
 * each error on stderr. The first error ends the run.
 * Returns 0 when every statement succeeded, else 1. */
int out_exec(gqp *db, const char *sql, int64_t len, const OutOpts *o);

#endif
