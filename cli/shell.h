/*
 * shell.h -- the interactive shell of the `gqp` command (`gqp`, `gqp DB`,
 * `gqp shell`) and the statement-by-statement reader that `gqp run -` and a
 * non-terminal standard input share. See docs/shell.md.
 */
#ifndef GQP_CLI_SHELL_H
#define GQP_CLI_SHELL_H

#include <stddef.h>
#include <stdio.h>

#include "gqp.h"
#include "output.h"

/* What the shell starts with. */
typedef struct ShellOpts {
    OutOpts out;         /* mode, timer, explain */
    const char *device;  /* the --device given ("auto", "cpu", "gpu"), NULL: auto */
    const char *banner;  /* first line printed by an interactive shell, or NULL */
    const char *db_name; /* the database (config) opened, NULL for none: for the banner */
} ShellOpts;

/* Run the shell on the open database db until .quit or the end of
 * standard input: interactively (prompts, line editing and history in
 * ~/.gqp_history where built with readline) when standard input is a
 * terminal, else statement by statement as the input arrives, without
 * prompts. Dot commands work in both; an error is printed and the shell
 * goes on. Returns the exit status: 0, or 1 when the input was not a
 * terminal and any statement or dot command failed. db stays open. */
int shell_main(gqp *db, const ShellOpts *o);

/* Run the SQL read from in on db statement by statement: a statement runs
 * and its result is printed as soon as the line holding its ';' has been
 * read (a last statement without ';' runs at the end of the input). No dot
 * commands, no prompts; the first error ends the run (`gqp run -`).
 * Returns 0, or 1 after an error. */
int shell_run_stream(gqp *db, FILE *in, const OutOpts *o);

/* 1 when sql[0..n) ends with a complete statement: its last token,
 * outside quotes ('', "", ``) and comments (--, / * * /), is ';' followed
 * by nothing but white space and comments; else 0 (sqlite3_complete's
 * rule for gqp's tokens). */
int shell_sql_complete(const char *sql, size_t n);

#endif
