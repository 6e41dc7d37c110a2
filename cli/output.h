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
    int explain;  /* print each query's plan (gqp_explain, text) before its result */
} OutOpts;

/* Parse a mode name ("table", "csv", "json", "markdown", "line") into *m.
 * Returns 0, or -1 (and *m unchanged) for any other name. */
int out_parse_mode(const char *name, OutMode *m);

/* The name of mode m, as out_parse_mode accepts it. */
const char *out_mode_name(OutMode m);

/* Print msg to stderr, adding a newline if it lacks one. */
void out_error(const char *msg);

/* Step st to its end, printing its rows (st has ncols > 0 columns) to
 * stdout in mode:
 *   table     a box with names and types; numbers right-aligned; at most 40
 *             rows (the first and last 20, a row of dots and a count line
 *             between); widths measured in terminal columns
 *             (out_display_width); control characters in a value escaped
 *             ("\n", "\t", "\x01") so a value never breaks the box
 *   csv       RFC 4180: a header line, NULL as an empty field
 *   json      one array of objects per statement, on one line, so several
 *             statements give newline-delimited JSON; NULL, NaN and
 *             infinities as null
 *   markdown  a pipe table, '|' as "\|", control characters escaped
 *   line      "name = value" per column, rows separated by a blank line
 * csv and json print FLOAT64 with round-trip precision
 * (out_format_double); table, markdown and line print gqp_column_text. Returns the gqp_step code
 * that ended the loop: GQP_DONE on success, GQP_NOMEM when the printer ran out of memory, else the
 * error code (message in gqp_errmsg). */
int out_print_result(gqp_stmt *st, int ncols, OutMode mode);

/* Run every statement of sql[0..len) on db in turn, printing each query's
 * result as soon as it has run (stdout is flushed after each statement) and
 * each error on stderr. The first error ends the run.
 * Returns 0 when every statement succeeded, else 1. */
int out_exec(gqp *db, const char *sql, int64_t len, const OutOpts *o);

/* Display width in terminal columns of UTF-8 text s[0..n) as the table
 * printer shows it: East Asian wide and fullwidth characters count 2,
 * combining marks and zero-width characters 0, other characters 1 (an
 * invalid byte counts 1). Control characters are not expected (the table
 * printer escapes them first). */
size_t out_display_width(const char *s, size_t n);

/* Format the double d into buf (cap >= 32) with the fewest of 15, 16 or 17
 * significant digits that strtod reads back as exactly d, in the engine's
 * style ("2.0", "0.1", "1.0e+20", "NaN", "Inf", "-Inf"; -0.0 prints as
 * "0.0", as SQLite prints it). */
void out_format_double(double d, char *buf, size_t cap);

#endif
